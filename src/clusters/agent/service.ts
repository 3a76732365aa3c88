import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Value } from '@sinclair/typebox/value'
import type { Actor } from '../../authz/actor'
import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import { sha256Hex } from '../../identity/tokens/secrets'
import { tlsNameOf } from '../../net/egress'
import { checkConnection } from '../connection'
import type { StatusProbes } from '../probe'
import { describeCluster, ownerOfNewCluster } from '../service'
import * as clusterStore from '../store'
import { StoreMessages } from '../store'
import { agentManifest } from './manifest'
import { AgentHello, type ConnectClusterAnswer, type ConnectClusterOption } from './schemas'
import { agentTunnels, PENDING_UID_PREFIX } from './tunnels'

export const AgentServiceMessages = {
  importedCluster: 'that cluster was imported (the platform dials it): an imported cluster cannot be connected through an agent',
  badToken: 'the agent token is not valid (it may have been replaced by a later connect)',
  badHello: (why: string) => `the agent's hello is not valid: ${why}`,
  otherCluster:
    "the agent reached another cluster than this one's (its kube-system uid differs): an agent token belongs to one cluster; connect the other cluster as a new one",
  uidTaken: 'the owner already registered this cluster (same kube-system uid) under another name',
} as const

/** `agt_` and 48 hex characters: told apart from access tokens at a glance (and in secret scanners). */
const newAgentToken = () => `agt_${randomBytes(24).toString('hex')}`
const AGENT_TOKEN = /^agt_[0-9a-f]{48}$/

const pendingUid = () => `${PENDING_UID_PREFIX}${randomBytes(12).toString('hex')}`

/**
 * Registers an agent cluster for an owner the caller manages, or rotates the agent token of the
 * owner's agent cluster of that name (agents holding the old token are cut off). Throws notFound
 * (owner), invalid (name), conflict (an imported cluster of that name).
 */
export async function connectCluster(
  deps: Deps,
  probes: StatusProbes,
  actor: Actor,
  ownerName: string,
  input: ConnectClusterOption,
): Promise<ConnectClusterAnswer> {
  const owner = await ownerOfNewCluster(deps, actor, ownerName, input.name)
  const token = newAgentToken()
  const tokenHash = sha256Hex(token)
  const existing = await clusterStore.findClusterOfOwner(deps.db.read, owner.id, input.name)
  if (existing && existing.agentTokenHash === null)
    throw new AppError('conflict', AgentServiceMessages.importedCluster, [{ field: 'name', message: 'is an imported cluster' }])
  const row = await deps.db.write(async (tx) =>
    existing
      ? clusterStore.updateCluster(tx, existing.id, {
          agentTokenHash: tokenHash,
          ...(input.displayName !== undefined ? { displayName: input.displayName } : {}),
          ...(input.impersonate !== undefined ? { impersonate: input.impersonate } : {}),
        })
      : clusterStore.insertCluster(tx, {
          uid: pendingUid(),
          ownerId: owner.id,
          name: input.name,
          lowerName: input.name.toLowerCase(),
          displayName: input.displayName ?? '',
          impersonate: input.impersonate ?? false,
          provider: 'Agent',
          server: '',
          sealedCredential: await deps.secrets.seal('{}'),
          agentTokenHash: tokenHash,
        }),
  )
  if (!row) throw new AppError('conflict', StoreMessages.nameTaken)
  if (existing) agentTunnels(deps).disconnect(existing.id, 'the agent token was replaced')
  const publicUrl = deps.config.publicUrl
  return {
    cluster: await describeCluster(deps, probes, { ...row, ownerName: owner.name }),
    token,
    command: `platform-api agent --server ${publicUrl} --token ${token}${platformCaPem(deps) ? ' --ca-file platform-ca.crt' : ''}`,
    manifestUrl: `${publicUrl}/api/v1/clustersv2/${encodeURIComponent(owner.name)}/${encodeURIComponent(row.name)}/agent.yaml`,
  }
}

/** The agent cluster `token` belongs to; undefined for anything else (a rotated token, an access token). */
export async function clusterOfAgentToken(deps: Deps, token: string): Promise<clusterStore.ClusterWithOwner | undefined> {
  if (!AGENT_TOKEN.test(token)) return undefined
  return clusterStore.findClusterByAgentToken(deps.db.read, sha256Hex(token))
}

/** The bearer token of an Authorization header ('' when there is none). */
export const bearerOf = (header: string | null): string => /^bearer\s+(\S+)$/i.exec(header ?? '')?.[1] ?? ''

/**
 * The manifest that installs the agent of the cluster `token` belongs to, which must be the
 * cluster the path names. Throws unauthenticated.
 */
export async function agentManifestFor(deps: Deps, ownerName: string, clusterName: string, token: string): Promise<string> {
  const cluster = await clusterOfAgentToken(deps, token)
  if (!cluster || cluster.ownerName.toLowerCase() !== ownerName.toLowerCase() || cluster.lowerName !== clusterName.toLowerCase())
    throw new AppError('unauthenticated', AgentServiceMessages.badToken)
  return agentManifest({ publicUrl: deps.config.publicUrl, token, image: deps.config.agentImage, caPem: platformCaPem(deps) })
}

/** The CA agents must trust when the platform serves TLS itself with its own CA. */
function platformCaPem(deps: Deps): string | undefined {
  const tls = deps.config.tls
  return tls?.caFile ? readFileSync(tls.caFile, 'utf8') : undefined
}

/**
 * Accepts an agent's hello for `cluster`: on the first one the cluster takes the reported uid; on
 * every one the connection the agent reports (server, CA, credential) is stored sealed, as an
 * import's is. Throws invalid (a hello that is no such object, an http server), forbidden (another
 * cluster's uid), conflict (the owner registered that cluster already).
 */
export async function acceptHello(deps: Deps, cluster: clusterStore.ClusterRow, text: string): Promise<AgentHello> {
  const hello = parseHello(text)
  if (!cluster.uid.startsWith(PENDING_UID_PREFIX) && cluster.uid !== hello.uid)
    throw new AppError('forbidden', AgentServiceMessages.otherCluster)
  const server = new URL(hello.server)
  const connection = checkConnection({
    server: hello.server,
    caData: hello.caData,
    // Reached through a relay on loopback, an API server named by an address other than loopback
    // is checked by the name every API server certificate carries.
    tlsServerName: hello.tlsServerName || (tlsNameOf(server) || server.hostname === '127.0.0.1' ? '' : 'kubernetes.default.svc'),
    insecureSkipTlsVerify: false,
    credential: hello.credential,
  })
  await deps.db
    .write(async (tx) =>
      clusterStore.updateCluster(tx, cluster.id, {
        uid: hello.uid,
        server: connection.server,
        caData: connection.caData,
        tlsServerName: connection.tlsServerName,
        sealedCredential: await deps.secrets.seal(JSON.stringify(connection.credential)),
        vendor: hello.kubernetesVersion.includes('k3s') ? 'k3s' : cluster.vendor,
      }),
    )
    .catch((error: unknown) => {
      throw error instanceof AppError && error.kind === 'conflict' ? new AppError('conflict', AgentServiceMessages.uidTaken) : error
    })
  return hello
}

function parseHello(text: string): AgentHello {
  let hello: unknown
  try {
    hello = JSON.parse(text)
  } catch {
    throw new AppError('invalid', AgentServiceMessages.badHello('not JSON'))
  }
  if (!Value.Check(AgentHello, hello)) {
    const first = Value.Errors(AgentHello, hello).First()
    throw new AppError('invalid', AgentServiceMessages.badHello(first ? `${first.path || '/'} ${first.message}` : 'wrong shape'))
  }
  if (!hello.server.startsWith('https://'))
    throw new AppError('invalid', AgentServiceMessages.badHello('the API server must be reached over https'))
  return hello
}
