import type { KubernetesCall } from '../../audit/recorder'

/** A segment decoded as safeSegments decodes it; as sent when it will not decode (safeSegments refuses it later). */
function decoded(raw: string): string {
  if (!raw.includes('%')) return raw
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

/** What a proxied path names, read as the apiserver routes it. */
export interface PathInfo {
  apiGroup: string
  apiVersion: string
  namespace: string
  resource: string
  name: string
  subresource: string
}

/**
 * The object a path names, read as the apiserver routes it: after `api/{v}` or `apis/{g}/{v}`
 * (the native passthrough) or `{g}/{v}` (the spec's routes, `core` the legacy group),
 * `[namespaces/{ns}/]{resource}[/{name}[/{subresource}]]`; a namespace's own `status` and
 * `finalize` stay cluster-scoped. A pod named `exec` is no exec.
 */
export function pathInfoOf(family: 'k8s' | 'proxy', rawPath: string): PathInfo {
  const segments = rawPath
    .split('/')
    .filter((s) => s !== '')
    .map(decoded)
  const [apiGroup = '', apiVersion = '', prefix] =
    family === 'proxy'
      ? [segments[0] === 'core' ? '' : segments[0], segments[1], 2]
      : segments[0] === 'api'
        ? ['', segments[1], 2]
        : segments[0] === 'apis'
          ? [segments[1], segments[2], 3]
          : ['', '', segments.length]
  let tail = segments.slice(prefix)
  let namespace = ''
  if (tail[0] === 'namespaces' && tail.length >= 3 && !(tail.length === 3 && ['status', 'finalize'].includes(tail[2]!))) {
    namespace = tail[1]!
    tail = tail.slice(2)
  }
  const [resource = '', name = '', subresource = ''] = tail
  return { apiGroup, apiVersion, namespace, resource, name, subresource }
}

const VERB_OF_METHOD: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' }
/** The subresources that open a session, each Kubernetes' verb of its own (docs/decisions.md §8). */
const SESSION_VERBS: ReadonlySet<string> = new Set(['exec', 'attach', 'portforward'])

/**
 * A proxied write or session as its audit event names it (docs/decisions.md §8): Kubernetes' verb
 * (a DELETE without a name is `deletecollection`), the object, and for exec the command sent in
 * the query (never stdin, never a body).
 */
export function kubernetesCallOf(method: string, family: 'k8s' | 'proxy', rawPath: string, search: string): KubernetesCall {
  const info = pathInfoOf(family, rawPath)
  const session = SESSION_VERBS.has(info.subresource) ? info.subresource : undefined
  const verb = session ?? (method === 'DELETE' && !info.name ? 'deletecollection' : (VERB_OF_METHOD[method] ?? method.toLowerCase()))
  return {
    verb,
    objectRef: {
      apiGroup: info.apiGroup,
      apiVersion: info.apiVersion,
      resource: info.resource,
      ...(info.namespace ? { namespace: info.namespace } : {}),
      ...(info.name ? { name: info.name } : {}),
      ...(info.subresource ? { subresource: info.subresource } : {}),
    },
    ...(session === 'exec' ? { command: new URLSearchParams(search).getAll('command') } : {}),
  }
}
