/**
 * Kubernetes resource paths: `/api/v1/...` (core group) and `/apis/{group}/{version}/...` parsed
 * into group, version, resource, namespace, name and subresource, and built back with every
 * segment percent-encoded. Names that are no valid path segment ('..', '/') are refused here, so
 * neither the emulator nor a proxy forwarding a path can be walked out of a resource's path.
 */
import { pathSegmentErrors } from './names'
import { kubeStatus } from './status'

export interface GroupVersion {
  group: string
  version: string
}
export interface GroupVersionResource extends GroupVersion {
  resource: string
}

/** One request target, as the apiserver's RequestInfo; '' for the parts a path does not have. */
export interface ResourcePath extends GroupVersionResource {
  namespace: string
  name: string
  subresource: string
}

/** `apps/v1` → apps, v1; `v1` → the core group (''). */
export function parseGroupVersion(apiVersion: string): GroupVersion {
  const slash = apiVersion.indexOf('/')
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) }
}

/** The apiVersion string of a group and version: `apps/v1`, or `v1` for the core group. */
export const groupVersion = (group: string, version: string): string => (group ? `${group}/${version}` : version)

function checkSegment(kind: string, segment: string): string {
  const errors = pathSegmentErrors(segment)
  if (errors.length) throw kubeStatus.badRequest(`invalid ${kind} in the request path ${JSON.stringify(segment)}: ${errors.join(', ')}`)
  return segment
}

/**
 * The decoded segments after `{group}/{version}`: `[namespaces, ns,] resource [, name [, subresource]]`.
 * A namespace's own subresources (`namespaces/x/status`, `namespaces/x/finalize`) stay cluster-scoped.
 * Undefined when the segments name no resource; a segment that is no valid name is a 400 Status.
 */
function parseResourceSegments(group: string, version: string, segments: string[]): ResourcePath | undefined {
  let rest = segments
  let namespace = ''
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize'))) {
    namespace = checkSegment('namespace', rest[1])
    rest = rest.slice(2)
  }
  if (rest.length < 1 || rest.length > 3 || !rest[0]) return undefined
  const [resource, name = '', subresource = ''] = rest
  return {
    group,
    version,
    namespace,
    resource: checkSegment('resource', resource),
    name: checkSegment('name', name),
    subresource: checkSegment('subresource', subresource),
  }
}

/** A request path (`/api/v1/...`, `/apis/{g}/{v}/...`, percent-encoded) as a ResourcePath; undefined for any other path. */
export function parseApiPath(pathname: string): ResourcePath | undefined {
  let parts: string[]
  try {
    parts = pathname.split('/').filter(Boolean).map(decodeURIComponent)
  } catch {
    throw kubeStatus.badRequest('malformed percent-encoding in the request path')
  }
  if (parts[0] === 'api' && parts.length >= 3) return parseResourceSegments('', parts[1], parts.slice(2))
  if (parts[0] === 'apis' && parts.length >= 4) return parseResourceSegments(parts[1], parts[2], parts.slice(3))
  return undefined
}

/** The request path of a resource target, each segment percent-encoded; empty parts are left out. */
export function apiPath(p: GroupVersionResource & Partial<ResourcePath>): string {
  const prefix = p.group ? ['apis', p.group, p.version] : ['api', p.version]
  const segments = [...prefix, ...(p.namespace ? ['namespaces', p.namespace] : []), p.resource, p.name ?? '', p.subresource ?? ''].filter(
    Boolean,
  )
  return `/${segments.map(encodeURIComponent).join('/')}`
}
