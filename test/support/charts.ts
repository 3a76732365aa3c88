import { afterAll } from 'bun:test'
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createGzip } from 'node:zlib'
import { tarHeader } from '../../src/orders/charts/pack'
import { tempDir } from './app'

/**
 * Charts built by the real Helm (`helm create`, `helm package`) and the two kinds of chart
 * registry they are served from on loopback: a Helm HTTP repository (index.yaml with ETag) and a
 * small OCI registry (manifests, blobs, tags/list, optional Bearer token flow).
 */

const HELM = join(import.meta.dir, '../../.tools/bin/helm')

export function helm(args: string[], cwd?: string): string {
  const run = Bun.spawnSync([HELM, ...args], {
    cwd,
    env: {
      PATH: '/usr/bin:/bin',
      HOME: cwd ?? '/tmp',
      HELM_CACHE_HOME: join(cwd ?? '/tmp', '.hc'),
      HELM_CONFIG_HOME: join(cwd ?? '/tmp', '.hcfg'),
      HELM_DATA_HOME: join(cwd ?? '/tmp', '.hd'),
    },
  })
  if (run.exitCode !== 0) throw new Error(`helm ${args.join(' ')}: ${run.stderr.toString()}`)
  return run.stdout.toString()
}

export interface BuiltChart {
  name: string
  version: string
  /** The packaged archive. */
  tgz: string
  bytes: Uint8Array
  /** The chart directory (for bare `helm template` comparisons). */
  dir: string
}

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.demo.example.com
spec:
  group: demo.example.com
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
`

const PRE_INSTALL = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "CHART.fullname" . }}-pre
  annotations:
    "helm.sh/hook": pre-install
data:
  greeting: {{ .Values.greeting | default "hello" | quote }}
`

const POST_INSTALL = `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ include "CHART.fullname" . }}-post
  annotations:
    "helm.sh/hook": post-install
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: post
        image: busybox
        command: ["true"]
`

const CONFIG = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "CHART.fullname" . }}-cfg
data:
  greeting: {{ .Values.greeting | default "hello" | quote }}
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
`

/**
 * `helm create <name>` plus a CRD, a pre-install and a post-install hook and a values-driven
 * ConfigMap (helm create brings a test hook), packaged at `version`; `templates` extra
 * ConfigMaps make a chart of that many more templates.
 */
export function buildChart(name: string, version: string, opts: { extraTemplates?: number; dir?: string } = {}): BuiltChart {
  const root = opts.dir ?? tempDir('platform-chart-')
  const work = join(root, `${name}-${version}`)
  mkdirSync(work, { recursive: true })
  helm(['create', name], work)
  const dir = join(work, name)
  const chartYaml = readFileSync(join(dir, 'Chart.yaml'), 'utf8').replace(/^version: .*$/m, `version: ${version}`)
  writeFileSync(join(dir, 'Chart.yaml'), chartYaml)
  mkdirSync(join(dir, 'crds'), { recursive: true })
  writeFileSync(join(dir, 'crds', 'widgets.yaml'), CRD)
  writeFileSync(join(dir, 'templates', 'pre-install.yaml'), PRE_INSTALL.replaceAll('CHART', name))
  writeFileSync(join(dir, 'templates', 'post-install.yaml'), POST_INSTALL.replaceAll('CHART', name))
  writeFileSync(join(dir, 'templates', 'config.yaml'), CONFIG.replaceAll('CHART', name))
  for (let i = 0; i < (opts.extraTemplates ?? 0); i++)
    writeFileSync(join(dir, 'templates', `extra-${i}.yaml`), CONFIG.replaceAll('CHART', name).replace('-cfg', `-extra-${i}`))
  helm(['package', dir, '--destination', work], work)
  const tgz = join(work, `${name}-${version}.tgz`)
  return { name, version, tgz, bytes: new Uint8Array(readFileSync(tgz)), dir }
}

/** A chart of exactly these files (paths below the chart directory), packaged by `helm package`. */
export function buildRawChart(name: string, version: string, files: Record<string, string | Uint8Array>): BuiltChart {
  const work = tempDir('platform-chart-')
  const dir = join(work, name)
  for (const [path, text] of Object.entries({ 'Chart.yaml': `apiVersion: v2\nname: ${name}\nversion: ${version}\n`, ...files })) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  helm(['package', dir, '--destination', work], work)
  const tgz = join(work, `${name}-${version}.tgz`)
  return { name, version, tgz, bytes: new Uint8Array(readFileSync(tgz)), dir }
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

export interface HelmRepo {
  url: string
  /** Requests seen, as `METHOD path` (with `304` appended to answered-not-modified ones). */
  requests: string[]
  /** Archives served instead of the packaged one, by file name (attack tests). */
  override(file: string, bytes: Uint8Array): void
  stop(): void
}

/** A Helm HTTP repository on loopback serving `charts` under /charts/, index.yaml with an ETag; HTTPS with `tls`, Basic auth with credentials, archives listed under `archiveBase` (another server) when given, digests that match nothing with `wrongDigests`. */
export function serveHelmRepo(
  charts: BuiltChart[],
  opts: {
    username?: string
    password?: string
    tls?: { certPem: string; keyPem: string }
    archiveBase?: string
    wrongDigests?: boolean
  } = {},
): HelmRepo {
  const files = new Map(charts.map((c) => [`${c.name}-${c.version}.tgz`, c.bytes]))
  const requests: string[] = []
  const indexOf = () => {
    const entries: Record<string, unknown[]> = {}
    for (const c of charts) {
      const bytes = files.get(`${c.name}-${c.version}.tgz`)!
      ;(entries[c.name] ??= []).push({
        apiVersion: 'v2',
        name: c.name,
        version: c.version,
        urls: [opts.archiveBase ? `${opts.archiveBase}/${c.name}-${c.version}.tgz` : `${c.name}-${c.version}.tgz`],
        digest: opts.wrongDigests ? sha256(new TextEncoder().encode('something else')) : sha256(bytes),
        created: '2026-01-01T00:00:00Z',
      })
    }
    return `apiVersion: v1\nentries: ${JSON.stringify(entries)}\ngenerated: "2026-01-01T00:00:00Z"\n`
  }
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    tls: opts.tls ? { cert: opts.tls.certPem, key: opts.tls.keyPem } : undefined,
    fetch(request) {
      const path = new URL(request.url).pathname
      if (
        opts.username !== undefined &&
        request.headers.get('authorization') !== `Basic ${Buffer.from(`${opts.username}:${opts.password}`).toString('base64')}`
      ) {
        requests.push(`${request.method} ${path} 401`)
        return new Response('unauthorized', { status: 401 })
      }
      if (path === '/charts/index.yaml') {
        const body = indexOf()
        const etag = `"${sha256(new TextEncoder().encode(body))}"`
        if (request.headers.get('if-none-match') === etag) {
          requests.push(`GET ${path} 304`)
          return new Response(null, { status: 304, headers: { etag } })
        }
        requests.push(`GET ${path}`)
        return new Response(body, { headers: { etag, 'content-type': 'application/x-yaml' } })
      }
      requests.push(`${request.method} ${path}`)
      const file = files.get(path.replace(/^\/charts\//, ''))
      return file
        ? new Response(file as BodyInit, { headers: { 'content-type': 'application/gzip' } })
        : new Response('not found', { status: 404 })
    },
  })
  afterAll(() => server.stop(true))
  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${server.port}/charts`,
    requests,
    override: (file, bytes) => {
      files.set(file, bytes)
    },
    stop: () => server.stop(true),
  }
}

/** A TCP listener on a loopback address that records every connection and answers `{}` over HTTP (an SSRF canary). */
export function connectionCanary(hostname: string): { host: string; connections: string[] } {
  const connections: string[] = []
  const server = Bun.listen({
    hostname,
    port: 0,
    socket: {
      open() {
        connections.push('connect')
      },
      data(socket, data) {
        connections.push(data.toString('latin1').split('\r\n')[0]!)
        socket.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}')
      },
    },
  })
  afterAll(() => server.stop(true))
  return { host: `${hostname}:${server.port}`, connections }
}

export interface OciRegistry {
  /** `oci://127.0.0.1:PORT/charts` */
  url: string
  requests: string[]
  /** The Bearer token the registry accepts. */
  token: string
  stop(): void
}

/**
 * A loopback OCI registry holding `charts` under the repository path `charts/<name>`. With
 * credentials it answers 401 with a Bearer challenge whose realm hands out a token for them;
 * `realm` names another token service instead of its own `/token`.
 */
export function serveOciRegistry(charts: BuiltChart[], opts: { username?: string; password?: string; realm?: string } = {}): OciRegistry {
  const blobs = new Map<string, Uint8Array>()
  const manifests = new Map<string, { digest: string; body: string }>()
  const tags = new Map<string, string[]>()
  const requests: string[] = []
  const token = `tok-${Math.random().toString(36).slice(2)}`
  for (const c of charts) {
    const config = new TextEncoder().encode(JSON.stringify({ name: c.name, version: c.version, apiVersion: 'v2' }))
    const layerDigest = `sha256:${sha256(c.bytes)}`
    const configDigest = `sha256:${sha256(config)}`
    blobs.set(layerDigest, c.bytes)
    blobs.set(configDigest, config)
    const body = JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.cncf.helm.config.v1+json', digest: configDigest, size: config.byteLength },
      layers: [{ mediaType: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip', digest: layerDigest, size: c.bytes.byteLength }],
    })
    const digest = `sha256:${sha256(new TextEncoder().encode(body))}`
    const tag = c.version.replace(/\+/g, '_')
    manifests.set(`charts/${c.name}:${tag}`, { digest, body })
    manifests.set(`charts/${c.name}:${digest}`, { digest, body })
    ;(tags.get(`charts/${c.name}`) ?? tags.set(`charts/${c.name}`, []).get(`charts/${c.name}`)!).push(tag)
  }
  let port = 0
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request): Response {
      const url = new URL(request.url)
      requests.push(`${request.method} ${url.pathname}`)
      if (url.pathname === '/token') {
        const expected = `Basic ${Buffer.from(`${opts.username}:${opts.password}`).toString('base64')}`
        if (request.headers.get('authorization') !== expected) return new Response('{"errors":[{"code":"UNAUTHORIZED"}]}', { status: 401 })
        return Response.json({ token, expires_in: 300 })
      }
      if (opts.username !== undefined && request.headers.get('authorization') !== `Bearer ${token}`) {
        const repo = /^\/v2\/(.+)\/(manifests|blobs|tags)\//.exec(url.pathname)?.[1] ?? ''
        return new Response('{"errors":[{"code":"UNAUTHORIZED"}]}', {
          status: 401,
          headers: {
            'www-authenticate': `Bearer realm="${opts.realm ?? `http://127.0.0.1:${port}/token`}",service="loopback",scope="repository:${repo}:pull"`,
          },
        })
      }
      let m = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(url.pathname)
      if (m) {
        const found = manifests.get(`${m[1]}:${decodeURIComponent(m[2]!)}`)
        if (!found) return Response.json({ errors: [{ code: 'MANIFEST_UNKNOWN' }] }, { status: 404 })
        const headers = { 'content-type': 'application/vnd.oci.image.manifest.v1+json', 'docker-content-digest': found.digest }
        return new Response(request.method === 'HEAD' ? null : found.body, { headers })
      }
      m = /^\/v2\/(.+)\/blobs\/(sha256:[0-9a-f]{64})$/.exec(url.pathname)
      if (m) {
        const blob = blobs.get(m[2]!)
        return blob
          ? new Response(blob as BodyInit, { headers: { 'content-type': 'application/octet-stream' } })
          : Response.json({ errors: [{ code: 'BLOB_UNKNOWN' }] }, { status: 404 })
      }
      m = /^\/v2\/(.+)\/tags\/list$/.exec(url.pathname)
      if (m) {
        const list = tags.get(m[1]!)
        return list ? Response.json({ name: m[1], tags: list }) : Response.json({ errors: [{ code: 'NAME_UNKNOWN' }] }, { status: 404 })
      }
      return Response.json({ errors: [{ code: 'NOT_FOUND' }] }, { status: 404 })
    },
  })
  port = server.port!
  afterAll(() => server.stop(true))
  return { url: `oci://127.0.0.1:${server.port}/charts`, requests, token, stop: () => server.stop(true) }
}

export interface TarEntry {
  path: string
  data?: string | Uint8Array
  /** '0' file (default), '2' symlink, '1' hard link, '5' directory, 'x' PAX header, 'L' GNU long name. */
  type?: string
  linkname?: string
}

/** The tar blocks of `entries` (header, data, padding each), without the end marker: crafted archives nest them as data. */
export function tarBlocks(entries: TarEntry[]): Buffer {
  const blocks: Buffer[] = []
  for (const entry of entries) {
    const data = Buffer.from(entry.data ?? '')
    blocks.push(tarHeader(entry, data.length), data, Buffer.alloc((512 - (data.length % 512)) % 512))
  }
  return Buffer.concat(blocks)
}

/** A gzipped tar of `entries`. */
export function tgzOf(entries: TarEntry[]): Uint8Array {
  return Bun.gzipSync(Buffer.concat([tarBlocks(entries), Buffer.alloc(1024)]))
}

/** A small gzip that expands to `expandedBytes`: a chart file header claiming that size, then zeros. */
export async function gzipBomb(expandedBytes: number): Promise<Uint8Array> {
  const gzip = createGzip({ level: 9 })
  const chunks: Buffer[] = []
  gzip.on('data', (c: Buffer) => chunks.push(c))
  const done = new Promise((resolve) => gzip.on('end', resolve))
  gzip.write(tarHeader({ path: 'demo/templates/big.yaml' }, expandedBytes))
  const zeros = Buffer.alloc(1024 * 1024)
  for (let written = 0; written < expandedBytes; written += zeros.length) {
    if (!gzip.write(zeros)) await new Promise((resolve) => gzip.once('drain', resolve))
  }
  gzip.end()
  await done
  return Buffer.concat(chunks)
}
