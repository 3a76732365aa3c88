import { chmodSync, mkdirSync, statSync } from 'node:fs'
import { Elysia } from 'elysia'
import { auditRecorder, type RouteInfo } from './audit/recorder'
import { auditRoutes } from './audit/routes'
import { auditWriter } from './audit/writer'
import { type Clock, systemClock } from './clock'
import { cloudRoutes } from './cloud/routes'
import { clusterFacts } from './clusters/access'
import { proxyRoutes } from './clusters/proxy/routes'
import { clusterRoutes } from './clusters/routes'
import { type Config, ConfigError } from './config'
import { consoleRoutes } from './console/routes'
import type { Deps } from './deps'
import { AppError, messageOf } from './errors'
import { actorOf, resolveActor } from './http/auth'
import { jsonBody } from './http/body'
import { checkDateTimesAsRfc3339 } from './http/date-time-format'
import { errorHandler, logUnexpected } from './http/errors'
import { metricsRoute, requestMetrics } from './http/metrics'
import { DOCS_PATH, openapiDocs } from './http/openapi'
import { requestLog, requestStartedAt } from './http/request-log'
import { routableUrl } from './http/routable-url'
import { securityHeaders } from './http/security-headers'
import { checkCredential } from './identity/authenticate'
import { deviceApprovalRoutes, oauth2ApplicationRoutes, oauth2FlowRoutes } from './identity/oauth2/routes'
import { identityRoutes } from './identity/routes'
import { securityRoutes } from './identity/security/routes'
import { userFacts } from './identity/user-facts'
import { inboxRoutes } from './inbox/routes'
import { deleteMemberSubscriptions, deleteOrgSubscriptions } from './inbox/store'
import { jsonLogger, type Logger } from './logger'
import { auditBusSink } from './msgbus/org-publisher'
import { subscribeInOrgAccounts } from './msgbus/org-subscribers'
import { msgbusRoutes } from './msgbus/routes'
import { COOKIE_TTL_SECONDS, MSGBUS_COOKIE, signInBearerJwt } from './msgbus/service'
import { systemAdminKeyRoutes } from './msgbus/system-admin/routes'
import { systemNetwork } from './net/egress'
import { orderRoutes } from './orders/routes'
import { accountOrgFacts } from './orgs/account-facts'
import { authSourceRoutes, SSO_SIGN_IN_PATH } from './orgs/auth-source/routes'
import { claimCheckRoutes, hostedClaimRoutes } from './orgs/claims/routes'
import { fleetmgrRoutes } from './orgs/fleetmgr/routes'
import { hostedTokenRoutes } from './orgs/hosted-token/routes'
import { memberRoutes } from './orgs/members/routes'
import { orgRoutes } from './orgs/routes'
import { orgFacts } from './orgs/scope-facts'
import { systemAdminRoutes } from './orgs/system-admin/routes'
import { teamRoutes } from './orgs/teams/routes'
import { Runtimes } from './runtimes'
import { isDatabaseUnavailable, openDatabase } from './storage/database'
import { assertSharedSecretKey } from './storage/key-check'
import { upgradeBackupDir } from './storage/migrations'
import { loadOrCreateKey, secretBox } from './storage/secret-box'
import { systemRoutes } from './system/routes'
import { buildInfo } from './system/service'
import { INGEST_ROUTE, usageRoutes } from './usage/routes'
import { usageEventsSubscription } from './usage/subscriber'

/** Opens what the app needs from the outside world: the database, the secret key, the logger. */
export async function openDeps(config: Config, log: Logger = jsonLogger(), clock: Clock = systemClock): Promise<Deps> {
  // The database (password hashes, sessions) and keys live here: the service's user alone reads them.
  try {
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
  } catch (error) {
    // An operator's mistake, not a crash: a message naming the setting and exit 2 (main.ts).
    throw new ConfigError(
      `PLATFORM_DATA_DIR (--data-dir) "${config.dataDir}" cannot be created: ${(error as { code?: string }).code ?? String(error)}`,
    )
  }
  restrictDataDir(config.dataDir, log)
  const db = await openDatabase(config.databaseUrl, {
    authToken: config.databaseAuthToken,
    driver: config.databaseDriver,
    backupDir: upgradeBackupDir(config),
  }).catch((error: unknown) => {
    throw isDatabaseUnavailable(error) ? databaseUnreachable(config.databaseUrl, error) : error
  })
  const secrets = await secretBox(loadOrCreateKey(config.secretKey, config.dataDir))
  await assertSharedSecretKey(db, secrets).catch(async (error: unknown) => {
    await db.close()
    throw error
  })
  const orgs = orgFacts(db)
  // The slots base layers call into areas through: http/ and authz/ import no area.
  const deps: Deps = {
    config,
    db,
    log,
    clock,
    secrets,
    network: systemNetwork,
    runtimes: new Runtimes(
      () => deps,
      (runtime, error) => log.error('closing a runtime failed', { runtime, error: messageOf(error) }),
    ),
    checkCredential: (presented, context) => checkCredential(deps, presented, context),
    orgFacts: orgs,
    userFacts: userFacts(db),
    clusterFacts: clusterFacts(db, orgs),
    busCookie: { name: MSGBUS_COOKIE, maxAgeSeconds: COOKIE_TTL_SECONDS, issue: (uid) => signInBearerJwt(deps, uid) },
    accountOrgFacts: accountOrgFacts(db),
    orgDepartures: { memberLeft: deleteMemberSubscriptions, orgDeleted: deleteOrgSubscriptions },
  }
  return deps
}

/**
 * A data dir the operator made (`mkdir -p data`: 0755) is narrowed to 0700 like one the server
 * makes; when it cannot be (another user's directory), one warning says why and the server goes on.
 */
function restrictDataDir(dataDir: string, log: Logger): void {
  try {
    if ((statSync(dataDir).mode & 0o077) !== 0) chmodSync(dataDir, 0o700)
  } catch (error) {
    log.error('the data dir stays readable by other users: it cannot be narrowed to 0700', {
      dataDir,
      reason: (error as { code?: string }).code ?? messageOf(error),
    })
  }
}

/** One line an operator can act on, naming the database without its credentials (a remote URL's user, password and query). */
function databaseUnreachable(url: string, error: unknown): AppError {
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  const where = parsed && parsed.protocol !== 'file:' ? `${parsed.protocol}//${parsed.host}` : url.split('?')[0]
  let reason = ''
  for (let e: unknown = error; e instanceof Error && !reason; e = e.cause) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string') reason = (e.message.startsWith(code) ? e.message : `${code}: ${e.message}`).slice(0, 200)
  }
  return new AppError('unavailable', `the database at DATABASE_URL (${where}) cannot be reached: ${reason}`)
}

/** Closes what openDeps opened and what the areas made since (their runtimes), then the database. */
export async function closeDeps(deps: Deps): Promise<void> {
  await deps.runtimes.close()
  await deps.db.close()
}

/** A tunnel's windows (256 streams of 256 KiB) and room for its control frames. */
const WEBSOCKET_SEND_QUEUE_BYTES = 80 * 1024 * 1024

/** Builds the HTTP app from the area plugins; `serve` and every test use this. */
export function createApp(deps: Deps) {
  checkDateTimesAsRfc3339()
  const docsUrl = `${deps.config.publicUrl}${DOCS_PATH}`
  const checkCredential = (request: Request) => resolveActor(deps, request)
  // strictPath, and Elysia's router rather than Bun's (which lets `/x/` answer `/x` too): the
  // contract's trailing slashes are distinct routes. encodeSchema off: no response schema has a
  // transform to encode, and the pass over every response cost a fifth of GET /user.
  // The WebSocket send queue may hold what every stream of an agent tunnel has in flight (docs/agents.md): past
  // Bun's default limit (16 MiB) a message is dropped, which would cut the tunnel.
  const app = new Elysia({
    strictPath: true,
    encodeSchema: false,
    systemRouter: false,
    websocket: { backpressureLimit: WEBSOCKET_SEND_QUEUE_BYTES, closeOnBackpressureLimit: false },
  })
    .use(routableUrl)
    // Before every other plugin, so its hooks see a request that another plugin's hook refuses (the
    // guard's 401 in a derive, the body parser's) and inside the lean route's wrap (proxy reads skip it).
    .use(auditRecorder(deps, { routes: (): readonly RouteInfo[] => app.routes, recordedReads: [SSO_SIGN_IN_PATH] }))
    .use(errorHandler(docsUrl, (request, error) => logUnexpected(deps.log, request, error), checkCredential))
    .use(requestLog(deps.log, deps.config.requestLog))
    .use(requestMetrics(deps, requestStartedAt))
    .use(metricsRoute(deps))
    .use(securityHeaders)
    .use(
      jsonBody(
        { maxBytes: deps.config.maxBodyBytes, timeoutSeconds: deps.config.bodyTimeoutSeconds },
        (request, server) => actorOf(deps, request, server),
        new Set([INGEST_ROUTE]),
      ),
    )
    .use(systemRoutes(deps))
    .use(identityRoutes(deps))
    .use(clusterRoutes(deps))
    .use(proxyRoutes(deps))
    .use(securityRoutes(deps))
    .use(oauth2ApplicationRoutes(deps))
    .use(oauth2FlowRoutes(deps))
    .use(deviceApprovalRoutes(deps))
    .use(orgRoutes(deps))
    .use(memberRoutes(deps))
    .use(teamRoutes(deps))
    .use(inboxRoutes(deps))
    .use(authSourceRoutes(deps))
    .use(cloudRoutes(deps))
    .use(orderRoutes(deps))
    .use(msgbusRoutes(deps))
    .use(systemAdminRoutes(deps))
    .use(systemAdminKeyRoutes(deps))
    .use(fleetmgrRoutes(deps))
    .use(auditRoutes(deps))
  // Deployment modes add or omit whole plugins (docs/decisions.md §1); an omitted route is a plain 404.
  if (deps.config.modes.has('hosted')) app.use(hostedClaimRoutes(deps)).use(hostedTokenRoutes(deps))
  if (deps.config.modes.has('marketplace') || deps.config.runMode === 'dev') app.use(claimCheckRoutes(deps))
  if (deps.config.modes.has('billing')) {
    app.use(usageRoutes(deps))
    // Usage events published on the message bus (docs/decisions.md §5a); nothing runs without MSGBUS_URLS.
    subscribeInOrgAccounts(deps, usageEventsSubscription(deps))
  }
  // Each audit event of an org also on `audit.<org>` in its account (docs/decisions.md §8).
  if (deps.config.msgbusUrls.length > 0) auditWriter(deps).addSink(auditBusSink(deps))
  // The web console (docs/decisions.md §11): its pages are not API routes and stay out of the document.
  if (deps.config.console) app.use(consoleRoutes(deps, (request) => app.handle(request)))
  // Last, so the document (built on its first request) sees every route of this app.
  app.use(openapiDocs(app, buildInfo(deps.config).version, checkCredential))
  return app
}

export type App = ReturnType<typeof createApp>
