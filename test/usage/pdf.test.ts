import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { sql } from 'drizzle-orm'
import { statusOf } from '../../src/http/errors'
import { PDF_PRINTER, type PdfPrinter, PrinterMessages, pdfPrinter } from '../../src/usage/pdf/printer'
import { makeOrg } from '../orgs/support'
import { makeTestApp, type TestApp } from '../support/app'
import { countingServer } from '../support/counting-server'
import { syntheticEvents } from './dataset'
import { billingWorld, send, type UsageWorld } from './support'

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

describe('the download route when the printer is busy or failing', () => {
  test("the printer's line full → downloads answer 503 busy at once, before reading the month (its table is gone: a read would be 500)", async () => {
    const w = await billingWorld()
    await send(w, syntheticEvents())
    const printer = w.t.deps.runtimes.of(PDF_PRINTER)
    // Hold every place of the line (2 rendering, 8 waiting by default) until the test lets go.
    let letGo = () => {}
    const holding = new Promise<void>((resolve) => (letGo = resolve))
    const held = Array.from({ length: 10 }, () => printer.admit(undefined, () => holding))
    const rename = (from: string, to: string) => w.t.deps.db.write((tx) => tx.run(sql.raw(`ALTER TABLE ${from} RENAME TO ${to}`)))
    await rename('usage_objects', 'usage_objects_away')
    const answers = await Promise.all(Array.from({ length: 30 }, () => download(w, '2025/10/download?org=acme')))
    expect(answers.map((a) => a.res.status)).toEqual(Array(30).fill(503))
    for (const { res, bytes } of answers.slice(0, 3)) {
      expect(res.headers.get('retry-after')).toBe('2')
      expect(JSON.parse(new TextDecoder().decode(bytes)).message).toBe(PrinterMessages.busy)
    }
    letGo()
    await Promise.all(held)
    await rename('usage_objects_away', 'usage_objects')
    const after = await download(w, '2025/10/download?org=acme')
    expect(after.res.status).toBe(200)
    expect(new TextDecoder().decode(after.bytes.slice(0, 5))).toBe('%PDF-')
  })

  test('twelve downloads at once, one render slot and two places waiting (real Chromium) → the placed ones get PDFs, the rest 503 busy with Retry-After, none a 500', async () => {
    const w = await billingWorld('acme', { PLATFORM_PDF_CONCURRENCY: '1', PLATFORM_PDF_QUEUE: '2' })
    await send(w, syntheticEvents())
    const answers = await Promise.all(Array.from({ length: 12 }, () => download(w, '2025/10/download?org=acme')))
    const printed = answers.filter((a) => a.res.status === 200)
    const refused = answers.filter((a) => a.res.status === 503)
    expect(printed.length + refused.length).toBe(12)
    // The first three take the line while the browser launches: the others find it full.
    expect(printed.length).toBeGreaterThanOrEqual(3)
    expect(refused.length).toBeGreaterThan(0)
    for (const { bytes } of printed) expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe('%PDF-')
    for (const { res, bytes } of refused) {
      expect(res.headers.get('retry-after')).toBe('2')
      expect(JSON.parse(new TextDecoder().decode(bytes)).message).toBe(PrinterMessages.busy)
    }
  })

  test('a printer that fails (CHROMIUM_PATH is not Chromium) → 503 with a clear message and Retry-After, logged with the request id', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'billing', CHROMIUM_PATH: '/bin/true' })
    const admin = await t.admin()
    await makeOrg(t, 'acme', { owner: admin })
    const res = await t.as(admin).get('/api/v1/dashboard/summary/2025/10/download?org=acme', { 'x-request-id': 'pdf-failure-1' })
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('2')
    expect(((await res.json()) as { message: string }).message).toBe(PrinterMessages.failed)
    const lines = await t.logFor('pdf-failure-1')
    expect(lines.find((l) => l.event === 'pdf render failed')).toMatchObject({ level: 'error', requestId: 'pdf-failure-1' })
  })
})

/** A printer of its own on the app's Chromium, closed after the test. */
function printerFor(t: TestApp, line: { concurrency: number; queue: number }): PdfPrinter {
  const printer = pdfPrinter({ chromiumPath: t.config.chromiumPath, ...line, log: t.deps.log })
  afterAll(() => printer.close())
  return printer
}

describe('the printer (one warm Chromium)', () => {
  const footer = { footerHtml: '<span></span>' }

  test('the browser killed between renders → the next render relaunches it and succeeds', async () => {
    const t = await makeTestApp()
    const printer = printerFor(t, { concurrency: 1, queue: 0 })
    expect(new TextDecoder().decode((await printer.print('<p>one</p>', footer)).slice(0, 5))).toBe('%PDF-')
    await printer.crash()
    expect(new TextDecoder().decode((await printer.print('<p>two</p>', footer)).slice(0, 5))).toBe('%PDF-')
    expect(printer.launches).toBe(2)
  })

  test('more renders than slots plus queue → the extra ones refused with 503 and Retry-After, the rest printed', async () => {
    const t = await makeTestApp()
    const printer = printerFor(t, { concurrency: 1, queue: 1 })
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
    const server = countingServer(() => new Response('x'))
    try {
      const printer = printerFor(t, { concurrency: 1, queue: 0 })
      const html =
        `<p>static text</p><img src="${server.origin}/pixel.png"><link rel="stylesheet" href="${server.origin}/s.css">` +
        '<script>document.body.append("SCRIPT RAN")</script>'
      const pdf = await printer.print(html, footer)
      mkdirSync(ARTIFACTS, { recursive: true })
      writeFileSync(join(ARTIFACTS, 'isolation.pdf'), pdf)
      const text = run(['pdftotext', join(ARTIFACTS, 'isolation.pdf'), '-'])
      expect(text).toContain('static text')
      expect(text).not.toContain('SCRIPT RAN')
      expect(server.hits()).toBe(0)
    } finally {
      server.stop()
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
