import { describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { shellQuote } from '../../src/orders/render/scripts'
import { Messages } from '../../src/orders/values'
import { makeTestApp, type TestApp, type TestUser, tempDir } from '../support/app'
import { buildChart, buildRawChart, helm, serveHelmRepo } from '../support/charts'

/** The helm3 and yaml scripts parse (bash -n) and, run against stub helm/kubectl printing their arguments, pass every value literally. */

const ENV = { PLATFORM_ALLOW_PRIVATE_REGISTRIES: 'true', PLATFORM_PUBLIC_URL: 'https://platform.example' }
// `echo` prints the values Helm sees: the oracle for the script's value flags.
const echo = buildRawChart('echo', '0.1.0', {
  'values.yaml': 'replicaCount: 1\ngreeting: hello\nimage:\n  tag: v1\n  pullPolicy: Always\nports: [80, 443]\n',
  'templates/values.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: values\ndata:\n  json: {{ toJson .Values | quote }}\n',
})
const repo = serveHelmRepo([buildChart('demo', '0.2.0'), echo])

async function setup(): Promise<{ t: TestApp; alice: TestUser }> {
  const t = await makeTestApp(ENV)
  const admin = await t.admin()
  await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'local', url: repo.url })
  const [alice] = await t.users('alice')
  return { t, alice: alice! }
}

async function orderWith(t: TestApp, who: TestUser, chart: Record<string, unknown>): Promise<string> {
  const res = await t.as(who).send('POST', '/api/v1/user/deploy/orders', {
    spec: { packages: [{ chart: { name: 'demo', releaseName: 'demo', namespace: 'apps', sourceRef: { name: 'local' }, ...chart } }] },
  })
  expect(res.status).toBe(200)
  return (await res.json()).metadata.uid
}

/** Runs `script` with bash, `helm` and `kubectl` being stubs that record their arguments; answers each call's argument list. */
function runWithStubs(script: string): { calls: string[][]; dir: string } {
  const dir = tempDir('platform-script-')
  const record = join(dir, 'calls')
  for (const tool of ['helm', 'kubectl']) {
    const stub = join(dir, tool)
    writeFileSync(stub, `#!/bin/sh\nprintf '%s\\0' ${tool} "$@" >> '${record}'\nprintf '\\n' >> '${record}'\n`)
    chmodSync(stub, 0o755)
  }
  const file = join(dir, 'install.sh')
  writeFileSync(file, script)
  const run = Bun.spawnSync(['bash', file], { cwd: dir, env: { PATH: `${dir}:/usr/bin:/bin` } })
  expect(run.exitCode).toBe(0)
  const text = existsSync(record) ? readFileSync(record, 'utf8') : ''
  const calls = text
    .split('\0\n')
    .filter(Boolean)
    .map((line) => line.split('\0'))
  return { calls, dir }
}

const bashParses = (script: string) => {
  const dir = tempDir('platform-script-')
  writeFileSync(join(dir, 's.sh'), script)
  return Bun.spawnSync(['bash', '-n', join(dir, 's.sh')]).exitCode === 0
}

/** Orders the `echo` chart with `values`, runs its helm3 script against a stub helm and hands the value flags it passed to the real `helm template`: the values Helm sees. */
async function valuesHelmSees(t: TestApp, who: TestUser, values: Record<string, unknown>): Promise<unknown> {
  const uid = await orderWith(t, who, { name: 'echo', values })
  const res = await t.as(who).get(`/api/v1/user/deploy/orders/${uid}/helm3`)
  expect(res.status).toBe(200)
  const script = await res.text()
  expect(bashParses(script)).toBe(true)
  const args = runWithStubs(script).calls[0]!
  const flags = args.flatMap((arg, i) => (/^--set(-json|-string)?$/.test(arg) ? [arg, args[i + 1]!] : []))
  const output = helm(['template', 'r', echo.dir, ...flags])
  return JSON.parse((parseYaml(output) as { data: { json: string } }).data.json)
}

const HOSTILE = `it's "quoted" $(touch pwned) \`touch pwned2\` ; rm -rf / & x,y`

describe('GET /api/v1/user/deploy/orders/:id/helm3', () => {
  test('the script installs the pinned chart from the repository with --set for changed values, as text/x-shellscript', async () => {
    const { t, alice } = await setup()
    const uid = await orderWith(t, alice, { values: { replicaCount: 2, image: { tag: 'v2' } } })
    const res = await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/helm3`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('text/x-shellscript')
    const script = await res.text()
    expect(script).toBe(
      [
        '#!/usr/bin/env sh',
        '',
        'helm upgrade --install demo demo \\',
        `  --repo ${repo.url} --version 0.2.0 \\`,
        '  --namespace apps --create-namespace \\',
        '  --wait --debug --burst-limit=1000 \\',
        '  --set image.tag=v2 \\',
        '  --set replicaCount=2',
        '',
      ].join('\n'),
    )
    expect(bashParses(script)).toBe(true)
  })

  test('a hostile value (quotes, $(), backticks, ;, &, a comma) reaches helm literally, nothing runs', async () => {
    const { t, alice } = await setup()
    const uid = await orderWith(t, alice, { values: { greeting: HOSTILE } })
    const script = await (await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/helm3`)).text()
    expect(bashParses(script)).toBe(true)
    const { calls, dir } = runWithStubs(script)
    expect(calls).toHaveLength(1)
    const args = calls[0]!
    expect(args.slice(0, 4)).toEqual(['helm', 'upgrade', '--install', 'demo'])
    // The comma is escaped for helm's --set parser, everything else arrives as written.
    expect(args[args.indexOf('--set') + 1]).toBe(`greeting=${HOSTILE.replace(/,/g, '\\,')}`)
    expect(existsSync(join(dir, 'pwned'))).toBe(false)
    expect(existsSync(join(dir, 'pwned2'))).toBe(false)
  })

  test("a value and keys crafted to set another key (`x\\,replicaCount=98`, `replicaCount=97,other`, `replicaCount[0]`) → the real helm template run with the script's flags keeps replicaCount 1 and each under its own key", async () => {
    const { t, alice } = await setup()
    const values = { greeting: 'x\\,replicaCount=98', 'replicaCount=97,other': 'v', 'replicaCount[0]': 'w' }
    expect(await valuesHelmSees(t, alice, values)).toEqual({
      replicaCount: 1,
      greeting: 'x\\,replicaCount=98',
      'replicaCount=97,other': 'v',
      'replicaCount[0]': 'w',
      image: { tag: 'v1', pullPolicy: 'Always' },
      ports: [80, 443],
    })
  })

  test("keys and values that mean something to --set (commas, =, [i], dots, braces, backslashes, typed-looking strings, floats, lists, line breaks) → the real helm template run with the script's flags sees exactly the ordered values", async () => {
    const { t, alice } = await setup()
    const values = {
      greeting: 'x\\,replicaCount=98',
      'replicaCount=97,other': 'v',
      'replicaCount[0]': 'w',
      'a.b': 'dotted key',
      'back\\slash': 'ends with \\',
      braces: '{not, a, list}',
      flag: 'true',
      nothing: 'null',
      count: '0123',
      number: '42',
      ratio: 1.5,
      'x,y': 2.5,
      replicas: 3,
      enabled: false,
      multi: 'line one\nline two',
      controls: 'tab\there, nul\u0000 end',
      empty: '',
      ports: [8080, 'x,y', { name: 'z' }],
      nested: { 'k=v': { '{x}': '{braces}' } },
      image: { pullPolicy: null },
    }
    expect(await valuesHelmSees(t, alice, values)).toEqual({ replicaCount: 1, ...values, image: { tag: 'v1' } })
  })

  test('a changed value under an empty key → 422 naming where (no --set flag can name it)', async () => {
    const { t, alice } = await setup()
    const uid = await orderWith(t, alice, { name: 'echo', values: { image: { '': 'x' } } })
    const res = await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/helm3`)
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(Messages.unnamableKey('image'))
  })

  test("with Accept: application/json → the original's [{os, url, command, script}] for linux and darwin", async () => {
    const { t, alice } = await setup()
    const uid = await orderWith(t, alice, {})
    const res = await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/helm3`, { accept: 'application/json' })
    expect(res.status).toBe(200)
    const refs = await res.json()
    const url = `https://platform.example/api/v1/user/deploy/orders/${uid}/helm3`
    expect(refs.map((r: { os: string }) => r.os)).toEqual(['linux', 'darwin'])
    expect(refs[0]).toMatchObject({ url, command: `curl -fsSL ${url} | bash` })
    expect(refs[0].script).toStartWith('#!/usr/bin/env sh\n')
  })
})

describe('GET /api/v1/user/deploy/orders/:id/yaml', () => {
  test('the script applies the CRDs and the manifest file from this server; both files are served', async () => {
    const { t, alice } = await setup()
    const uid = await orderWith(t, alice, {
      waitFors: [
        {
          resource: { group: 'apps', resource: 'deployments' },
          labels: { matchLabels: { app: "x'y" } },
          for: 'condition=Available',
          timeout: '5m',
        },
      ],
    })
    const res = await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/yaml`)
    expect(res.status).toBe(200)
    const script = await res.text()
    const base = `https://platform.example/api/v1/user/deploy/orders/${uid}`
    expect(bashParses(script)).toBe(true)
    const { calls } = runWithStubs(script)
    expect(calls).toEqual([
      ['kubectl', 'apply', '-f', `${base}/crds/widgets.demo.example.com.yaml`],
      ['kubectl', 'apply', '-f', `${base}/manifests/demo.yaml`],
      ['kubectl', 'wait', 'apps/deployments', '-l', "app=x'y", '--for', 'condition=Available', '--timeout', '5m', '-n', 'apps'],
    ])
    const manifest = await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/manifests/demo.yaml`)
    expect(manifest.status).toBe(200)
    expect(await manifest.text()).toStartWith(
      '---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n---\n# Source: demo/templates/pre-install.yaml\n',
    )
    const crd = await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/crds/widgets.demo.example.com.yaml`)
    expect(crd.status).toBe(200)
    expect(await crd.text()).toContain('kind: CustomResourceDefinition')
    expect((await t.as(alice).get(`/api/v1/user/deploy/orders/${uid}/crds/other.yaml`)).status).toBe(404)
  })
})

describe('shellQuote', () => {
  test.each([
    ['plain-value_1.2/x:y@z%+=,', 'plain-value_1.2/x:y@z%+=,'],
    ['', "''"],
    ["it's", `'it'"'"'s'`],
    ['$(id)', "'$(id)'"],
    ['a\nb', "'a\nb'"],
  ])('%p → %p, which bash reads back as the same string', (value, quoted) => {
    expect(shellQuote(value)).toBe(quoted)
    const echoed = Bun.spawnSync(['bash', '-c', `printf '%s' ${shellQuote(value)}`]).stdout.toString()
    expect(echoed).toBe(value)
  })
})
