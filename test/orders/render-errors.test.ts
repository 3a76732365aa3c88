import { describe, expect, test } from 'bun:test'
import { makeTestApp } from '../support/app'
import { buildRawChart, serveHelmRepo } from '../support/charts'

/** Charts that do not render answer 422 with Helm's reason, and Helm's limits hold: never a 500. */

const ENV = { PLATFORM_ALLOW_PRIVATE_REGISTRIES: 'true' }
const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n'
/** A small "billion laughs": four levels of ten aliases each, which Helm still prints and our reader refuses to expand. */
function laughs(): string {
  const lines = ['  l0: &l0 "lol"']
  for (let i = 1; i < 4; i++) lines.push(`  l${i}: &l${i} [${Array.from({ length: 10 }, () => `*l${i - 1}`).join(', ')}]`)
  return `${lines.join('\n')}\n`
}

const repo = serveHelmRepo([
  buildRawChart('needs', '1.0.0', {
    'templates/cm.yaml': `${CM}data:\n  v: {{ required "set .Values.mustSet" .Values.mustSet | quote }}\n`,
  }),
  buildRawChart('newkube', '1.0.0', {
    'Chart.yaml': 'apiVersion: v2\nname: newkube\nversion: 1.0.0\nkubeVersion: ">=1.30.0-0"\n',
    'templates/cm.yaml': CM,
  }),
  buildRawChart('library', '1.0.0', {
    'Chart.yaml': 'apiVersion: v2\nname: library\nversion: 1.0.0\ntype: library\n',
    'templates/_x.tpl': '{{- define "x" }}x{{ end }}\n',
  }),
  buildRawChart('spin', '1.0.0', { 'templates/cm.yaml': '{{- range until 6000 }}{{- range until 6000 }}{{- end }}{{- end }}\n' }),
  buildRawChart('laughs', '1.0.0', { 'templates/cm.yaml': `${CM}  annotations:\n    helm.sh/hook: post-install\ndata:\n${laughs()}` }),
  buildRawChart('hog', '1.0.0', { 'templates/cm.yaml': '{{- $x := until 30000000 }}a: {{ len $x }}\n' }),
])

async function render(chart: string, env: Record<string, string> = {}, values?: Record<string, unknown>) {
  const t = await makeTestApp({ ...ENV, ...env })
  const admin = await t.admin()
  await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'local', url: repo.url })
  const [alice] = await t.users('alice')
  const created = await t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
    spec: { packages: [{ chart: { name: chart, releaseName: 'r', namespace: 'default', sourceRef: { name: 'local' }, values } }] },
  })
  expect(created.status).toBe(200)
  return t.as(alice!).get(`/api/v1/user/deploy/orders/${(await created.json()).metadata.uid}/render/manifest`)
}

describe('charts that do not render', () => {
  test('HELM_PATH naming no file → 503 saying how to install Helm, no 500', async () => {
    const res = await render('needs', { HELM_PATH: '/nonexistent/helm' }, { mustSet: 'x' })
    expect(res.status).toBe(503)
    expect((await res.json()).message).toBe('Helm is not installed on this server (run npm install, or set HELM_PATH)')
  })

  test("a template with `required` and the value missing → 422 with Helm's message; with the value → 200", async () => {
    const res = await render('needs')
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(
      'the chart does not render: execution error at (needs/templates/cm.yaml:6:8): set .Values.mustSet',
    )
    const ok = await render('needs', {}, { mustSet: 'yes' })
    expect(ok.status).toBe(200)
    expect(await ok.text()).toContain('v: "yes"')
  })

  test('a chart whose kubeVersion excludes the configured one (1.22.0) → 422; with PLATFORM_KUBE_VERSION=1.31.0 → 200', async () => {
    const res = await render('newkube')
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('kubeVersion')
    expect((await render('newkube', { PLATFORM_KUBE_VERSION: '1.31.0' })).status).toBe(200)
  })

  test('a hook whose YAML is an alias bomb → 422 naming the template, not expanded', async () => {
    const res = await render('laughs')
    expect(res.status).toBe(422)
    expect((await res.json()).message).toStartWith("the chart's output laughs/templates/cm.yaml cannot be read")
  })

  test('a library chart → 422', async () => {
    const res = await render('library')
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('library charts are not installable')
  })

  test('a template that spins past PLATFORM_HELM_TIMEOUT_SECONDS → 422 naming the timeout, answered soon after it', async () => {
    const started = performance.now()
    const res = await render('spin', { PLATFORM_HELM_TIMEOUT_SECONDS: '1' })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe('helm template did not finish within 1000 ms')
    expect(performance.now() - started).toBeLessThan(4000)
  })

  test('a template allocating past PLATFORM_HELM_MEMORY_MB → 422 about the memory cap', async () => {
    const res = await render('hog', { PLATFORM_HELM_MEMORY_MB: '64' })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe('the chart does not render: helm ran out of its memory cap')
  })
})
