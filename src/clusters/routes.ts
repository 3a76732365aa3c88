import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { guard } from '../http/guard'
import { ErrorBody } from '../http/schemas'
import { ClusterInfo, ClusterListQuery } from './schemas'
import { listClusters } from './service'

export const clusterRoutes = (deps: Deps) =>
  new Elysia({ name: 'clusters.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .get('/user/clusters', ({ me, query }) => listClusters(deps, me.user, query.all === 'true'), {
      permission: 'signed-in',
      scope: 'cluster',
      query: ClusterListQuery,
      response: { 200: t.Array(ClusterInfo), 401: ErrorBody, 403: ErrorBody },
      detail: { summary: 'List clusters the caller owns (all=true: also those of organizations they own or administer)', tags: ['cluster management v2'] },
    })
