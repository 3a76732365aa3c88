import { describe, expect, test } from 'bun:test'
import { startSandbox } from '../../src/clusters/sandbox'
import { AppError } from '../../src/errors'
import { metricsOf } from '../../src/http/metrics'
import { pdfPrinter } from '../../src/usage/pdf/printer'
import { credentialsOf, lab } from '../msgbus/support'
import { makeTestApp } from '../support/app'
import { startPrometheus } from '../support/prometheus'
import { eventually } from '../support/wait'
import { event, HOUR, requests } from '../usage/support'

const TOKEN = 'metrics-reader-token-0123456789'
const scrape = (base: string, token = TOKEN) => fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })

/** The sample lines of one family, label sets as written. */
const samples = (text: string, family: string) =>
  text.split('\n').filter((line) => line.startsWith(`${family}{`) || line.startsWith(`${family} `))

describe('GET /metrics', () => {
  test('without PLATFORM_METRICS_TOKEN → 404, and nothing is counted', async () => {
    const t = await makeTestApp()
    const res = await t.request('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })
    expect(res.status).toBe(404)
    expect(metricsOf(t.deps)).toBeUndefined()
  })

  test('no token or a wrong one → 401 (also a valid access token); the right Bearer token → the text format', async () => {
    const t = await makeTestApp({ PLATFORM_METRICS_TOKEN: TOKEN })
    const [alice] = await t.users('alice')
    const base = await t.listen()
    expect((await fetch(`${base}/metrics`)).status).toBe(401)
    expect((await scrape(base, 'wrong')).status).toBe(401)
    expect((await fetch(`${base}/metrics`, { headers: { authorization: `token ${alice!.token}` } })).status).toBe(401)
    const res = await scrape(base)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4')
    const text = await res.text()
    expect(text).toContain('# TYPE platform_http_request_duration_seconds histogram')
    expect(text).toContain('# TYPE process_resident_memory_bytes gauge')
    expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge')
    // Families that on Bun are zeros or name Node's version are left out.
    for (const dropped of ['nodejs_heap_space_', 'nodejs_version_info', 'nodejs_active_handles']) expect(text).not.toContain(dropped)
    expect(text).toContain('platform_db_up 1')
    expect(Number(/^platform_db_size_bytes (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(0)
  })

  test('requests are counted by route template and status, never by raw path, user name or token', async () => {
    const t = await makeTestApp({ PLATFORM_METRICS_TOKEN: TOKEN })
    const [alice] = await t.users('alice-secret-name')
    const base = await t.listen()
    for (let i = 0; i < 3; i++)
      expect((await fetch(`${base}/api/v1/users/alice-secret-name`, { headers: { authorization: `token ${alice!.token}` } })).status).toBe(
        200,
      )
    expect((await fetch(`${base}/api/v1/users/nobody-here`)).status).toBe(404)
    expect((await fetch(`${base}/no/such/path/x1y2`)).status).toBe(404)
    const text = await (await scrape(base)).text()
    expect(samples(text, 'platform_http_requests_total')).toContain(
      'platform_http_requests_total{method="GET",route="/api/v1/users/:username",status="200"} 3',
    )
    expect(samples(text, 'platform_http_requests_total')).toContain(
      'platform_http_requests_total{method="GET",route="/api/v1/users/:username",status="404"} 1',
    )
    expect(text).toContain('route="unmatched",status="404"')
    expect(text).toContain('platform_http_request_duration_seconds_count{method="GET",route="/api/v1/users/:username",status="200"} 3')
    for (const leak of ['alice-secret-name', 'nobody-here', 'x1y2', alice!.token, TOKEN]) expect(text).not.toContain(leak)
  })

  test("the proxy: passthrough reads (the lean route) and the member's time, labelled owner/name", async () => {
    const t = await makeTestApp({ PLATFORM_METRICS_TOKEN: TOKEN })
    const root = await t.admin()
    const sandbox = await startSandbox(t.deps)
    try {
      const base = await t.listen()
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${base}/api/v1/clusters/${root.name}/sandbox/k8s/api/v1/namespaces`, {
          headers: { authorization: `token ${root.token}` },
        })
        expect(res.status).toBe(200)
      }
      const text = await (await scrape(base)).text()
      expect(text).toContain('platform_http_requests_total{method="GET",route="/api/v1/clusters/:owner/:cluster/k8s/*",status="200"} 2')
      expect(text).toContain(`platform_proxy_upstream_duration_seconds_count{cluster="${root.name}/sandbox"} 2`)
      expect(text).not.toContain('namespaces')
    } finally {
      await sandbox.stop()
    }
  })

  test('usage events ingested are counted by result', async () => {
    const t = await makeTestApp({ PLATFORM_METRICS_TOKEN: TOKEN, PLATFORM_MODES: 'billing' })
    const root = await t.admin()
    expect((await t.as(root).send('POST', '/api/v1/orgs', { username: 'acme' })).status).toBe(201)
    const spec = { uid: 'db-1', cluster: { uid: 'c-1', name: 'prod' } }
    const created = event(spec, t.clock.now() - HOUR, 'created', requests('1', '1Gi'))
    const res = await t.as(root).send('POST', '/api/v1/usage/events?org=acme', [created, created, { nonsense: true }])
    expect(res.status).toBe(200)
    const text = await (await t.request('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text()
    expect(text).toContain('platform_usage_events_total{result="rejected"} 1')
    expect(text).toContain('platform_usage_events_total{result="accepted"} 1')
    expect(text).toContain('platform_usage_events_total{result="duplicate"} 1')
  })

  test('usage PDFs: renders by outcome, the queue depth while one waits, a refusal when the queue is full', async () => {
    const t = await makeTestApp({ PLATFORM_METRICS_TOKEN: TOKEN, PLATFORM_MODES: 'billing' })
    const root = await t.admin()
    expect((await t.as(root).send('POST', '/api/v1/orgs', { username: 'acme' })).status).toBe(201)
    const metrics = metricsOf(t.deps)!
    expect((await t.as(root).get('/api/v1/dashboard/summary/2025/10/download?org=acme')).status).toBe(200)
    const text = await (await t.request('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text()
    expect(text).toContain('platform_pdf_renders_total{outcome="ok"} 1')
    // One renderer and one place in the queue: the second render waits, the third is refused.
    const printer = pdfPrinter({ chromiumPath: t.config.chromiumPath, concurrency: 1, queue: 1, log: t.deps.log, metrics })
    try {
      const layout = { footerHtml: '<span></span>' }
      const renders = [1, 2, 3].map((n) =>
        printer.print(`<p>${n}</p>`, layout).then(
          () => 'ok',
          (error: unknown) => (error instanceof AppError ? error.kind : String(error)),
        ),
      )
      expect(await metrics.pdfQueueDepth.get()).toMatchObject({ values: [{ value: 1 }] })
      expect(await Promise.all(renders)).toEqual(['ok', 'ok', 'unavailable'])
      expect(await metrics.pdfQueueDepth.get()).toMatchObject({ values: [{ value: 0 }] })
      const after = await metrics.registry.metrics()
      expect(after).toContain('platform_pdf_renders_total{outcome="ok"} 3')
      expect(after).toContain('platform_pdf_renders_total{outcome="refused"} 1')
    } finally {
      await printer.close()
    }
  }, 60_000)

  test('the message-bus connection: 1 while connected, 0 while its server is down, 1 again after it returns', async () => {
    const { t, nats } = await lab({ PLATFORM_METRICS_TOKEN: TOKEN })
    const connected = async () => (await metricsOf(t.deps)!.msgbusConnected.get()).values[0]?.value
    expect(await connected()).toBe(0)
    const [alice] = await t.users('alice')
    await credentialsOf(t, alice!)
    expect(await connected()).toBe(1)
    await nats.stop()
    await eventually(async () => (await connected()) === 0, 10_000)
    await nats.start()
    await eventually(async () => (await connected()) === 1, 10_000)
    const text = await (await t.request('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text()
    expect(text).toContain('platform_msgbus_connected 1')
  }, 60_000)

  test('promtool check metrics accepts the output', async () => {
    const t = await makeTestApp({ PLATFORM_METRICS_TOKEN: TOKEN })
    const base = await t.listen()
    await fetch(`${base}/healthz`)
    const text = await (await scrape(base)).text()
    const check = Bun.spawnSync(['promtool', 'check', 'metrics'], { stdin: new TextEncoder().encode(text) })
    expect(check.stderr.toString() + check.stdout.toString()).toBe('')
    expect(check.exitCode).toBe(0)
  })

  test('a real Prometheus scrapes with the bearer token and its query API sees the request counter grow', async () => {
    const t = await makeTestApp({ PLATFORM_METRICS_TOKEN: TOKEN })
    const base = await t.listen()
    const prometheus = startPrometheus(new URL(base).host, TOKEN)
    const query = async (q: string) => (await prometheus.query(q))[0]
    const healthz = 'platform_http_requests_total{route="/healthz",status="200"}'
    await fetch(`${base}/healthz`)
    const first = await eventually(() => query(healthz), 30_000)
    for (let i = 0; i < 5; i++) await fetch(`${base}/healthz`)
    await eventually(async () => ((await query(healthz)) ?? 0) >= first + 5, 30_000)
    expect(await query('up{job="platform"}')).toBe(1)
  }, 60_000)
})
