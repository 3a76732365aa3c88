import { readFileSync } from 'node:fs'
import { runAgent } from '../agent/run'
import { inClusterTarget, TargetError, targetFromKubeconfig } from '../agent/target'
import { rfc3339 } from '../clock'
import type { ClusterConnection } from '../clusters/connection'
import { agentEnvironment } from '../config'
import { buildInfo } from '../system/service'
import { type Command, PROGRAM, parse, UsageError } from './command'

export const agent: Command = {
  summary: 'connect a cluster the platform cannot dial: run beside it or in it, dial out (docs/agents.md)',
  usage: `Usage: ${PROGRAM} agent --server URL [--token T] [--kubeconfig FILE [--context C]] [--ca-file FILE]

Keeps a tunnel open from this cluster to the platform, which reaches the cluster's API server through
it. The token comes from "connect" (POST /api/v1/clustersv2/{owner}/connect), here or in
PLATFORM_AGENT_TOKEN. Without --kubeconfig it uses the pod's service account (in a cluster).
  --server URL       the platform's public URL
  --token T          the cluster's agent token (or PLATFORM_AGENT_TOKEN: a token on the command line shows in ps)
  --kubeconfig FILE  the API server and credential of FILE's context (beside the cluster)
  --context C        that context instead of the current one
  --ca-file FILE     the CA the platform's certificate chains to (a platform with its own CA)
It dials the platform and its own API server, nothing else, and reconnects after a loss.`,
  async run(args) {
    const values = parse(args, {
      server: { type: 'string' },
      token: { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      'ca-file': { type: 'string' },
    })
    const env = agentEnvironment()
    const platform = values.server
    if (!platform || !/^https?:\/\/[^/]/.test(platform))
      throw new UsageError('--server must be the platform URL, e.g. https://platform.example.com')
    const token = values.token ?? env.token
    if (!token) throw new UsageError('the agent token is missing: give --token or set PLATFORM_AGENT_TOKEN')
    if (values.context !== undefined && values.kubeconfig === undefined) throw new UsageError('--context goes with --kubeconfig')
    const platformCa = values['ca-file'] === undefined ? undefined : readCa(values['ca-file'])
    const target = (): ClusterConnection =>
      values.kubeconfig === undefined ? inClusterTarget(env.inCluster) : targetFromKubeconfig(values.kubeconfig, values.context)
    // Refused at once when it cannot work at all: no API server to serve, or one without TLS.
    const first = checkedTarget(target)
    const stop = new AbortController()
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop.abort())
    log('agent starting', { platform, server: first.server })
    await runAgent({ platform, token, platformCa, target, version: buildInfo({}).version, log, signal: stop.signal })
    return 0
  },
}

function checkedTarget(target: () => ClusterConnection): ClusterConnection {
  try {
    const first = target()
    if (!first.server.startsWith('https://'))
      throw new UsageError(`the API server ${first.server} is not https: the platform reaches API servers over TLS only`)
    return first
  } catch (error) {
    if (error instanceof TargetError) throw new UsageError(error.message)
    throw error
  }
}

function readCa(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new UsageError(`cannot read --ca-file ${path}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`)
  }
}

/** One JSON line per event on stderr (never a token: none is passed here). */
function log(event: string, fields: Record<string, unknown> = {}): void {
  console.error(JSON.stringify({ time: rfc3339(Date.now()), level: 'info', event, ...fields }))
}
