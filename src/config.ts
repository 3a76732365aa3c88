import { existsSync } from 'node:fs'
import { isIP } from 'node:net'
import { availableParallelism, homedir } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import ipaddr from 'ipaddr.js'
import packageJson from '../package.json'
import { buildStamp } from './assets'

/** Deployment modes register or omit whole route groups (docs/decisions.md §1). */
type DeploymentMode = 'hosted' | 'marketplace' | 'billing'
type RunMode = 'dev' | 'prod'

interface AdminSeed {
  username: string
  /** Undefined: generate one and print it once on first start. */
  password: string | undefined
  email: string
}

export interface Config {
  port: number
  host: string
  dataDir: string
  databaseUrl: string
  /** Auth token of a remote libSQL server. */
  databaseAuthToken: string | undefined
  /** The driver for a `file:` URL: bun:sqlite (default) or libSQL (the remote driver, on a local file). */
  databaseDriver: 'bun:sqlite' | 'libsql' | undefined
  /** Hex or base64 32-byte key; undefined: generated into the data dir on first start. */
  secretKey: string | undefined
  publicUrl: string
  admin: AdminSeed
  modes: ReadonlySet<DeploymentMode>
  runMode: RunMode
  sandboxCluster: boolean
  /** The web console's pages (docs/decisions.md §11); false: those paths are 404 and the API is unchanged. */
  console: boolean
  msgbusUrls: string[]
  /** Lifetime of issued message-bus credentials, seconds (docs/decisions.md §6a: 24 h). */
  msgbusCredentialTtlSeconds: number
  /** PEM PKCS#8 EC P-256 key signing hosted tokens; undefined: the route answers 503. */
  hostedTokenKey: string | undefined
  chromiumPath: string
  helmPath: string
  /** `helmPath` is where the Helm the binary carries is unpacked on first use (HELM_PATH unset, a built binary). */
  helmBundled: boolean
  kubectlPath: string
  /** Largest accepted request body, in bytes. */
  maxBodyBytes: number
  /** Seconds a JSON request body may take to arrive in full (408 after). */
  bodyTimeoutSeconds: number
  /** Seconds an in-flight request may take to finish after SIGTERM. */
  shutdownGraceSeconds: number
  /** Processes `serve` runs on one port (docs/decisions.md §9); 1: this process serves. */
  workers: number
  /** Set by `serve --workers` in the processes it starts: this one is worker N and shares the port. */
  workerId: number | undefined
  /** Regular users may create organizations (site admins always may). */
  allowRegularOrgCreation: boolean
  /** User-given endpoints (cloud, clusters, discovery, avatars) may be loopback or private addresses; metadata addresses never. */
  allowPrivateEndpoints: boolean
  /**
   * The address this process's peer listener binds and other processes dial to use the agent
   * tunnels it holds (docs/agents.md): loopback for `--workers` on one machine, an address the
   * other machines reach when several share one database.
   */
  peerHost: string
  /** Bytes of member-cluster answers the process may hold while reading them; one caller a quarter of it (clusters/member). */
  memberBufferBytes: number
  /** Page size asked of cloud providers when listing buckets (every page is followed). */
  bucketListPageSize: number
  /** Google Cloud Storage JSON API origin; an emulator's (fake-gcs-server) in labs. */
  gcsEndpoint: string
  /**
   * Serve HTTPS with this certificate and key (PEM files); undefined: plain HTTP (behind a TLS
   * proxy). `generated`: files `serve` makes once in the data dir, a CA of its own and a
   * certificate it signed (docs/decisions.md §12).
   */
  tls: { certFile: string; keyFile: string; caFile: string | undefined; generated: boolean } | undefined
  /** Reverse proxies whose `X-Forwarded-For` names the real client (the sign-in limiter's key). */
  trustedProxies: readonly Cidr[]
  /** Usage PDFs: renders at once in the one warm Chromium, and how many more may wait (503 beyond). */
  pdfRenders: { concurrency: number; queue: number }
  /** Write one JSON line per request to stdout. */
  requestLog: boolean
  /** Bearer token that may read GET /metrics; undefined: no metrics are kept and the route is 404 (docs/decisions.md §9). */
  metricsToken: string | undefined
  /** Audit events older than this many days are pruned (docs/decisions.md §8). */
  auditRetentionDays: number
  /** Where each audit event also goes as one JSON line: '-' stdout, a file path, or '' (nowhere). */
  auditLog: string
  /** The image the cluster agent's manifest runs (docs/agents.md, "The agent image"). */
  agentImage: string
  /** Deployment orders (docs/decisions.md §4, §4a, §7): chart sources seeded at start, private registries, Helm limits. */
  orders: OrdersConfig
  /** Stamped by a build: the source commit and build time. */
  buildCommit: string | undefined
  buildDate: string | undefined
}

export class ConfigError extends Error {}

/** A chart source as PLATFORM_CHART_SOURCES gives it (docs/decisions.md §4a). */
export interface ChartSourceSeed {
  name: string
  url: string
  username?: string
  password?: string
  caData?: string
  insecureSkipTLSVerify?: boolean
}

interface OrdersConfig {
  chartSources: ChartSourceSeed[]
  /** Loopback and private chart sources are allowed (tests, labs); metadata addresses never. */
  allowPrivateRegistries: boolean
  /** `--kube-version` of every render. */
  kubeVersion: string
  helmTimeoutMs: number
  helmMemoryBytes: number
  chartFetchTimeoutMs: number
  /** Memory for parsed charts; renders get a quarter of it besides, parsed values files an eighth. */
  chartCacheBytes: number
}

const MODES: readonly DeploymentMode[] = ['hosted', 'marketplace', 'billing']
/**
 * The agent image when PLATFORM_AGENT_IMAGE is unset: this version's name on GitHub's registry. Operators
 * build and push their own from the repository's Dockerfile (docs/agents.md, "The agent image").
 */
const DEFAULT_AGENT_IMAGE = `ghcr.io/platform-api/platform-api:${packageJson.version}`
const projectRoot = resolve(import.meta.dir, '..')

/** The Helm the binary carries, unpacked into the data dir under its digest; from a checkout, the one npm install extracted. */
function defaultHelmPath(dataDir: string): string {
  const digest = buildStamp?.helmSha256
  return digest ? join(dataDir, 'tools', `helm-${digest.slice(0, 16)}`) : join(projectRoot, '.tools', 'bin', 'helm')
}

/** Flags of `serve` that override the environment. */
export interface ServeFlags {
  port?: string
  host?: string
  dataDir?: string
  dev?: boolean
  workers?: string
}

/**
 * Builds the one typed Config from the environment (and `serve` flags). This is the only
 * module that reads process.env. Throws ConfigError with a message naming the bad variable.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, flags: ServeFlags = {}): Config {
  const port = parsePort(flags.port ?? env.PORT ?? '3000', flags.port !== undefined ? '--port' : 'PORT')
  const host = flags.host ?? env.HOST ?? '0.0.0.0'
  const dataDir = resolve(flags.dataDir ?? env.PLATFORM_DATA_DIR ?? './data')
  const databaseUrl = env.DATABASE_URL ?? `file:${join(dataDir, 'platform.db')}`
  if (!/^(file:|libsql:\/\/|https?:\/\/|wss?:\/\/)/.test(databaseUrl))
    throw new ConfigError(`DATABASE_URL must start with file:, libsql://, http(s):// or ws(s)://, got "${databaseUrl}"`)
  const certFile = env.PLATFORM_TLS_CERT_FILE || undefined
  const keyFile = env.PLATFORM_TLS_KEY_FILE || undefined
  if ((certFile === undefined) !== (keyFile === undefined))
    throw new ConfigError('PLATFORM_TLS_CERT_FILE and PLATFORM_TLS_KEY_FILE go together: set both or neither')
  const tlsSetting = env.PLATFORM_TLS ?? ''
  if (tlsSetting !== '' && tlsSetting !== 'off') throw new ConfigError(`PLATFORM_TLS takes only "off", got "${tlsSetting}"`)
  const tls =
    certFile && keyFile
      ? { certFile, keyFile, caFile: env.PLATFORM_TLS_CA_FILE || undefined, generated: false }
      : env.PLATFORM_PUBLIC_URL === undefined && tlsSetting !== 'off'
        ? { ...generatedTlsFiles(dataDir), generated: true }
        : undefined
  const publicUrl = (env.PLATFORM_PUBLIC_URL ?? `${tls ? 'https' : 'http'}://localhost:${port}`).replace(/\/+$/, '')
  if (!isHttpUrl(publicUrl)) throw new ConfigError(`PLATFORM_PUBLIC_URL must be an http(s) URL, got "${publicUrl}"`)
  const secretKey = env.PLATFORM_SECRET_KEY
  if (secretKey !== undefined && decodeKey(secretKey) === undefined)
    throw new ConfigError('PLATFORM_SECRET_KEY must be 32 bytes, as 64 hex characters or base64')
  const gcsEndpoint = (env.PLATFORM_GCS_ENDPOINT ?? 'https://storage.googleapis.com').replace(/\/+$/, '')
  if (!isHttpUrl(gcsEndpoint)) throw new ConfigError(`PLATFORM_GCS_ENDPOINT must be an http(s) URL, got "${gcsEndpoint}"`)
  const msgbusUrls = (env.MSGBUS_URLS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const badMsgbusUrl = msgbusUrls.find((url) => !/^(nats|tls|wss?):\/\/[^\s/]+/.test(url))
  if (badMsgbusUrl !== undefined)
    throw new ConfigError(`MSGBUS_URLS takes comma-separated nats://, tls:// or ws(s):// URLs, got "${badMsgbusUrl}"`)
  // A PEM in one environment line may carry its line breaks as \n.
  const hostedTokenKey = env.PLATFORM_HOSTED_TOKEN_KEY ? env.PLATFORM_HOSTED_TOKEN_KEY.replace(/\\n/g, '\n') : undefined
  if (hostedTokenKey !== undefined && !/-----BEGIN PRIVATE KEY-----[\s\S]+-----END PRIVATE KEY-----/.test(hostedTokenKey))
    throw new ConfigError('PLATFORM_HOSTED_TOKEN_KEY must be a PEM PKCS#8 EC P-256 private key (-----BEGIN PRIVATE KEY-----)')
  const trustedProxies = parseCidrList(env.PLATFORM_TRUSTED_PROXIES ?? '')
  if ('bad' in trustedProxies)
    throw new ConfigError(`PLATFORM_TRUSTED_PROXIES takes comma-separated CIDRs or addresses; "${trustedProxies.bad}" is neither`)
  const runMode = flags.dev ? 'dev' : (env.PLATFORM_RUN_MODE ?? 'prod')
  const auditLog = env.PLATFORM_AUDIT_LOG ?? ''
  if (runMode !== 'dev' && runMode !== 'prod') throw new ConfigError(`PLATFORM_RUN_MODE must be dev or prod, got "${runMode}"`)
  return {
    port,
    host,
    dataDir,
    databaseUrl,
    databaseAuthToken: env.DATABASE_AUTH_TOKEN || undefined,
    databaseDriver: parseDriver(env.PLATFORM_DATABASE_DRIVER ?? ''),
    secretKey,
    publicUrl,
    admin: {
      username: env.PLATFORM_ADMIN_USERNAME ?? 'admin',
      password: env.PLATFORM_ADMIN_PASSWORD || undefined,
      email: env.PLATFORM_ADMIN_EMAIL ?? 'admin@localhost',
    },
    modes: parseModes(env.PLATFORM_MODES ?? ''),
    runMode,
    sandboxCluster: parseBool(env.PLATFORM_SANDBOX_CLUSTER ?? 'true', 'PLATFORM_SANDBOX_CLUSTER'),
    console: parseBool(env.PLATFORM_CONSOLE ?? 'true', 'PLATFORM_CONSOLE'),
    msgbusUrls,
    msgbusCredentialTtlSeconds: parsePositiveInt(env.MSGBUS_CREDENTIAL_TTL_SECONDS ?? String(24 * 3600), 'MSGBUS_CREDENTIAL_TTL_SECONDS'),
    hostedTokenKey,
    chromiumPath: env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    helmPath: env.HELM_PATH ?? defaultHelmPath(dataDir),
    helmBundled: env.HELM_PATH === undefined && Boolean(buildStamp?.helmSha256),
    kubectlPath: env.KUBECTL_PATH ?? join(projectRoot, '.tools', 'bin', 'kubectl'),
    maxBodyBytes: parsePositiveInt(env.PLATFORM_MAX_BODY_BYTES ?? String(10 * 1024 * 1024), 'PLATFORM_MAX_BODY_BYTES'),
    bodyTimeoutSeconds: parsePositiveInt(env.PLATFORM_BODY_TIMEOUT_SECONDS ?? '30', 'PLATFORM_BODY_TIMEOUT_SECONDS'),
    shutdownGraceSeconds: parsePositiveInt(env.PLATFORM_SHUTDOWN_GRACE_SECONDS ?? '10', 'PLATFORM_SHUTDOWN_GRACE_SECONDS'),
    workers: parseWorkers(flags.workers ?? env.PLATFORM_WORKERS ?? '1', flags.workers !== undefined ? '--workers' : 'PLATFORM_WORKERS'),
    workerId: env.PLATFORM_WORKER_ID ? parsePositiveInt(env.PLATFORM_WORKER_ID, 'PLATFORM_WORKER_ID') : undefined,
    allowRegularOrgCreation: !parseBool(env.PLATFORM_DISABLE_REGULAR_ORG_CREATION ?? 'false', 'PLATFORM_DISABLE_REGULAR_ORG_CREATION'),
    allowPrivateEndpoints: parseBool(env.PLATFORM_ALLOW_PRIVATE_ENDPOINTS ?? 'false', 'PLATFORM_ALLOW_PRIVATE_ENDPOINTS'),
    peerHost: parsePeerHost(env.PLATFORM_PEER_HOST ?? '127.0.0.1'),
    memberBufferBytes: parsePositiveInt(env.PLATFORM_MEMBER_BUFFER_BYTES ?? String(256 * 1024 * 1024), 'PLATFORM_MEMBER_BUFFER_BYTES'),
    bucketListPageSize: parsePositiveInt(env.PLATFORM_BUCKET_LIST_PAGE_SIZE ?? '1000', 'PLATFORM_BUCKET_LIST_PAGE_SIZE'),
    gcsEndpoint,
    tls,
    trustedProxies: trustedProxies.cidrs,
    pdfRenders: {
      concurrency: parsePositiveInt(env.PLATFORM_PDF_CONCURRENCY ?? '2', 'PLATFORM_PDF_CONCURRENCY'),
      queue: parseNonNegativeInt(env.PLATFORM_PDF_QUEUE ?? '8', 'PLATFORM_PDF_QUEUE'),
    },
    requestLog: parseBool(env.PLATFORM_REQUEST_LOG ?? 'true', 'PLATFORM_REQUEST_LOG'),
    metricsToken: env.PLATFORM_METRICS_TOKEN || undefined,
    auditRetentionDays: parsePositiveInt(env.PLATFORM_AUDIT_RETENTION_DAYS ?? '90', 'PLATFORM_AUDIT_RETENTION_DAYS'),
    auditLog: auditLog === '' || auditLog === '-' ? auditLog : resolve(auditLog),
    agentImage: parseImage(env.PLATFORM_AGENT_IMAGE || DEFAULT_AGENT_IMAGE),
    orders: {
      chartSources: parseChartSources(env.PLATFORM_CHART_SOURCES ?? ''),
      allowPrivateRegistries: parseBool(env.PLATFORM_ALLOW_PRIVATE_REGISTRIES ?? 'false', 'PLATFORM_ALLOW_PRIVATE_REGISTRIES'),
      kubeVersion: parseKubeVersion(env.PLATFORM_KUBE_VERSION ?? '1.22.0'),
      helmTimeoutMs: parsePositiveInt(env.PLATFORM_HELM_TIMEOUT_SECONDS ?? '30', 'PLATFORM_HELM_TIMEOUT_SECONDS') * 1000,
      helmMemoryBytes: parsePositiveInt(env.PLATFORM_HELM_MEMORY_MB ?? '512', 'PLATFORM_HELM_MEMORY_MB') * 1024 * 1024,
      chartFetchTimeoutMs:
        parsePositiveInt(env.PLATFORM_CHART_FETCH_TIMEOUT_SECONDS ?? '30', 'PLATFORM_CHART_FETCH_TIMEOUT_SECONDS') * 1000,
      chartCacheBytes: parsePositiveInt(env.PLATFORM_CHART_CACHE_MB ?? '256', 'PLATFORM_CHART_CACHE_MB') * 1024 * 1024,
    },
    buildCommit: env.PLATFORM_BUILD_COMMIT || buildStamp?.commit,
    buildDate: env.PLATFORM_BUILD_DATE || buildStamp?.date,
  }
}

/** A container image reference as a Pod's `image` takes it: `[host[:port]/]path[:tag][@sha256:digest]`. */
const IMAGE_PATH = '[a-z0-9]+(?:[._-]+[a-z0-9]+)*'
const IMAGE_REFERENCE = new RegExp(
  `^(?:[A-Za-z0-9.-]+(?::\\d+)?/)?${IMAGE_PATH}(?:/${IMAGE_PATH})*(?::\\w[\\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$`,
)

function parseImage(text: string): string {
  if (!IMAGE_REFERENCE.test(text))
    throw new ConfigError(`PLATFORM_AGENT_IMAGE must be a container image such as registry.example.com/platform-api:0.1.0, got "${text}"`)
  return text
}

function parseKubeVersion(text: string): string {
  if (!/^v?\d+\.\d+(\.\d+)?$/.test(text))
    throw new ConfigError(`PLATFORM_KUBE_VERSION must be a Kubernetes version such as 1.22.0, got "${text}"`)
  return text
}

/** PLATFORM_PEER_HOST: an IP address to bind (a host name would be resolved differently by each peer). */
function parsePeerHost(text: string): string {
  if (!isIP(text)) throw new ConfigError(`PLATFORM_PEER_HOST must be an IP address of this machine, got "${text}"`)
  return text
}

/** PLATFORM_CHART_SOURCES: a JSON array of {name, url, username?, password?, caData?, insecureSkipTLSVerify?}. */
function parseChartSources(text: string): ChartSourceSeed[] {
  if (text.trim() === '') return []
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new ConfigError('PLATFORM_CHART_SOURCES must be a JSON array of chart sources')
  }
  if (!Array.isArray(parsed)) throw new ConfigError('PLATFORM_CHART_SOURCES must be a JSON array of chart sources')
  return parsed.map((entry: unknown, i) => {
    const e = (entry ?? {}) as Record<string, unknown>
    const optional = (key: string) => {
      if (e[key] !== undefined && typeof e[key] !== 'string') throw new ConfigError(`PLATFORM_CHART_SOURCES[${i}].${key} must be a string`)
      return e[key] as string | undefined
    }
    if (typeof e.name !== 'string' || !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(e.name))
      throw new ConfigError(`PLATFORM_CHART_SOURCES[${i}].name must be a lower-case name (letters, digits, -)`)
    if (typeof e.url !== 'string' || !/^(https?|oci):\/\/[^/]/.test(e.url))
      throw new ConfigError(`PLATFORM_CHART_SOURCES[${i}].url must be an http(s):// or oci:// URL`)
    if (e.insecureSkipTLSVerify !== undefined && typeof e.insecureSkipTLSVerify !== 'boolean')
      throw new ConfigError(`PLATFORM_CHART_SOURCES[${i}].insecureSkipTLSVerify must be true or false`)
    return {
      name: e.name,
      url: e.url,
      username: optional('username'),
      password: optional('password'),
      caData: optional('caData'),
      insecureSkipTLSVerify: e.insecureSkipTLSVerify as boolean | undefined,
    }
  })
}

/** Decodes a 32-byte key given as 64 hex characters or base64; undefined when it is neither. */
export function decodeKey(text: string): Uint8Array | undefined {
  const trimmed = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Uint8Array.from(Buffer.from(trimmed, 'hex'))
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed, 'base64')
    if (bytes.length === 32) return Uint8Array.from(bytes)
  }
  return undefined
}

/** A CIDR block: an address and its prefix length. */
export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number]

/** Parses `PLATFORM_TRUSTED_PROXIES`-style text (comma-separated CIDRs or single addresses); `bad` names the first entry that is neither. */
function parseCidrList(text: string): { cidrs: Cidr[] } | { bad: string } {
  const cidrs: Cidr[] = []
  for (const entry of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    try {
      if (entry.includes('/')) cidrs.push(ipaddr.parseCIDR(entry))
      else {
        const address = ipaddr.process(entry)
        cidrs.push([address, address.kind() === 'ipv4' ? 32 : 128])
      }
    } catch {
      return { bad: entry }
    }
  }
  return { cidrs }
}

function parseDriver(text: string): Config['databaseDriver'] {
  if (text === '') return undefined
  if (text === 'bun:sqlite' || text === 'libsql') return text
  throw new ConfigError(`PLATFORM_DATABASE_DRIVER must be bun:sqlite or libsql, got "${text}"`)
}

/** At most this many workers: far past any machine's cores, short of a typo's thousands of processes. */
const MAX_WORKERS = 256

function parseWorkers(text: string, name: string): number {
  if (text.trim().toLowerCase() === 'auto') return availableParallelism()
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1 || Number(text) > MAX_WORKERS)
    throw new ConfigError(`${name} must be a number of processes 1-${MAX_WORKERS} or auto (one per core), got "${text}"`)
  return Number(text)
}

function parsePort(text: string, name: string): number {
  const port = Number(text)
  if (!/^\d+$/.test(text) || port > 65535) throw new ConfigError(`${name} must be a port number 0-65535, got "${text}"`)
  return port
}

function parsePositiveInt(text: string, name: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new ConfigError(`${name} must be a positive integer, got "${text}"`)
  return Number(text)
}

function parseNonNegativeInt(text: string, name: string): number {
  if (!/^\d+$/.test(text)) throw new ConfigError(`${name} must be a whole number, got "${text}"`)
  return Number(text)
}

function parseBool(text: string, name: string): boolean {
  const value = text.trim().toLowerCase()
  if (['true', '1', 'yes', 'on'].includes(value)) return true
  if (['false', '0', 'no', 'off', ''].includes(value)) return false
  throw new ConfigError(`${name} must be true or false, got "${text}"`)
}

function parseModes(text: string): Set<DeploymentMode> {
  const modes = new Set<DeploymentMode>()
  for (const word of text
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)) {
    if (!MODES.includes(word as DeploymentMode))
      throw new ConfigError(`PLATFORM_MODES accepts ${MODES.join(', ')}; "${word}" is not one of them`)
    modes.add(word as DeploymentMode)
  }
  return modes
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

/** What `agent` reads of the environment: its token when `--token` is not given (the manifest's Secret sets it), and where the pod's API server is. */
export function agentEnvironment(env: NodeJS.ProcessEnv = process.env) {
  return {
    token: env.PLATFORM_AGENT_TOKEN || undefined,
    inCluster: { KUBERNETES_SERVICE_HOST: env.KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT: env.KUBERNETES_SERVICE_PORT },
  }
}

/** Where `serve` keeps the certificate authority and certificate it makes itself (docs/decisions.md §12). */
const generatedTlsFiles = (dataDir: string) => ({
  caFile: join(dataDir, 'tls', 'ca.crt'),
  certFile: join(dataDir, 'tls', 'server.crt'),
  keyFile: join(dataDir, 'tls', 'server.key'),
})

/** Where the terminal commands (`login`, `kubeconfig`) keep their files (docs/decisions.md §12). */
export interface ClientFiles {
  /** `$XDG_CONFIG_HOME/platform-api/config.json` (XDG_CONFIG_HOME defaults to ~/.config). */
  configFile: string
  /** The kubeconfig `--merge` writes: the first existing `KUBECONFIG` entry, else its first, else ~/.kube/config. */
  kubeconfigFile: string
}

export function clientFiles(env: Record<string, string | undefined> = process.env): ClientFiles {
  const home = env.HOME || homedir()
  const configHome = env.XDG_CONFIG_HOME || join(home, '.config')
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter(Boolean)
  return {
    configFile: join(configHome, 'platform-api', 'config.json'),
    kubeconfigFile: listed.find((file) => existsSync(file)) ?? listed[0] ?? join(home, '.kube', 'config'),
  }
}
