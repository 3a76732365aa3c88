import { Elysia } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { ErrorBody } from '../../http/schemas'
import { HostedToken, HostedTokenJwks } from './schemas'
import * as hosted from './service'

const TAGS = ['user']

/** The hosted token and its key set; registered in hosted mode only (docs/decisions.md §6a). */
export const hostedTokenRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity.hosted-token.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .get('/user/hosted-token', ({ me }) => hosted.hostedToken(deps, me.user), {
      signedIn: 'signed-in',
      scope: 'user',
      secret: true,
      response: { 200: HostedToken, 401: ErrorBody, 403: ErrorBody, 503: ErrorBody },
      detail: { summary: "A 10-minute ES256 token for the hosting vendor's services", tags: TAGS },
    })
    .get('/hosted-token/jwks.json', () => hosted.hostedTokenJwks(deps), {
      public: true,
      response: { 200: HostedTokenJwks, 503: ErrorBody },
      detail: { summary: 'The public key that verifies hosted tokens (JWKS)', tags: TAGS },
    })
