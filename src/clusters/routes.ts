import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { guard } from '../http/guard'
import { ErrorBody } from '../http/schemas'
import { agentRoutes } from './agent/routes'
import { statusProbes } from './probe'
import {
  ClusterInfo,
  ClusterListQuery,
  ClusterParams,
  ClusterTeam,
  ImportClusterOption,
  KubeconfigQuery,
  OwnerParams,
  PatchClusterOption,
  TeamClusterParams,
} from './schemas'
import * as clusters from './service'

const TAGS = ['cluster management v2']
const errors = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }

/** The cluster registry (docs/decisions.md §3a): import, list, read, change, remove, kubeconfig, team grants. */
export const clusterRoutes = (deps: Deps) => {
  // One cache of health probes per app: a dead cluster is asked at most every 30 s.
  const probes = statusProbes(deps)
  return new Elysia({ name: 'clusters.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .use(agentRoutes(deps, probes))
    .get('/user/clusters', ({ me, query }) => clusters.listMyClusters(deps, probes, me, query.all === 'true'), {
      signedIn: 'signed-in',
      scope: 'cluster',
      query: ClusterListQuery,
      response: { 200: t.Array(ClusterInfo), 401: ErrorBody, 403: ErrorBody },
      detail: {
        summary:
          'Clusters the caller owns (all=true: also those of organizations they own or administer, and those granted to their teams)',
        tags: TAGS,
      },
    })
    .post(
      '/clustersv2/:owner/import',
      async ({ me, params, body, status }) => status(201, await clusters.importCluster(deps, probes, me, params.owner, body)),
      {
        signedIn: 'signed-in',
        scope: 'cluster',
        params: OwnerParams,
        body: ImportClusterOption,
        response: { 201: ClusterInfo, ...errors, 409: ErrorBody, 422: ErrorBody },
        detail: {
          summary:
            'Register a cluster for a user or an organization you manage; the platform connects to it first (422 naming why it cannot)',
          tags: TAGS,
        },
      },
    )
    .get('/clustersv2/:owner', ({ me, params }) => clusters.listOwnerClusters(deps, probes, me, params.owner), {
      signedIn: 'signed-in',
      scope: 'cluster',
      params: OwnerParams,
      response: { 200: t.Array(ClusterInfo), ...errors },
      detail: { summary: "The owner's clusters you may use", tags: TAGS },
    })
    .get('/clustersv2/:owner/:cluster', ({ cluster }) => clusters.getCluster(deps, probes, cluster), {
      inCluster: 'read',
      params: ClusterParams,
      response: { 200: ClusterInfo, ...errors },
      detail: { summary: 'One cluster (404 for anyone who may not use it)', tags: TAGS },
    })
    .patch('/clustersv2/:owner/:cluster', ({ cluster, body }) => clusters.patchCluster(deps, probes, cluster, body), {
      inCluster: 'manage',
      params: ClusterParams,
      body: PatchClusterOption,
      response: { 200: ClusterInfo, ...errors, 409: ErrorBody, 422: ErrorBody },
      detail: {
        summary: 'Rename the display name, switch impersonation, or rotate credentials (re-checked against the cluster)',
        tags: TAGS,
      },
    })
    .delete(
      '/clustersv2/:owner/:cluster',
      async ({ cluster, status }) => {
        await clusters.removeCluster(deps, probes, cluster)
        return status(204, undefined)
      },
      {
        inCluster: 'manage',
        params: ClusterParams,
        response: { 204: t.Void(), ...errors },
        detail: { summary: 'Forget the cluster and its stored credentials (nothing is done to the cluster)', tags: TAGS },
      },
    )
    .get(
      '/clustersv2/:owner/:cluster/kubeconfig',
      async ({ me, cluster, query, set }) => {
        const text = await clusters.kubeconfigFor(deps, me, cluster, query.readonly === 'true')
        set.headers['content-type'] = 'text/yaml; charset=utf-8'
        return text
      },
      {
        inCluster: 'read',
        secret: true,
        params: ClusterParams,
        query: KubeconfigQuery,
        response: {
          200: t.String({ description: 'A kubeconfig (YAML) for the native passthrough, with a new access token shown only here' }),
          ...errors,
        },
        detail: { summary: 'Download a kubeconfig that reaches the cluster through the platform (creates an access token)', tags: TAGS },
      },
    )
    .get('/clustersv2/:owner/:cluster/teams', ({ cluster }) => clusters.listClusterTeams(deps, cluster), {
      inCluster: 'read',
      params: ClusterParams,
      response: { 200: t.Array(ClusterTeam), ...errors },
      detail: {
        summary: "The teams of the owning organization granted the cluster, by name (anyone who may use the cluster; [] for a user's)",
        tags: TAGS,
      },
    })
    .get('/teams/:teamId/clusters', ({ scope }) => clusters.listTeamClusters(deps, probes, scope), {
      inOrg: 'admin:org',
      scope: 'organization',
      params: t.Object({ teamId: t.String({ description: 'Team id' }) }),
      response: { 200: t.Array(ClusterInfo), ...errors },
      detail: { summary: 'Clusters granted to the team', tags: TAGS },
    })
    .put(
      '/teams/:teamId/clusters/:cluster',
      async ({ scope, params, status }) => {
        await clusters.grantTeamCluster(deps, scope, params.cluster)
        return status(204, undefined)
      },
      {
        inOrg: 'admin:org',
        scope: 'organization',
        params: TeamClusterParams,
        response: { 204: t.Void(), ...errors },
        detail: {
          summary:
            'Grant a cluster of the organization to the team (read teams: get/list/watch, logs, metrics; write and above: every verb)',
          tags: TAGS,
        },
      },
    )
    .delete(
      '/teams/:teamId/clusters/:cluster',
      async ({ scope, params, status }) => {
        await clusters.revokeTeamCluster(deps, scope, params.cluster)
        return status(204, undefined)
      },
      {
        inOrg: 'admin:org',
        scope: 'organization',
        params: TeamClusterParams,
        response: { 204: t.Void(), ...errors },
        detail: { summary: 'Take a cluster away from the team', tags: TAGS },
      },
    )
}
