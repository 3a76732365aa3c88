import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { ErrorBody } from '../../http/schemas'
import type { StatusProbes } from '../probe'
import { ClusterParams, OwnerParams } from '../schemas'
import { openAgentTunnel } from './connect'
import { ConnectClusterAnswer, ConnectClusterOption } from './schemas'
import * as agents from './service'

const TAGS = ['cluster management v2']
const errors = { 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }

/** Agent clusters (docs/agents.md): connect one, fetch its agent's manifest, and the agents' own door. */
export const agentRoutes = (deps: Deps, probes: StatusProbes) =>
  // Mounted inside the registry's routes (prefix /api/v1), sharing its health probes.
  new Elysia({ name: 'clusters.agent.routes' })
    .use(guard(deps))
    .post(
      '/clustersv2/:owner/connect',
      async ({ me, params, body, status }) => status(201, await agents.connectCluster(deps, probes, me, params.owner, body)),
      {
        signedIn: 'signed-in',
        scope: 'cluster',
        secret: true,
        params: OwnerParams,
        body: ConnectClusterOption,
        response: { 201: ConnectClusterAnswer, ...errors, 409: ErrorBody, 422: ErrorBody },
        detail: {
          summary:
            'Register a cluster the platform cannot dial, reached through an agent that dials out; again for the same name: a new agent token (the old one is refused)',
          tags: TAGS,
        },
      },
    )
    .get(
      '/clustersv2/:owner/:cluster/agent.yaml',
      async ({ params, request, set }) => {
        const text = await agents.agentManifestFor(
          deps,
          params.owner,
          params.cluster,
          agents.bearerOf(request.headers.get('authorization')),
        )
        set.headers['content-type'] = 'text/yaml; charset=utf-8'
        return text
      },
      {
        public: true,
        secret: true,
        params: ClusterParams,
        response: {
          200: t.String({
            description: 'The agent manifest (YAML) for `kubectl apply -f`: namespace, service account, binding, token Secret, Deployment',
          }),
          401: ErrorBody,
        },
        detail: {
          summary:
            "The agent manifest of an agent cluster; the only credential it takes is the cluster's agent token (Authorization: Bearer)",
          tags: TAGS,
        },
      },
    )
    .get('/agent/connect', ({ request, server }) => openAgentTunnel(deps, request, server), {
      public: true,
      response: { 401: ErrorBody, 400: ErrorBody, 403: ErrorBody, 429: ErrorBody },
      detail: {
        summary:
          "A cluster agent's tunnel: a WebSocket upgrade with the agent token (Authorization: Bearer); the first frame is the agent's hello (docs/agents.md)",
        tags: TAGS,
      },
    })
