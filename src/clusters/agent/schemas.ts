import { t } from 'elysia'
import { ClusterInfo } from '../schemas'

export const ConnectClusterOption = t.Object(
  {
    name: t.String({ maxLength: 40, description: 'Cluster name, unique per owner; the {cluster} of proxy paths' }),
    displayName: t.Optional(t.String({ maxLength: 100, description: 'Name shown to people' })),
    impersonate: t.Optional(t.Boolean({ description: 'Send Impersonate-User/Group of the caller with every proxied request' })),
  },
  {
    title: 'ConnectClusterOption',
    description: 'An agent cluster: the platform cannot dial its API server, an agent beside it dials out (docs/agents.md)',
  },
)
export type ConnectClusterOption = typeof ConnectClusterOption.static

export const ConnectClusterAnswer = t.Object(
  {
    cluster: ClusterInfo,
    token: t.String({ description: "The cluster's agent token, shown only here; calling connect again replaces it" }),
    command: t.String({ description: 'The command line that runs the agent beside the cluster (with --kubeconfig) or on it' }),
    manifestUrl: t.String({ description: 'Where `kubectl apply -f` fetches the agent manifest (Authorization: Bearer <token>)' }),
  },
  { title: 'ConnectClusterAnswer' },
)
export type ConnectClusterAnswer = typeof ConnectClusterAnswer.static

const pemText = (description: string) => t.String({ maxLength: 65536, description })

/** What an agent says first on its tunnel (docs/agents.md, "The hello"): the cluster's facts and the credential the platform uses there. */
export const AgentHello = t.Object(
  {
    agentVersion: t.String({ maxLength: 100 }),
    uid: t.String({ minLength: 1, maxLength: 128, description: "The cluster's kube-system namespace uid" }),
    kubernetesVersion: t.String({ maxLength: 100 }),
    nodeCount: t.Integer({ minimum: 0, maximum: 1_000_000 }),
    server: t.String({ minLength: 1, maxLength: 2048, description: "The API server's URL as the agent reaches it (https)" }),
    caData: pemText("PEM of the API server's certificate authority; '' for the system roots"),
    tlsServerName: t.String({ maxLength: 253 }),
    credential: t.Union([
      t.Object({ token: t.String({ minLength: 1, maxLength: 16384 }) }, { additionalProperties: false }),
      t.Object({ clientCertificate: pemText('PEM'), clientKey: pemText('PEM') }, { additionalProperties: false }),
    ]),
  },
  { additionalProperties: false },
)
export type AgentHello = typeof AgentHello.static
