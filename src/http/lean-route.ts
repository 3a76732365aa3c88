import type { Server } from 'bun'
import { Elysia } from 'elysia'
import type { Actor } from '../authz/actor'
import type { Deps } from '../deps'
import { andThen, type MaybePromise } from '../maybe-promise'
import { leanActorOf } from './auth'
import { errorResponse, logUnexpected } from './errors'
import { metricsOf } from './metrics'
import { DOCS_PATH } from './openapi'
import { beginRequest, logRequest, requestStartedAt } from './request-log'
import { pathOf } from './routable-url'
import { SECURITY_HEADERS } from './security-headers'

/** A route answered outside Elysia's per-request lifecycle; see leanRoute. */
export interface LeanRoute<Params, Admitted> {
  /** A name for the plugin (Elysia deduplicates plugins by name). */
  name: string
  /** The route's params when it takes `request` (`path` as sent, still percent-encoded); undefined leaves the request to the app. */
  match(request: Request, path: string): Params | undefined
  /** The template of the app's route of the same path (the metrics' `route` label; never the raw path). */
  route(params: Params): string
  /**
   * Who may call: the admission function of http/guard.ts that the guard runs for the app's route
   * of the same path (`admitInCluster` for an `inCluster` route), so both decide alike. Throws the refusal.
   */
  admit(actor: Actor | undefined, params: Params, request: Request): MaybePromise<Admitted>
  /**
   * The answer for what `admit` settled; throws AppError for a refusal. `server` is null in-process
   * (app.handle). Undefined when the handler upgraded the connection (a WebSocket): nothing to answer.
   */
  handle(admitted: Admitted, params: Params, request: Request, server: Server<unknown> | null): MaybePromise<Response | undefined>
}

/**
 * A route the app answers before Elysia's per-request lifecycle (context object, hooks, router,
 * validation, response mapping): on the Kubernetes passthrough that lifecycle cost about as much
 * CPU as the relay itself. The answer goes through the same pieces every route's does, called
 * here in the same order: the request id and security headers, the credential (actorOf), the
 * guard's admission, the one error body, the request log. What `match` leaves (and the OpenAPI document) stays with the app's route of the same path,
 * which calls the same handler.
 */
export function leanRoute<Params, Admitted>(deps: Deps, route: LeanRoute<Params, Admitted>) {
  const docsUrl = `${deps.config.publicUrl}${DOCS_PATH}`
  const unexpected = (request: Request, error: unknown) => logUnexpected(deps.log, request, error)
  const metrics = metricsOf(deps)
  let server: Server<unknown> | null = null
  // Each step answers at once when it can (a cached sign-in, a cached body): no promise is made for a request
  // that needs none to wait on.
  const answer = (request: Request, params: Params): MaybePromise<Response | undefined> => {
    const requestId = beginRequest(request)
    const failed = (error: unknown) => finished(request, params, requestId, errorResponse(error, docsUrl, unexpected, request))
    let handled: MaybePromise<Response | undefined>
    try {
      const admitted = andThen(leanActorOf(deps, request, server), (actor) => route.admit(actor, params, request))
      handled = andThen(admitted, (ready) => route.handle(ready, params, request, server))
    } catch (error) {
      return failed(error)
    }
    // Undefined: the handler upgraded the connection (a WebSocket), nothing to answer.
    if (handled instanceof Promise) return handled.then((response) => response && finished(request, params, requestId, response), failed)
    return handled && finished(request, params, requestId, handled)
  }
  const finished = (request: Request, params: Params, requestId: string, response: Response): Response => {
    // The answer's own headers win, as when Elysia merges what hooks set.
    if (!response.headers.has('x-request-id')) response.headers.set('x-request-id', requestId)
    for (const name in SECURITY_HEADERS) if (!response.headers.has(name)) response.headers.set(name, SECURITY_HEADERS[name]!)
    if (deps.config.requestLog) logRequest(deps.log, request, response.status)
    if (metrics)
      metrics.request(request.method, route.route(params), response.status, (performance.now() - requestStartedAt(request)!) / 1000)
    return response
  }
  return (
    new Elysia({ name: route.name })
      .onStart(({ server: started }) => {
        server = started
      })
      // A higher-order function sees each request before Elysia builds anything for it.
      .wrap((handle, request: Request) => {
        const params = route.match(request, pathOf(request.url))
        return params === undefined ? handle : () => answer(request, params)
      })
  )
}
