import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { statusOf } from '../../src/http/errors'
import { closeAllPrinters, PrinterMessages, pdfPrinter } from '../../src/usage/pdf/printer'
import { makeTestApp } from '../support/app'
import { syntheticEvents } from './dataset'
import { billingWorld, send, type UsageWorld } from './support'

afterAll(() => closeAllPrinters())
// Chromium on a busy two-core machine: a cold launch alone can take seconds.
setDefaultTimeout(60_000)

/** Test artifacts (page 1 as PNG) are kept here for people to look at. */
const ARTIFACTS = resolve(import.meta.dir, '../../.artifacts/usage')

const run = (cmd: string[], input?: Uint8Array) => {
  const result = Bun.spawnSync(cmd, { stdin: input ?? 'ignore', stdout: 'pipe', stderr: 'pipe' })
  if (result.exitCode !== 0) throw new Error(`${cmd[0]} failed: ${result.stderr.toString()}`)
  return result.stdout.toString()
}

async function download(w: UsageWorld, path: string) {
  const res = await w.t.as(w.admin).get(`/api/v1/dashboard/summary/${path}`)
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) }
}

function pdfFacts(bytes: Uint8Array, name: string) {
  mkdirSync(ARTIFACTS, { recursive: true })
  const file = join(ARTIFACTS, `${name}.pdf`)
  writeFileSync(file, bytes)
  const pages = Number(/Pages:\s+(\d+)/.exec(run(['pdfinfo', file]))?.[1])
  const text = run(['pdftotext', '-layout', file, '-'])
  run(['pdftoppm', '-png', '-r', '80', '-f', '1', '-l', '1', '-singlefile', file, join(ARTIFACTS, `${name}-page1`)])
  return { pages, text }
}

describe('GET /dashboard/summary/{year}/{month}/download', () => {
  test('October 2025 of the synthetic data set → a PDF whose text shows the org, the month and the totals; page 1 kept as PNG', async () => {
    const w = await billingWorld()
    await send(w, syntheticEvents())
    const { res, bytes } = await download(w, '2025/October/download?org=acme')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/pdf')
    expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe('%PDF-')
    const { pages, text } = pdfFacts(bytes, 'october-2025')
    expect(pages).toBeGreaterThanOrEqual(2)
    expect(text).toContain('acme')
    expect(text).toContain('October 2025')
    const summary = await (
      await w.t.as(w.admin).get('/api/v1/dashboard/monthly-summary/dbprod?org=acme&period_start=2025-10&period_end=2025-10')
    ).json()
    expect(text).toContain(summary.months[0].cpuCoreMonth.toFixed(2))
    expect(text).toContain('prod-eu')
    expect(text).toMatch(/Page 1 of \d/)
  })

  test('a month without usage → a valid PDF that says no usage was recorded', async () => {
    const w = await billingWorld()
    const { res, bytes } = await download(w, '2024/03/download?org=acme')
    expect(res.status).toBe(200)
    const { pages, text } = pdfFacts(bytes, 'empty-month')
    expect(pages).toBeGreaterThanOrEqual(1)
    expect(text).toContain('No usage was recorded for acme in March 2024')
  })
})

describe("the download route's rules", () => {
  test('month 13, month Foo, year 25 → 400; a plain user → 403; 10, October and oct give the same report', async () => {
    const w = await billingWorld()
    for (const path of ['2025/13/download?org=acme', '2025/Foo/download?org=acme', '25/10/download?org=acme'])
      expect((await download(w, path)).res.status).toBe(400)
    expect((await w.t.as(w.owner).get('/api/v1/dashboard/summary/2025/10/download?org=acme')).status).toBe(403)
    const texts = []
    for (const month of ['10', 'October', 'oct'])
      texts.push(
        pdfFacts((await download(w, `2025/${month}/download?org=acme`)).bytes, `month-${month}`).text.replace(/generated [^U]*UTC/, ''),
      )
    expect(new Set(texts).size).toBe(1)
  })

  test('five downloads at once → all 200 PDFs', async () => {
    const w = await billingWorld()
    await send(w, syntheticEvents())
    const results = await Promise.all(Array.from({ length: 5 }, () => download(w, '2025/10/download?org=acme')))
    expect(results.map((r) => r.res.status)).toEqual([200, 200, 200, 200, 200])
    for (const r of results) expect(new TextDecoder().decode(r.bytes.slice(0, 5))).toBe('%PDF-')
  })
})

describe('the printer (one warm Chromium)', () => {
  const footer = { footerHtml: '<span></span>' }
  afterAll(() => closeAllPrinters())

  test('the browser killed between renders → the next render relaunches it and succeeds', async () => {
    const t = await makeTestApp()
    const printer = pdfPrinter({ chromiumPath: t.config.chromiumPath, concurrency: 1, queue: 0 })
    expect(new TextDecoder().decode((await printer.print('<p>one</p>', footer)).slice(0, 5))).toBe('%PDF-')
    await printer.crash()
    expect(new TextDecoder().decode((await printer.print('<p>two</p>', footer)).slice(0, 5))).toBe('%PDF-')
    expect(printer.launches).toBe(2)
  })

  test('more renders than slots plus queue → the extra ones refused with 503 and Retry-After, the rest printed', async () => {
    const t = await makeTestApp()
    const printer = pdfPrinter({ chromiumPath: t.config.chromiumPath, concurrency: 1, queue: 1 })
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map((n) => printer.print(`<p>${n}</p>`, footer)))
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2)
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason)
    expect(refused).toHaveLength(2)
    for (const error of refused) {
      expect(statusOf(error.kind)).toBe(503)
      expect(error.message).toBe(PrinterMessages.busy)
      expect(error.headers['retry-after']).toBe('2')
    }
  })

  test('a page asking for a network image and running a script → no request leaves, the script never runs', async () => {
    const t = await makeTestApp()
    let hits = 0
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () => {
        hits++
        return new Response('x')
      },
    })
    try {
      const printer = pdfPrinter({ chromiumPath: t.config.chromiumPath, concurrency: 1, queue: 0 })
      const html =
        `<p>static text</p><img src="http://127.0.0.1:${server.port}/pixel.png"><link rel="stylesheet" href="http://127.0.0.1:${server.port}/s.css">` +
        '<script>document.body.append("SCRIPT RAN")</script>'
      const pdf = await printer.print(html, footer)
      mkdirSync(ARTIFACTS, { recursive: true })
      writeFileSync(join(ARTIFACTS, 'isolation.pdf'), pdf)
      const text = run(['pdftotext', join(ARTIFACTS, 'isolation.pdf'), '-'])
      expect(text).toContain('static text')
      expect(text).not.toContain('SCRIPT RAN')
      expect(hits).toBe(0)
    } finally {
      server.stop(true)
    }
  })

  test('Chromium missing → the download answers 503 naming CHROMIUM_PATH', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'billing', CHROMIUM_PATH: '/nonexistent/chromium' })
    const { makeOrg } = await import('../orgs/support')
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga! })
    const res = await t.as(await t.admin()).get('/api/v1/dashboard/summary/2025/10/download?org=acme')
    expect(res.status).toBe(503)
    expect((await res.json()).message).toContain('CHROMIUM_PATH')
  })
})
