import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { makeTestApp, type TestApp } from '../support/app'

interface Response {
  description?: string
  content?: Record<string, unknown>
}
interface Operation {
  security?: Record<string, string[]>[]
  requestBody?: { content?: Record<string, unknown> }
  responses?: Record<string, Response>
  'x-permission'?: string
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, { title?: string }>; securitySchemes: Record<string, { name?: string }> }
  servers?: { url: string }[]
}

const root = resolve(import.meta.dir, '../..')
const dir = mkdtempSync(join(tmpdir(), 'openapi-document-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const documentOf = async (t: TestApp) => (await (await t.request('GET', '/api/v1/swagger.json')).json()) as OpenApiDocument
const operations = (doc: OpenApiDocument) =>
  Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })))

test('the document is the same before and after the server answers requests, and marks no schema closed', async () => {
  const before = await documentOf(await makeTestApp())
  const t = await makeTestApp()
  const [alice] = await t.users('alice')
  await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['alice.two@example.com'] })
  await t.as(alice).send('POST', '/api/v1/orgs', { username: 'acme' })
  await t.as(alice).get('/api/v1/user')
  await t.request('POST', '/api/v1/user/signin', { body: { username: 'alice', password: 'wrong' } })
  const after = await documentOf(t)
  expect(after).toEqual(before)
  expect(JSON.stringify(after)).not.toContain('"additionalProperties":false')
})

test('every response has a description, and content only as media types (a bodiless answer has none)', async () => {
  const doc = await documentOf(await makeTestApp())
  const wrong = operations(doc).flatMap(({ path, method, op }) =>
    Object.entries(op.responses ?? {})
      .filter(([, r]) => !r.description || (r.content !== undefined && Object.keys(r.content).some((type) => !type.includes('/'))))
      .map(([status]) => `${method} ${path} ${status}`),
  )
  expect(wrong).toEqual([])
  expect(doc.paths['/api/v1/user/emails'].delete.responses?.['204']).toEqual({ description: 'No Content' })
})

test('public routes need no credential, Basic-only routes say so, and the query token has both its names', async () => {
  const doc = await documentOf(await makeTestApp())
  const optional = (op: Operation | undefined) => op?.security?.some((requirement) => Object.keys(requirement).length === 0)
  for (const [path, method] of [
    ['/healthz', 'get'],
    ['/readyz', 'get'],
    ['/api/v1/user/signin', 'post'],
    ['/api/v1/user/login-method', 'get'],
    ['/api/v1/users/search', 'get'],
    ['/api/v1/users/{username}', 'get'],
    ['/api/v1/orgs/{org}', 'get'],
    ['/api/v1/orgs/{org}/public_members', 'get'],
    ['/login/oauth/access_token', 'post'],
  ])
    expect({ path, optional: optional(doc.paths[path]?.[method]) }).toEqual({ path, optional: true })
  for (const [path, method] of [
    ['/api/v1/user', 'get'],
    ['/api/v1/version', 'get'],
    ['/api/v1/orgs', 'post'],
  ])
    expect({ path, optional: optional(doc.paths[path]?.[method]) }).toEqual({ path, optional: false })
  expect(doc.paths['/api/v1/users/{username}/tokens'].post.security).toEqual([{ BasicAuth: [] }])
  const queryNames = Object.values(doc.components.securitySchemes).map((scheme) => scheme.name)
  expect(queryNames).toContain('token')
  expect(queryNames).toContain('access_token')
  expect(doc.servers?.length).toBeGreaterThan(0)
})

/** The contract's proxy rows (docs/api/proxy.md), under /api/v1/clusters/{owner}/{cluster}/proxy. */
function contractProxyRows(): string[] {
  const rows: string[] = []
  for (const base of ['/{group}/{version}', '/{group}/{version}/namespaces/{namespace}'])
    rows.push(
      `post ${base}/{resource}/`,
      `get ${base}/{resource}/`,
      `delete ${base}/{resource}/`,
      `get ${base}/{resource}/{name}`,
      `put ${base}/{resource}/{name}`,
      `patch ${base}/{resource}/{name}`,
      `delete ${base}/{resource}/{name}`,
      `put ${base}/{resource}/{name}/status`,
      `patch ${base}/{resource}/{name}/status`,
      `get ${base}/{resource}/{name}/events`,
      `get ${base}/{resource}/{name}/controller`,
    )
  const namespaced = '/{group}/{version}/namespaces/{namespace}/{resource}/{name}'
  rows.push(`get ${namespaced}/scale`, `put ${namespaced}/scale`, `get ${namespaced}/horizontalpodautoscalers`)
  rows.push(
    'get /core/v1/namespaces/{namespace}/pods/{name}/log',
    'get /core/v1/namespaces/{namespace}/pods/{name}/exec',
    'get /core/v1/nodes/{name}/metrics',
    'get /core/v1/namespaces/{namespace}/pods/{name}/metrics',
    'post /authorization.k8s.io/v1/selfsubjectaccessreviews',
    'get /{group}/{version}/all-available',
    'get /meta.k8s.appscode.com/v1alpha1/renders',
    'get /meta.k8s.appscode.com/v1alpha1/renderdashboards',
    'get /meta.k8s.appscode.com/v1alpha1/rendermenus',
    'get /meta.k8s.appscode.com/v1alpha1/resourcegraphs',
    'get /meta.k8s.appscode.com/v1alpha1/{resource}/{menu}/available',
    'get /reports.scanner.appscode.com/v1alpha1/images',
    'get /reports.scanner.appscode.com/v1alpha1/cvereports',
    'get /policy.k8s.appscode.com/v1alpha1/policyreports',
    'get /ui.kubedb.com/v1alpha1/namespaces/{namespace}/databaseconfigurations/{name}',
    'post /batch-delete',
  )
  return rows
}

test('every proxy row of the contract is an operation with its path parameters; the wildcard itself is not', async () => {
  const doc = await documentOf(await makeTestApp())
  const prefix = '/api/v1/clusters/{owner}/{cluster}/proxy'
  const documented = operations(doc)
    .filter(({ path }) => path.startsWith(`${prefix}/`))
    .map(({ path, method }) => `${method} ${path.slice(prefix.length)}`)
  expect(documented.sort()).toEqual(contractProxyRows().sort())
  expect(Object.keys(doc.paths).filter((path) => path.includes('*'))).toEqual([])
  const scale = doc.paths[`${prefix}/{group}/{version}/namespaces/{namespace}/{resource}/{name}/scale`].put as Operation & {
    parameters: { name: string; in: string }[]
  }
  expect(scale.parameters.filter((p) => p.in === 'path').map((p) => p.name)).toEqual([
    'owner',
    'cluster',
    'group',
    'version',
    'namespace',
    'resource',
    'name',
  ])
  expect(Object.keys(doc.paths[`${prefix}/{group}/{version}/{resource}/{name}`].patch.requestBody?.content ?? {})).toContain(
    'application/json-patch+json',
  )
})

test("the contract's type names are components, each once under its own name", async () => {
  const doc = await documentOf(await makeTestApp({ PLATFORM_MODES: 'hosted,marketplace,billing' }))
  const names = Object.keys(doc.components.schemas)
  for (const name of [
    'AccessTokenInfo',
    'ApiResponseMessage',
    'BatchDeleteRequest',
    'BatchDeleteResponse',
    'CloudCredentialApiForm',
    'CreateEmailOption',
    'DeleteEmailOption',
    'CreateOrgParams',
    'EditOrgOption',
    'MsgbusAccount',
    'Order',
    'OrgAuthSourceResponse',
    'UsageView',
    'K8sObject',
    'Profile',
  ])
    expect({ name, present: names.includes(name) }).toEqual({ name, present: true })
  const renamed = Object.entries(doc.components.schemas)
    .filter(([name, schema]) => schema.title !== undefined && schema.title !== name)
    .map(([name, schema]) => `${schema.title} as ${name}`)
  expect(renamed).toEqual([])
  expect(doc.paths['/api/v1/user/emails'].post.requestBody?.content).toEqual({
    'application/json': { schema: { $ref: '#/components/schemas/CreateEmailOption' } },
  })
  expect(Object.keys(doc.paths['/api/v1/user/settings/applications/oauth2/{id}'].put.requestBody?.content ?? {})).toEqual([
    'multipart/form-data',
  ])
})

test('Redocly CLI lints the document clean (recommended rules, the exceptions in redocly.yaml)', async () => {
  const doc = await documentOf(await makeTestApp({ PLATFORM_MODES: 'hosted,marketplace,billing' }))
  const file = join(dir, 'openapi.json')
  writeFileSync(file, JSON.stringify(doc))
  const lint = Bun.spawn(
    [join(root, 'node_modules/.bin/redocly'), 'lint', file, '--config', join(import.meta.dir, 'redocly.yaml'), '--format', 'json'],
    { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
  )
  const [out, code] = await Promise.all([new Response(lint.stdout).text(), lint.exited])
  const problems = (JSON.parse(out) as { problems: { ruleId: string; message: string; location: { pointer: string }[] }[] }).problems.map(
    (p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`,
  )
  expect(problems).toEqual([])
  expect(code).toBe(0)
}, 60_000)
