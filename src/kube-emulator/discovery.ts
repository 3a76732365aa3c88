/**
 * Discovery documents built from the registry's resources, so CRDs appear the moment they are
 * created. kubectl asks for aggregated discovery first and falls back to these legacy documents
 * when the answer's Content-Type is plain JSON. OpenAPI v3 is served just far enough for kubectl's
 * field-validation probe: one PATCH operation per kind that declares `fieldValidation`.
 */
import { declaredSubresources, SUBRESOURCES } from './handlers/subresources'
import { type Registry, type Resource, verbsOf } from './registry'

/** `/version`: what kubectl reports as the server version. */
export const SERVER_VERSION = {
  major: '1',
  minor: '31',
  gitVersion: 'v1.31.0-emulator',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.22.5',
  compiler: 'gc',
  platform: 'linux/amd64',
}

const groupVersion = (group: string, version: string) => (group ? `${group}/${version}` : version)

/** `/api`: the legacy core group's versions. */
export function coreVersions(serverAddress: string) {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] }
}

/** `/apis`: every named group with its versions, the first listed being preferred. */
export function groupList(registry: Registry) {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups(registry).map(([name, versions]) => groupDoc(name, versions)) }
}

function groups(registry: Registry): [string, string[]][] {
  const byGroup = new Map<string, string[]>()
  for (const r of registry.all()) {
    if (!r.group) continue
    const versions = byGroup.get(r.group) ?? []
    for (const v of r.versions) if (!versions.includes(v)) versions.push(v)
    byGroup.set(r.group, versions)
  }
  return [...byGroup.entries()].sort(([a], [b]) => a.localeCompare(b))
}

function groupDoc(name: string, versions: string[]) {
  const gvs = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }))
  return { name, versions: gvs, preferredVersion: gvs[0] }
}

/** `/apis/{group}`: one APIGroup, or undefined when no resource is in it. */
export function groupDocument(registry: Registry, group: string) {
  const found = groups(registry).find(([name]) => name === group)
  return found && { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(found[0], found[1]) }
}

function resourceEntries(r: Resource, version: string) {
  const s = r.strategy
  const main = {
    name: r.resource,
    singularName: s.singular,
    namespaced: s.namespaced,
    kind: s.kind,
    verbs: verbsOf(r),
    ...(s.shortNames?.length ? { shortNames: s.shortNames } : {}),
    ...(s.categories?.length ? { categories: s.categories } : {}),
    storageVersionHash: Buffer.from(`${r.group}/${version}/${r.resource}`).toString('base64').slice(0, 11),
  }
  const subs = declaredSubresources(r).map((name) => {
    const sub = SUBRESOURCES[name]
    return {
      name: `${r.resource}/${name}`,
      singularName: '',
      namespaced: s.namespaced,
      ...sub.groupVersion,
      kind: sub.kind ?? s.kind,
      verbs: sub.verbs,
    }
  })
  return [main, ...subs]
}

/** `/api/v1` and `/apis/{group}/{version}`, or undefined when that group/version serves nothing. */
export function resourceList(registry: Registry, group: string, version: string) {
  const rs = registry.all().filter((r) => r.group === group && r.versions.includes(version))
  if (!rs.length) return undefined
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersion(group, version),
    resources: rs.sort((a, b) => a.resource.localeCompare(b.resource)).flatMap((r) => resourceEntries(r, version)),
  }
}

/** `/openapi/v2`: a valid but definition-free Swagger document (kubectl then uses its built-in types). */
export function openApiV2() {
  return { swagger: '2.0', info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion }, paths: {}, definitions: {} }
}

/**
 * The protobuf media types of `/openapi/v2` (gnostic's `openapi_v2.Document`): kubectl asks for the
 * old `@v1.0` spelling, which Go's mime parser refuses in a Content-Type, so answers use `.v1.0`.
 */
export const OPENAPI_V2_PROTOBUF = [
  'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
  'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
]

/**
 * `openApiV2()` as protobuf: `swagger` (field 1) and `info` (field 2: title 1, version 2), no
 * definitions. kubectl's client-side validation (used for `kind: List` files) then finds no schema
 * for any kind and skips them, as it does for kinds a real server has no schema of.
 */
export function openApiV2Protobuf(): Uint8Array<ArrayBuffer> {
  const field = (no: number, bytes: Uint8Array) => [(no << 3) | 2, bytes.length, ...bytes]
  const text = (s: string) => new TextEncoder().encode(s)
  const info = new Uint8Array([...field(1, text('Kubernetes')), ...field(2, text(SERVER_VERSION.gitVersion))])
  return new Uint8Array([...field(1, text('2.0')), ...field(2, info)])
}

/** `/openapi/v3`: the index of per-group-version documents. */
export function openApiV3Index(registry: Registry) {
  const paths: Record<string, { serverRelativeURL: string }> = {}
  const seen = new Set<string>()
  for (const r of registry.all()) for (const v of r.versions) seen.add(r.group ? `apis/${r.group}/${v}` : `api/${v}`)
  for (const p of [...seen].sort()) paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${hashOf(registry, p)}` }
  return { paths }
}

/** The document's hash changes when the resources behind it do, as caches key on it. */
function hashOf(registry: Registry, path: string): string {
  const body = JSON.stringify(openApiV3Document(registry, path) ?? {})
  return Bun.hash(body).toString(16).toUpperCase().padStart(16, '0')
}

/** `/openapi/v3/api/v1` or `/openapi/v3/apis/{g}/{v}`: PATCH operations naming their kind and `fieldValidation`. */
export function openApiV3Document(registry: Registry, path: string) {
  const parts = path.split('/')
  const [group, version] =
    parts[0] === 'api' && parts.length === 2
      ? ['', parts[1]]
      : parts[0] === 'apis' && parts.length === 3
        ? [parts[1], parts[2]]
        : [undefined, undefined]
  if (group === undefined || version === undefined) return undefined
  const rs = registry.all().filter((r) => r.group === group && r.versions.includes(version) && !r.virtual)
  if (!rs.length) return undefined
  const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`
  const pathsDoc: Record<string, object> = {}
  for (const r of rs) {
    const item = r.strategy.namespaced ? `${prefix}/namespaces/{namespace}/${r.resource}/{name}` : `${prefix}/${r.resource}/{name}`
    pathsDoc[item] = {
      patch: {
        operationId: `patch${r.strategy.kind}`,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group, version, kind: r.strategy.kind },
        parameters: [
          { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
        ],
        responses: { '200': { description: 'OK' } },
      },
    }
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion },
    paths: pathsDoc,
    components: { schemas: {} },
  }
}
