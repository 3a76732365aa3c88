import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import puppeteer, { type Browser, type HTTPRequest, type Page } from 'puppeteer-core'
import { AppError } from '../../errors'
import type { Metrics } from '../../http/metrics'

/**
 * The one module that talks to Chromium: a warm headless browser printing HTML to PDF, a page per
 * render, JavaScript off and every request but `data:` refused (the report carries everything
 * inline). A crashed browser is relaunched on the next render; at most `concurrency` renders run
 * at once, `queue` more wait, and beyond that the caller gets 503 with Retry-After. The page of
 * the next render is opened while the current one prints: opening a page costs Chromium ~60 ms,
 * a fifth of a render, and every render still gets a page nobody used before.
 */

export const PrinterMessages = {
  busy: 'too many reports are being rendered right now; try again shortly',
  noBrowser: (path: string) => `PDF rendering needs Chromium at ${path} (CHROMIUM_PATH)`,
  failed: 'the PDF could not be rendered',
} as const

/** Flags for a headless browser that reaches nothing on its own. */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--disable-extensions',
  '--mute-audio',
  '--font-render-hinting=none',
]

export interface PrinterOptions {
  chromiumPath: string
  concurrency: number
  queue: number
  /** Upper bound of one render. */
  timeoutMs?: number
  /** Where renders and the queue's depth are counted (docs/operations.md, "Metrics"); none when metrics are off. */
  metrics?: Pick<Metrics, 'pdfRenders' | 'pdfQueueDepth'>
}

interface PrintLayout {
  /** HTML of the page footer (Chromium fills `.pageNumber` and `.totalPages`). */
  footerHtml: string
}

export interface PdfPrinter {
  print(html: string, layout: PrintLayout): Promise<Uint8Array>
  /** Kills the browser (tests use it to prove a relaunch). */
  crash(): Promise<void>
  close(): Promise<void>
  readonly launches: number
}

const RETRY_AFTER_SECONDS = '2'

const printers = new Set<PdfPrinter>()

/** Closes every printer of this process (test teardown, shutdown). */
export async function closeAllPrinters(): Promise<void> {
  await Promise.all([...printers].map((p) => p.close()))
}

export function pdfPrinter(options: PrinterOptions): PdfPrinter {
  const printer = makePrinter(options)
  printers.add(printer)
  return printer
}

function makePrinter(options: PrinterOptions): PdfPrinter {
  let browser: Promise<{ browser: Browser; profile: string }> | undefined
  let launches = 0
  let active = 0
  const waiting: (() => void)[] = []

  let closed = false

  const launch = async (onGone: () => void) => {
    if (!existsSync(options.chromiumPath)) throw new AppError('unavailable', PrinterMessages.noBrowser(options.chromiumPath))
    // Its own profile and home: Chromium writes crash reports and caches under $HOME even with a profile dir.
    const profile = mkdtempSync(join(tmpdir(), 'platform-chromium-'))
    launches++
    const launched = await puppeteer.launch({
      executablePath: options.chromiumPath,
      headless: true,
      pipe: true,
      userDataDir: profile,
      args: CHROMIUM_FLAGS,
      env: { ...process.env, HOME: profile, XDG_CONFIG_HOME: profile, XDG_CACHE_HOME: profile },
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      protocolTimeout: 60_000,
    })
    launched.on('disconnected', () => {
      onGone()
      rmSync(profile, { recursive: true, force: true })
    })
    return { browser: launched, profile }
  }
  /** The warm browser, launched on first need and again after it died. */
  const started = () => {
    if (closed) return Promise.reject(new AppError('unavailable', PrinterMessages.failed))
    if (!browser) {
      const launching = launch(() => {
        if (browser === launching) browser = undefined
      })
      browser = launching
      launching.catch(() => {
        if (browser === launching) browser = undefined
      })
    }
    return browser
  }

  /** Waits for a render slot; refuses when the queue is full. */
  const acquire = async () => {
    if (active < options.concurrency) {
      active++
      return
    }
    if (waiting.length >= options.queue) {
      options.metrics?.pdfRenders.labels('refused').inc()
      throw new AppError('unavailable', PrinterMessages.busy, [], { 'retry-after': RETRY_AFTER_SECONDS })
    }
    await new Promise<void>((resolve) => {
      waiting.push(resolve)
      options.metrics?.pdfQueueDepth.set(waiting.length)
    })
  }
  const release = () => {
    const next = waiting.shift()
    options.metrics?.pdfQueueDepth.set(waiting.length)
    if (next) next()
    else active--
  }

  /** A new page, JavaScript off, every request but `data:` refused. */
  const openPage = async (b: Browser): Promise<Page> => {
    const page = await b.newPage()
    page.setDefaultTimeout(options.timeoutMs ?? 20_000)
    await page.setJavaScriptEnabled(false)
    await page.setRequestInterception(true)
    page.on('request', (request: HTTPRequest) => {
      if (request.url().startsWith('data:')) void request.continue()
      else void request.abort('blockedbyclient')
    })
    return page
  }
  /** The page opened ahead for the next render, and the browser it belongs to. */
  let spare: { browser: Browser; page: Promise<Page> } | undefined
  const takePage = (b: Browser): Promise<Page> => {
    const ready = spare?.browser === b ? spare.page : undefined
    spare = undefined
    const next = openPage(b)
    // A spare that is never taken (browser closed or crashed) must not surface as an unhandled rejection.
    next.catch(() => undefined)
    spare = { browser: b, page: next }
    return ready ?? openPage(b)
  }

  const renderOnce = async (html: string, layout: PrintLayout): Promise<Uint8Array> => {
    const { browser: b } = await started()
    const page = await takePage(b)
    try {
      await page.goto(`data:text/html;base64,${Buffer.from(html).toString('base64')}`, { waitUntil: 'load' })
      return await page.pdf({
        printBackground: true,
        preferCSSPageSize: true,
        displayHeaderFooter: true,
        headerTemplate: '<span></span>',
        footerTemplate: layout.footerHtml,
        timeout: options.timeoutMs ?? 20_000,
      })
    } finally {
      await page.close().catch(() => undefined)
    }
  }

  return {
    get launches() {
      return launches
    },
    async print(html, layout) {
      await acquire()
      let outcome = 'failed'
      try {
        try {
          const pdf = await renderOnce(html, layout)
          outcome = 'ok'
          return pdf
        } catch (error) {
          if (error instanceof AppError) throw error
          // The browser may have died under us: once more with a fresh one.
          const b = await browser?.catch(() => undefined)
          if (b?.browser.connected) throw new AppError('internal', PrinterMessages.failed)
          browser = undefined
          const pdf = await renderOnce(html, layout)
          outcome = 'ok'
          return pdf
        }
      } finally {
        options.metrics?.pdfRenders.labels(outcome).inc()
        release()
      }
    },
    async crash() {
      const b = await browser?.catch(() => undefined)
      b?.browser.process()?.kill('SIGKILL')
      await new Promise((resolve) => setTimeout(resolve, 100))
    },
    async close() {
      const b = await browser?.catch(() => undefined)
      closed = true
      browser = undefined
      spare = undefined
      await b?.browser.close().catch(() => undefined)
    },
  }
}
