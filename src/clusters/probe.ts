import { rfc3339 } from '../clock'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import type { ClusterConnection } from './connection'
import { describeMemberCertificate, type Member, memberJson } from './member/client'
import { isTlsFailure } from './member/failures'

/** What a cluster says about itself when it is registered. */
export interface ClusterIdentity {
  kubernetesVersion: string
  nodeCount: number
  /** The kube-system namespace's uid: the cluster's identity. */
  uid: string
}

/** Refusals of the cluster's own, in words a person can act on. */
const STATUS_REASONS: Record<number, string> = {
  401: 'refused the credential (401 Unauthorized): check the token or the client certificate',
  403: 'accepted the credential but it may not read {path} (403 Forbidden): grant it at least read access to namespaces, nodes and /version',
}

const getJson = <T>(deps: Deps, member: Member, path: string, timeoutMs: number) =>
  memberJson<T>(deps, member, path, { timeoutMs, refusals: STATUS_REASONS })

interface NodeList {
  items?: unknown[]
  metadata?: { remainingItemCount?: number; continue?: string }
}

/**
 * Counts nodes without fetching them all: a one-item page carries `remainingItemCount`. A
 * server that leaves it out while more pages follow is asked for the whole list.
 */
async function countNodes(deps: Deps, member: Member, timeoutMs: number): Promise<number> {
  const page = await getJson<NodeList>(deps, member, '/api/v1/nodes?limit=1', timeoutMs)
  const shown = page.items?.length ?? 0
  if (page.metadata?.remainingItemCount !== undefined) return shown + page.metadata.remainingItemCount
  if (!page.metadata?.continue) return shown
  return (await getJson<NodeList>(deps, member, '/api/v1/nodes', timeoutMs)).items?.length ?? 0
}

/** Version and node count, in parallel. Throws upstream naming the cause. */
async function readVersionAndNodes(deps: Deps, member: Member, timeoutMs: number): Promise<Omit<ClusterIdentity, 'uid'>> {
  const [version, nodeCount] = await Promise.all([
    getJson<{ gitVersion?: string }>(deps, member, '/version', timeoutMs),
    countNodes(deps, member, timeoutMs),
  ])
  return { kubernetesVersion: version.gitVersion ?? '', nodeCount }
}

/**
 * Connects as registration does: /version, the node count and the kube-system namespace's uid.
 * Throws invalid (422) with the reason a person can act on — DNS, refused, the TLS certificate
 * (with its subject and issuer), 401/403 from the cluster, no answer in time.
 */
export async function inspectCluster(deps: Deps, member: Member, timeoutMs: number): Promise<ClusterIdentity> {
  try {
    const [facts, kubeSystem] = await Promise.all([
      readVersionAndNodes(deps, member, timeoutMs),
      getJson<{ metadata?: { uid?: string } }>(deps, member, '/api/v1/namespaces/kube-system', timeoutMs),
    ])
    const uid = kubeSystem.metadata?.uid
    if (!uid) throw new AppError('upstream', `cluster "${member.name}" has no kube-system namespace uid`)
    return { ...facts, uid }
  } catch (error) {
    if (!(error instanceof AppError) || error.kind !== 'upstream') throw error
    const certificate = isTlsFailure(error) ? await describeMemberCertificate(deps, member.connection) : ''
    throw new AppError('invalid', `cannot register: ${error.message}${certificate}`, [{ field: 'server', message: error.message }])
  }
}

interface ClusterStatus {
  phase: 'Active' | 'NotReady' | 'Unknown'
  message?: string
  lastProbeTime: string
}

export interface ProbeResult {
  status: ClusterStatus
  kubernetesVersion: string
  nodeCount: number
}

const PROBE_TTL_MS = 30_000
const PROBE_TIMEOUT_MS = 2_000
/** How long an answer waits for a probe it started; a live API server answers well within it. */
const ANSWER_WAIT_MS = 1_000

/**
 * Health probes of member clusters (2 s timeout), cached for 30 s: an answer waits at most 1 s for
 * the probes it starts and says `Unknown` for one still running, which fills the cache when it
 * ends. One dead cluster costs a list at most a second once, and nothing within the next 30 s.
 */
export function statusProbes(deps: Deps) {
  const now = () => deps.clock.now()
  const cache = new Map<number, { at: number; epoch: string; result: ProbeResult }>()
  const running = new Map<number, Promise<ProbeResult>>()

  const probe = async (id: number, name: string, connect: () => Promise<ClusterConnection>, epoch: string): Promise<ProbeResult> => {
    const lastProbeTime = rfc3339(now())
    let result: ProbeResult
    try {
      const facts = await readVersionAndNodes(deps, { name, connection: await connect() }, PROBE_TIMEOUT_MS)
      result = { ...facts, status: { phase: 'Active', lastProbeTime } }
    } catch (error) {
      const message = error instanceof AppError ? error.message : 'the cluster could not be asked'
      result = { kubernetesVersion: '', nodeCount: 0, status: { phase: 'NotReady', message, lastProbeTime } }
    }
    cache.set(id, { at: now(), epoch, result })
    running.delete(id)
    return result
  }

  return {
    /**
     * The cluster's cached status, or a fresh probe's (waiting at most the probe timeout). A
     * cached status taken in another `epoch` (an agent cluster's agent connected since) is stale.
     */
    async statusOf(id: number, name: string, connect: () => Promise<ClusterConnection>, epoch = ''): Promise<ProbeResult> {
      const cached = cache.get(id)
      if (cached && cached.epoch === epoch && now() - cached.at < PROBE_TTL_MS) return cached.result
      let pending = running.get(id)
      if (!pending) {
        pending = probe(id, name, connect, epoch)
        running.set(id, pending)
      }
      let timer: ReturnType<typeof setTimeout> | undefined
      const unknown = new Promise<ProbeResult>((resolve) => {
        timer = setTimeout(
          () =>
            resolve({
              kubernetesVersion: cached?.result.kubernetesVersion ?? '',
              nodeCount: cached?.result.nodeCount ?? 0,
              status: {
                phase: 'Unknown',
                message: 'the health probe has not finished',
                lastProbeTime: cached?.result.status.lastProbeTime ?? '',
              },
            }),
          ANSWER_WAIT_MS,
        )
      })
      try {
        return await Promise.race([pending, unknown])
      } finally {
        clearTimeout(timer)
      }
    },
    /** Drops a cluster's cached status (its connection changed or it was removed). */
    forget(id: number): void {
      cache.delete(id)
    },
  }
}

export type StatusProbes = ReturnType<typeof statusProbes>
