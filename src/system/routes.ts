import { Elysia } from 'elysia'
import type { Deps } from '../deps'
import { guard } from '../http/guard'
import { ErrorBody } from '../http/schemas'
import { Health, Readiness, ServerVersion } from './schemas'
import { buildInfo, readinessProbe } from './service'

export const systemRoutes = (deps: Deps) => {
  const isReady = readinessProbe(deps.db, deps.log)
  return new Elysia({ name: 'system.routes' })
    .use(guard(deps))
    .get('/api/v1/version', () => buildInfo(deps.config), {
      signedIn: 'signed-in',
      response: { 200: ServerVersion, 401: ErrorBody },
      detail: { summary: 'Version of the running build', tags: ['miscellaneous'] },
    })
    .get('/healthz', () => ({ status: 'ok' as const }), {
      public: true,
      response: { 200: Health },
      detail: { summary: 'Liveness: the process answers', tags: ['miscellaneous'] },
    })
    .get(
      '/readyz',
      async ({ status }) => ((await isReady()) ? { status: 'ok' as const } : status(503, { status: 'unavailable' as const })),
      {
        public: true,
        response: { 200: Readiness, 503: Readiness },
        detail: { summary: 'Readiness: the database answers', tags: ['miscellaneous'] },
      },
    )
}
