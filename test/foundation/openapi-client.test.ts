import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { makeTestApp } from '../support/app'

const root = resolve(import.meta.dir, '../..')
const dir = mkdtempSync(join(tmpdir(), 'openapi-client-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A script's use of the generated types: right calls compile, a wrong body does not. */
const CLIENT = `import createClient from 'openapi-fetch'
import type { components, paths } from './api'

export function platform(baseUrl: string, token: string) {
  return createClient<paths>({ baseUrl, headers: { authorization: \`token \${token}\` } })
}

export async function whoAmI(baseUrl: string, token: string): Promise<string | undefined> {
  const { data } = await platform(baseUrl, token).GET('/api/v1/user')
  return data?.login
}

export async function addEmail(baseUrl: string, token: string, email: string): Promise<components['schemas']['Email'][] | undefined> {
  const { data } = await platform(baseUrl, token).POST('/api/v1/user/emails', { body: { emails: [email] } })
  return data
}

export async function wrongBody(baseUrl: string, token: string) {
  // @ts-expect-error emails is a list of strings, not a number
  await platform(baseUrl, token).POST('/api/v1/user/emails', { body: { emails: 42 } })
  // @ts-expect-error sign-in needs a password
  await platform(baseUrl, token).POST('/api/v1/user/signin', { body: { username: 'alice' } })
}
`

const run = async (cmd: string[]) => {
  const proc = Bun.spawn(cmd, { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, output: out + err }
}

test('a client generated from /api/v1/swagger.json by openapi-typescript type-checks, refuses a wrong body, and talks to the server', async () => {
  const t = await makeTestApp()
  const [alice] = await t.users('alice')
  const base = await t.listen()
  writeFileSync(join(dir, 'api.json'), await (await fetch(`${base}/api/v1/swagger.json`)).text())
  const generated = await run([join(root, 'node_modules/.bin/openapi-typescript'), 'api.json', '-o', 'api.d.ts'])
  expect(generated.output).not.toContain('error')
  expect(generated.code).toBe(0)
  // A bodiless answer documented as content `{type: 'void'}` came out as a media type named `type`.
  expect(readFileSync(join(dir, 'api.d.ts'), 'utf8')).not.toMatch(/^\s+type: unknown;$/m)
  writeFileSync(join(dir, 'client.ts'), CLIENT)
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'bundler',
        skipLibCheck: false,
        types: [],
      },
      files: ['client.ts'],
    }),
  )
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  const checked = await run([join(root, 'node_modules/.bin/tsc'), '-p', 'tsconfig.json'])
  expect(checked.output).toBe('')
  expect(checked.code).toBe(0)
  const client = await import(join(dir, 'client.ts'))
  expect(await client.whoAmI(base, alice.token)).toBe('alice')
  expect((await client.addEmail(base, alice.token, 'alice.two@example.com')).map((e: { email: string }) => e.email)).toContain(
    'alice.two@example.com',
  )
}, 120_000)

test('every request body and every JSON response of the document is a named schema in components.schemas', async () => {
  const t = await makeTestApp()
  const doc = await (await t.request('GET', '/api/v1/swagger.json')).json()
  const unnamed: string[] = []
  const named = (schema: { $ref?: string; type?: string; items?: { $ref?: string } }) =>
    (schema.$ref ?? (schema.type === 'array' ? schema.items?.$ref : undefined))?.startsWith('#/components/schemas/') ||
    (schema.type !== 'object' && schema.type !== 'array')
  for (const [path, methods] of Object.entries<
    Record<
      string,
      {
        requestBody?: { content?: Record<string, { schema: never }> }
        responses?: Record<string, { content?: Record<string, { schema: never }> }>
      }
    >
  >(doc.paths))
    for (const [method, op] of Object.entries(methods)) {
      const bodies = Object.values(op.requestBody?.content ?? {})
      if (op.requestBody && bodies.length === 0) unnamed.push(`${method} ${path} body without content`)
      for (const { schema } of bodies) if (!named(schema)) unnamed.push(`${method} ${path} body`)
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const json = response.content?.['application/json']
        if (json && !named(json.schema)) unnamed.push(`${method} ${path} ${status}`)
      }
    }
  expect(unnamed).toEqual([])
  expect(doc.components.schemas.SignInParams.required).toEqual(['username', 'password'])
})
