import { Elysia } from 'elysia'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import { resolveActor } from '../http/auth'
import { errorResponse, logUnexpected } from '../http/errors'
import { DOCS_PATH } from '../http/openapi'
import { pathOf } from '../http/routable-url'
import { buildConsole, type ConsoleBundle, embeddedConsole } from './bundle'

/** The paths of the console's pages (docs/console.md); each answers the same document, whose script shows the path's view. */
const PAGES: ReadonlySet<string> = new Set([
  '/',
  '/login',
  '/login/device',
  '/user/settings/tokens',
  '/user/settings/security',
  '/user/settings',
  '/user/settings/applications',
  '/orgs',
  '/orgs/new',
  '/admin',
  '/usage',
])
/** Pages named by what they show: `/clusters/<owner>/<name>`, `/orgs/<org>`. */
const PAGE_PATTERNS: readonly RegExp[] = [/^\/clusters\/[^/]+\/[^/]+$/, /^\/orgs\/[^/]+$/]
const CONSOLE_ASSETS = '/console/assets/'
const CONSOLE_ICON = '/console/favicon.svg'

/**
 * Every console answer: a strict policy (no inline script or style, no other origin; base-uri, form-action and
 * frame-ancestors do not fall back to default-src), no framing, no referrer beyond this site.
 */
const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
}

const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f4e79"/><path d="M4 4h8v8H4z" fill="none" stroke="#fff" stroke-width="1.5"/></svg>`

/**
 * The bundle, made once per process: embedded in the built binary, else bundled from source on first use
 * (about 0.1 s, docs/benchmarks.md). It is a property of the program, not of one app, so apps share it.
 */
let bundle: Promise<ConsoleBundle> | undefined
const consoleBundle = () => (bundle ??= Promise.resolve(embeddedConsole() ?? buildConsole()))

const pageOf = ({ script, style }: ConsoleBundle) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>platform-api</title>
<link rel="icon" href="${CONSOLE_ICON}" type="image/svg+xml"><link rel="stylesheet" href="/console/assets/${style}">
<script type="module" src="/console/assets/${script}"></script></head>
<body><div id="console"></div></body>
</html>`

const pageAnswer = async () =>
  new Response(pageOf(await consoleBundle()), {
    headers: { ...CONSOLE_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' },
  })

const iconAnswer = () =>
  new Response(ICON, { headers: { ...CONSOLE_HEADERS, 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400' } })

/** A file of the bundle; an unknown name is the API's 404. */
async function fileAnswer(name: string): Promise<Response> {
  const file = (await consoleBundle()).files.get(name)
  if (!file) throw new AppError('notFound', 'Not Found')
  return new Response(file.content, {
    headers: { ...CONSOLE_HEADERS, 'content-type': file.type, 'cache-control': 'public, max-age=31536000, immutable' },
  })
}

/** The answer to a GET of `path` when the path is the console's, else undefined (decided without waiting: Elysia takes a promise for an answer). */
function consoleAnswer(path: string): Promise<Response> | Response | undefined {
  if (PAGES.has(path) || PAGE_PATTERNS.some((pattern) => pattern.test(path))) return pageAnswer()
  if (path === CONSOLE_ICON) return iconAnswer()
  if (path.startsWith(CONSOLE_ASSETS)) return fileAnswer(path.slice(CONSOLE_ASSETS.length))
  return undefined
}

const AUTHORIZE = '/login/oauth/authorize'

/**
 * `/login/oauth/authorize` asked by a browser: signed out (or with an ended session), the sign-in page, which
 * comes back here; signed in, the API's own answer to the same request decides. Its redirect to the client (a
 * faulty request, RFC 6749 §4.1.2.1) goes to the browser as is; anything else is the consent page, whose script
 * asks the API again for what to show.
 */
async function authorizeAnswer(deps: Deps, request: Request, handle: (request: Request) => Promise<Response>): Promise<Response> {
  const back = request.url.slice(request.url.indexOf(AUTHORIZE))
  const actor = await resolveActor(deps, request).catch(() => undefined)
  if (!actor)
    return new Response(null, {
      status: 302,
      headers: { location: `/login?redirect_to=${encodeURIComponent(back)}`, 'cache-control': 'no-store' },
    })
  const api = await handle(
    new Request(request.url, { headers: { cookie: request.headers.get('cookie') ?? '', accept: 'application/json' } }),
  )
  return api.status === 302 ? api : pageAnswer()
}

const asksForPage = (request: Request) => (request.headers.get('accept') ?? '').includes('text/html')

/**
 * The web console (docs/decisions.md §11): its pages and their content-hashed files, answered before routing.
 * They carry no data (the script asks the API, with the caller's session), so no credential is read: an ended
 * session cookie still gets the page, whose script turns the API's 401 into the sign-in page. Not API routes,
 * so they stay out of the OpenAPI document; any other path goes on to the API's routes. `handle` is the app's,
 * for the one page that asks the API first (`authorizeAnswer`).
 */
export const consoleRoutes = (deps: Deps, handle: (request: Request) => Promise<Response>) => {
  const docsUrl = `${deps.config.publicUrl}${DOCS_PATH}`
  return new Elysia({ name: 'console' }).onRequest(({ request }) => {
    if (request.method !== 'GET') return undefined
    const path = pathOf(request.url)
    const answer = path === AUTHORIZE && asksForPage(request) ? authorizeAnswer(deps, request, handle) : consoleAnswer(path)
    // Outside Elysia's lifecycle: failures get the API's error body here, as the lean routes do.
    return answer instanceof Promise
      ? answer.catch((error: unknown) => errorResponse(error, docsUrl, (r, e) => logUnexpected(deps.log, r, e), request))
      : answer
  })
}
