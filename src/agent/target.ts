import { readFileSync } from 'node:fs'
import { type ClusterConnection, connectionFromKubeconfig } from '../clusters/connection'

/**
 * The one API server an agent serves (docs/agents.md, "The agent"): from a kubeconfig beside the
 * cluster, or the pod's service account inside it. The agent dials this address and no other.
 */

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount'

export class TargetError extends Error {}

/** What the agent reads of its environment to find the API server in a pod. */
export interface InClusterEnvironment {
  KUBERNETES_SERVICE_HOST?: string
  KUBERNETES_SERVICE_PORT?: string
}

/** The API server of a kubeconfig's context (the current one by default). Throws TargetError. */
export function targetFromKubeconfig(path: string, context?: string): ClusterConnection {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new TargetError(`cannot read the kubeconfig ${path}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`)
  }
  try {
    return connectionFromKubeconfig(text, context)
  } catch (error) {
    throw new TargetError(`the kubeconfig ${path} cannot be used: ${(error as Error).message}`)
  }
}

/**
 * The API server as a pod sees it: KUBERNETES_SERVICE_HOST/_PORT, and the service account's token
 * and CA. The token is read again on each connection (the kubelet rotates it). Throws TargetError.
 */
export function inClusterTarget(env: InClusterEnvironment, dir = SERVICE_ACCOUNT_DIR): ClusterConnection {
  const host = env.KUBERNETES_SERVICE_HOST
  const port = env.KUBERNETES_SERVICE_PORT ?? '443'
  if (!host) throw new TargetError('not in a pod (KUBERNETES_SERVICE_HOST is not set): run the agent with --kubeconfig beside the cluster')
  const read = (name: string) => {
    try {
      return readFileSync(`${dir}/${name}`, 'utf8').trim()
    } catch {
      throw new TargetError(`cannot read the service account's ${name} under ${dir} (is automountServiceAccountToken off?)`)
    }
  }
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    caData: `${read('ca.crt')}\n`,
    tlsServerName: '',
    insecureSkipTlsVerify: false,
    credential: { token: read('token') },
  }
}
