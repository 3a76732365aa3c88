import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { ErrorBody } from '../../http/schemas'
import { Organization, OrgClaimableCheckResp } from '../schemas'
import * as claims from './service'

const TAGS = ['organization']

/** `PATCH /orgs/claim/{claimID}`: registered on hosted deployments only (createApp decides). */
export const hostedClaimRoutes = (deps: Deps) =>
  new Elysia({ name: 'orgs.claims.hosted', prefix: '/api/v1' })
    .use(guard(deps))
    .patch('/orgs/claim/:claimID', ({ me, params }) => claims.claimOrg(deps, me, params.claimID), {
      signedIn: 'signed-in',
      scope: 'organization',
      params: t.Object({ claimID: t.String({ description: 'Claim id handed to the buyer' }) }),
      response: { 200: Organization, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      detail: { summary: 'Claim a standalone organization: the caller becomes its owner', tags: TAGS },
    })

/** `GET /orgs/claim/`: registered on marketplace deployments and in dev run mode only (createApp decides). */
export const claimCheckRoutes = (deps: Deps) =>
  new Elysia({ name: 'orgs.claims.check', prefix: '/api/v1' }).use(guard(deps)).get('/orgs/claim/', () => claims.checkClaimable(deps), {
    signedIn: 'site-admin',
    scope: 'admin',
    response: { 200: OrgClaimableCheckResp, 401: ErrorBody, 403: ErrorBody },
    detail: { summary: 'The oldest unclaimed standalone organization from the marketplace flow', tags: TAGS },
  })
