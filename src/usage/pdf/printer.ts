import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import puppeteer, { type Browser, type HTTPRequest, type Page } from 'puppeteer-core'
import { runtimeSlot } from '../../deps'
import { AppError } from '../../errors'
import { type Metrics, metricsOf } from '../../http/metrics'
import type { Logger } from '../../logger'

/**
 * The one module that talks to Chromium: a warm headless browser printing HTML to PDF, a page per
 * render, JavaScript off and every request but `data:` refused (the report carries everything
 * inline). A crashed browser is relaunched on the next render. A report takes its place in the
 * printer's line before anything of it is gathered: `concurrency` render at once, `queue` more
 * wait (gathering or for a slot), and beyond that the caller is refused at once with 503 and
 * Retry-After, having cost nothing. The page of the next render is opened while the current one
 * prints: opening a page costs Chromium ~60 ms, a fifth of a render, and every render still gets a
 * page nobody used before. A render that fails (no browser, a launch or page failure, a timeout) is
 * logged with the request id and answered 503 with Retry-After (docs/api/usage.md).
 */

export const PrinterMessages = {
  busy: 'too many reports are being rendered right now; try again shortly',
  noBrowser: (path: string) => `PDF rendering needs Chromium at ${path} (CHROMIUM_PATH)`,
  failed: 'the PDF renderer failed on this report; try again shortly, and tell the operator if it keeps failing',
} as const

/** Flags for a headless browser that reaches nothing on its own (the tests that drive Chromium use them too). */
export const CHROMIUM_FLAGS = [
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
  /** Where render failures are written, with the request id. */
  log: Logger
  /** Where renders and the queue's depth are counted (docs/operations.md, "Metrics"); none when metrics are off. */
  metrics?: Pick<Metrics, 'pdfRenders' | 'pdfQueueDepth'>
}

interface PrintLayout {
  /** HTML of the page footer (Chromium fills `.pageNumber` and `.totalPages`). */
  footerHtml: string
}

/** Renders `html` once a render slot is free; throws unavailable when the render fails. */
type Print = (html: string, layout: PrintLayout) => Promise<Uint8Array>

export interface PdfPrinter {
  /**
   * Runs `work` holding a place in the line, taken before `work` starts: throws unavailable (busy,
   * Retry-After) at once when every place is taken. `work` gathers what to print and calls `print`.
   * `requestId` goes into the log line of a failed render.
   */
  admit<T>(requestId: string | undefined, work: (print: Print) => Promise<T>): Promise<T>
  /** `admit` with nothing to gather. */
  print(html: string, layout: PrintLayout): Promise<Uint8Array>
  /** Kills the browser (tests use it to prove a relaunch). */
  crash(): Promise<void>
  close(): Promise<void>
  readonly launches: number
}

const RETRY_AFTER = { 'retry-after': '2' }

/** The app's printer, with the configured Chromium and line (PLATFORM_PDF_CONCURRENCY, PLATFORM_PDF_QUEUE); closed with the app. */
export const PDF_PRINTER = runtimeSlot(
  'pdf printer',
  (deps) => pdfPrinter({ chromiumPath: deps.config.chromiumPath, ...deps.config.pdfRenders, log: deps.log, metrics: metricsOf(deps) }),
  (printer) => printer.close(),
)

export function pdfPrinter(options: PrinterOptions): PdfPrinter {
  let browser: Promise<{ browser: Browser; profile: string }> | undefined
  let launches = 0
  /** Places taken in the line: reports being gathered, waiting for a slot or rendering. */
  let placed = 0
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

  /** Waits for a render slot (a placed report never waits behind more than the line holds). */
  const acquire = async () => {
    if (active < options.concurrency) {
      active++
      return
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

  /** Renders in a slot, once more with a fresh browser when it died under us; counts the outcome. */
  const render = async (html: string, layout: PrintLayout): Promise<Uint8Array> => {
    await acquire()
    let outcome = 'failed'
    try {
      let pdf: Uint8Array
      try {
        pdf = await renderOnce(html, layout)
      } catch (error) {
        const b = await browser?.catch(() => undefined)
        if (error instanceof AppError || b?.browser.connected) throw error
        browser = undefined
        pdf = await renderOnce(html, layout)
      }
      outcome = 'ok'
      return pdf
    } finally {
      options.metrics?.pdfRenders.labels(outcome).inc()
      release()
    }
  }

  /** A render that failed: logged with what went wrong, answered 503 (busy refusals never get here). */
  const failed = (requestId: string | undefined, error: unknown): AppError => {
    options.log.error('pdf render failed', {
      requestId,
      reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    })
    return new AppError('unavailable', error instanceof AppError ? error.message : PrinterMessages.failed, [], RETRY_AFTER)
  }

  const admit: PdfPrinter['admit'] = async (requestId, work) => {
    if (placed >= options.concurrency + options.queue) {
      options.metrics?.pdfRenders.labels('refused').inc()
      throw new AppError('unavailable', PrinterMessages.busy, [], RETRY_AFTER)
    }
    placed++
    try {
      return await work(async (html, layout) => {
        try {
          return await render(html, layout)
        } catch (error) {
          throw failed(requestId, error)
        }
      })
    } finally {
      placed--
    }
  }

  return {
    get launches() {
      return launches
    },
    admit,
    print: (html, layout) => admit(undefined, (print) => print(html, layout)),
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
