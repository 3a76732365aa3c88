import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { ApiResponseMessage, ErrorBody } from '../../http/schemas'
import { OrgParams } from '../schemas'
import { AccessToken, FleetmgrApiToken } from './schemas'
import * as fleetmgr from './service'

const TAGS = ['organization']
const errors = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }

/**
 * Marks the deprecated user-token routes and points at their successor (docs/decisions.md §6a). The Link
 * is relative to the request URL (RFC 8288), so it never echoes the org name: a hidden org and a
 * missing one answer byte for byte the same.
 */
function markDeprecated({ set }: { set: { headers: Record<string, string | number> } }): void {
  set.headers.deprecation = 'true'
  set.headers.link = '<sync-token>; rel="successor-version"'
}

/** The org's fleet-manager sync token, and the deprecated user-token routes answering the same. */
export const fleetmgrRoutes = (deps: Deps) => {
  const app = new Elysia({ name: 'orgs.fleetmgr.routes', prefix: '/api/v1' }).use(guard(deps))
  for (const kind of ['sync-token', 'user-token'] as const) {
    const isDeprecated = kind === 'user-token'
    const path = `/orgs/:org/fleetmgr/${kind}`
    // In transform, the first hook: refusals (403, 404) carry the headers too.
    const hooks = isDeprecated ? { transform: markDeprecated } : {}
    app
      .get(path, ({ scope }) => fleetmgr.getSyncToken(deps, scope), {
        inOrg: 'view:sync-token',
        scope: 'organization',
        secret: true,
        params: OrgParams,
        ...hooks,
        response: { 200: FleetmgrApiToken, ...errors },
        detail: { summary: "The organization's fleet-manager sync token, secret included", tags: TAGS, deprecated: isDeprecated },
      })
      .post(path, ({ me, scope, body }) => fleetmgr.createSyncToken(deps, scope, me, body ?? {}), {
        inOrg: 'create:fleetmgr-org-sync-token',
        scope: 'organization',
        params: OrgParams,
        body: t.Optional(AccessToken),
        ...hooks,
        response: { 200: ApiResponseMessage, ...errors, 400: ErrorBody, 422: ErrorBody },
        detail: {
          summary: 'Mint (or replace) the fleet-manager sync token; 400 unless the org is of fleet-manager origin',
          tags: TAGS,
          deprecated: isDeprecated,
        },
      })
      .delete(
        path,
        async ({ scope }) => {
          await fleetmgr.deleteSyncToken(deps, scope)
        },
        {
          inOrg: 'remove:fleetmgr-sync-token',
          scope: 'organization',
          params: OrgParams,
          ...hooks,
          response: { 200: t.Void(), ...errors },
          detail: { summary: 'Delete the fleet-manager sync token', tags: TAGS, deprecated: isDeprecated },
        },
      )
  }
  return app
}
