import YAML from 'yaml'
import { AppError, type FieldError } from '../errors'

/** How to reach a member cluster's API server: the kubeconfig fields docs/decisions.md §3 allows. */
export interface ClusterConnection {
  server: string
  /** PEM; '' = the system roots. */
  caData: string
  tlsServerName: string
  insecureSkipTlsVerify: boolean
  credential: ClusterCredential
  /** An agent cluster (docs/agents.md): reached through its agent's tunnel, never dialled. */
  agent?: AgentRoute
}

/** Which agent cluster a connection reaches through a tunnel, and how to say so when no agent is there. */
interface AgentRoute {
  clusterId: number
  /** `owner/name`, for messages. */
  name: string
}

export type ClusterCredential = { token: string } | { clientCertificate: string; clientKey: string }

/**
 * User fields refused: programs to run, files to read, basic auth, and impersonation (which would
 * be silently dropped, leaving the credential's full rights where the kubeconfig promised fewer).
 */
const FORBIDDEN_USER_FIELDS = [
  'exec',
  'auth-provider',
  'tokenFile',
  'client-certificate',
  'client-key',
  'username',
  'password',
  'as',
  'as-uid',
  'as-groups',
  'as-user-extra',
]
const FORBIDDEN_CLUSTER_FIELDS = ['certificate-authority', 'proxy-url']

const invalid = (field: string, message: string): never => {
  throw new AppError('invalid', `kubeconfig: ${message}`, [{ field, message }])
}

const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The `field` map of the entry named `name` in the kubeconfig list `list`; undefined when it is
 * missing. A list or entry of the wrong shape is `invalid`: uploads are untrusted text.
 */
function entry(config: Record<string, unknown>, list: string, name: unknown, field: string): Record<string, unknown> | undefined {
  const entries = config[list] ?? []
  if (!Array.isArray(entries)) return invalid(list, `${list} must be a list`)
  const found = entries.find((e) => isMap(e) && e.name === name) as Record<string, unknown> | undefined
  if (!found || found[field] === undefined || found[field] === null) return undefined
  if (!isMap(found[field])) return invalid(`${list}.${field}`, `${list}[].${field} must be a map`)
  return found[field]
}

const decodeBase64Pem = (field: string, value: unknown): string => {
  if (typeof value !== 'string' || value === '') return invalid(field, `${field} must be base64 data`)
  const text = Buffer.from(value, 'base64').toString('utf8')
  if (!text.includes('-----BEGIN')) invalid(field, `${field} is not base64 of a PEM block`)
  return text
}

/**
 * Reads a kubeconfig (YAML or JSON) and returns the connection of `contextName` (default: the
 * current context). Throws `invalid` naming the field for exec plugins, auth providers, file
 * paths, basic auth, or anything missing.
 */
export function connectionFromKubeconfig(text: string, contextName?: string): ClusterConnection {
  let doc: unknown
  try {
    doc = YAML.parse(text, { maxAliasCount: 10 })
  } catch {
    return invalid('kubeconfig', 'not valid YAML or JSON')
  }
  if (!doc || typeof doc !== 'object') return invalid('kubeconfig', 'expected a kubeconfig object')
  const config = doc as Record<string, unknown>
  const wanted = contextName ?? config['current-context']
  const context = entry(config, 'contexts', wanted, 'context')
  if (!context) return invalid('current-context', `context "${String(wanted ?? '')}" not found`)
  const cluster = entry(config, 'clusters', context.cluster, 'cluster')
  if (!cluster) return invalid('clusters', `cluster "${String(context.cluster)}" not found`)
  const user = entry(config, 'users', context.user, 'user') ?? {}
  for (const field of FORBIDDEN_CLUSTER_FIELDS)
    if (field in cluster) invalid(`clusters.${field}`, `${field} is not accepted; embed the data instead`)
  for (const field of FORBIDDEN_USER_FIELDS)
    if (field in user)
      invalid(`users.${field}`, `${field} is not accepted: only a bearer token or an embedded client certificate and key are read`)
  let credential: ClusterCredential
  if (typeof user.token === 'string' && user.token !== '') credential = { token: user.token }
  else if ('client-certificate-data' in user || 'client-key-data' in user)
    credential = {
      clientCertificate: decodeBase64Pem('users.client-certificate-data', user['client-certificate-data']),
      clientKey: decodeBase64Pem('users.client-key-data', user['client-key-data']),
    }
  else return invalid('users', 'the user needs a token or client-certificate-data and client-key-data')
  return checkConnection({
    server: String(cluster.server ?? ''),
    caData:
      'certificate-authority-data' in cluster
        ? decodeBase64Pem('clusters.certificate-authority-data', cluster['certificate-authority-data'])
        : '',
    tlsServerName: typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] : '',
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    credential,
  })
}

/** Throws `invalid` unless the server is an absolute http(s) URL and TLS settings agree. */
export function checkConnection(connection: ClusterConnection): ClusterConnection {
  const problems: FieldError[] = []
  let url: URL | undefined
  try {
    url = new URL(connection.server)
  } catch {
    /* reported below */
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || url.search || url.hash)
    problems.push({ field: 'server', message: 'must be an http(s) URL without credentials, query or fragment' })
  if (connection.insecureSkipTlsVerify && connection.caData)
    problems.push({ field: 'insecure-skip-tls-verify', message: 'cannot be combined with a certificate authority' })
  if (problems.length > 0) throw new AppError('invalid', `cluster connection: ${problems[0].field} ${problems[0].message}`, problems)
  return { ...connection, server: connection.server.replace(/\/+$/, '') }
}
