/**
 * Kubernetes `Status` objects, built only here. Message templates follow apimachinery's
 * `errors.go` byte for byte, because clients (kubectl, client-go, our proxy's tests) match on them.
 */

export interface StatusCause {
  reason: string
  message: string
  field?: string
}

interface StatusDetails {
  name?: string
  group?: string
  /** The plural resource, not the Kind: apimachinery names it `kind` for history's sake. */
  kind?: string
  uid?: string
  causes?: StatusCause[]
  retryAfterSeconds?: number
}

export interface KubeStatus {
  kind: 'Status'
  apiVersion: 'v1'
  metadata: Record<string, never>
  status: 'Failure' | 'Success'
  message?: string
  reason?: string
  details?: StatusDetails
  code: number
}

/** A group and a plural resource; `group` is '' for the core group. */
export interface GroupResource {
  group: string
  resource: string
}
/** A group and a Kind, as `invalid` names the object. */
export interface GroupKind {
  group: string
  kind: string
}

/** Thrown by the emulator's registry and handlers; the HTTP edge renders `status` as the body. */
export class KubeStatusError extends Error {
  constructor(readonly status: KubeStatus) {
    super(status.message ?? status.reason ?? 'Failure')
  }
  get code(): number {
    return this.status.code
  }
}

const qualified = (gr: GroupResource): string => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource)

function failure(code: number, reason: string, message: string, details?: StatusDetails): KubeStatusError {
  return new KubeStatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  })
}

function describeCause(c: StatusCause): string {
  return c.field ? `${c.field}: ${c.message}` : c.message
}

/** Named constructors, one per Status reason; each returns a KubeStatusError to throw. */
export const kubeStatus = {
  /** 404 `<res> "<name>" not found`. */
  notFound: (gr: GroupResource, name: string) =>
    failure(404, 'NotFound', `${qualified(gr)} "${name}" not found`, { name, group: gr.group || undefined, kind: gr.resource }),

  /** 404 for a path no resource serves; `details` stays empty as on a real server. */
  pathNotFound: () => failure(404, 'NotFound', 'the server could not find the requested resource', {}),

  /** 409 `<res> "<name>" already exists`. */
  alreadyExists: (gr: GroupResource, name: string) =>
    failure(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, { name, group: gr.group || undefined, kind: gr.resource }),

  /** 409 Conflict; `detail` defaults to the stale-resourceVersion sentence clients retry on. */
  conflict: (
    gr: GroupResource,
    name: string,
    detail = 'the object has been modified; please apply your changes to the latest version and try again',
  ) =>
    failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${detail}`, {
      name,
      group: gr.group || undefined,
      kind: gr.resource,
    }),

  /** 422 `<Kind>[.<group>] "<name>" is invalid: <causes>`. */
  invalid: (gk: GroupKind, name: string, causes: StatusCause[]) => {
    const what = gk.group ? `${gk.kind}.${gk.group}` : gk.kind
    const list = causes.map(describeCause)
    const text = list.length === 1 ? list[0] : `[${list.join(', ')}]`
    return failure(422, 'Invalid', `${what} "${name}" is invalid: ${text}`, { name, group: gk.group || undefined, kind: gk.kind, causes })
  },

  /** 400 with free text: selector, patch, query and body errors. */
  badRequest: (message: string) => failure(400, 'BadRequest', message),

  /** 410 Expired: a watch or continue token older than the retained history. */
  expired: (message: string) => failure(410, 'Expired', message),

  /** 410 Gone with free text. */
  gone: (message: string) => failure(410, 'Gone', message),

  /** 401 for a missing or unknown bearer token; never echoes the token. */
  unauthorized: () => failure(401, 'Unauthorized', 'Unauthorized'),

  /** 403 in the authorizer's wording: `<res> "<name>" is forbidden: User "<u>" cannot <verb> resource …`. */
  forbidden: (gr: GroupResource, name: string, user: string, verb: string, namespace: string, subresource = '') => {
    const res = subresource ? `${gr.resource}/${subresource}` : gr.resource
    const scope = namespace ? `in the namespace "${namespace}"` : 'at the cluster scope'
    const subject = name ? `${qualified(gr)} "${name}"` : qualified(gr)
    return failure(
      403,
      'Forbidden',
      `${subject} is forbidden: User "${user}" cannot ${verb} resource "${res}" in API group "${gr.group}" ${scope}`,
      { ...(name ? { name } : {}), group: gr.group || undefined, kind: gr.resource },
    )
  },

  /** 405 `<verb> is not supported on resources of kind "<res>"`. */
  methodNotSupported: (gr: GroupResource, verb: string) =>
    failure(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${qualified(gr)}"`, {
      group: gr.group || undefined,
      kind: gr.resource,
    }),

  /** 406 listing what the server can produce. */
  notAcceptable: (accepted: string[]) =>
    failure(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`),

  /** 415 listing the body formats the endpoint takes. */
  unsupportedMediaType: (accepted: string[]) =>
    failure(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    ),

  /** 413 for bodies over the limit. */
  tooLarge: (message = 'the request body is too large') => failure(413, 'RequestEntityTooLarge', message),

  /** 500 `Internal error occurred: …`. */
  internal: (message: string) =>
    failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ reason: '', message }] }),

  /**
   * 504 `Timeout: Too large resource version: <rv>, current: <current>` with a `ResourceVersionTooLarge`
   * cause: client-go recognises it and relists instead of waiting on a watch that cannot resume.
   */
  tooLargeResourceVersion: (requested: number, current: number) =>
    failure(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    }),

  /** 503 for an aggregated API that is not there. */
  serviceUnavailable: (message: string) => failure(503, 'ServiceUnavailable', message),
}

/** A `Status` with `status: Success`, as delete answers for types that do not return the object. */
export function successStatus(gr: GroupResource, name: string, uid: string): KubeStatus {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name, group: gr.group || undefined, kind: gr.resource, uid },
    code: 200,
  }
}

/**
 * The Status an exec stream sends on channel 3 (v4/v5): a plain marshal without kind/apiVersion.
 * A non-zero exit carries an `ExitCode` cause, which client-go turns into kubectl's exit code.
 */
export function execStreamStatus(exitCode: number, command: string[]): Omit<KubeStatus, 'kind' | 'apiVersion' | 'code'> {
  if (exitCode === 0) return { metadata: {}, status: 'Success' }
  return {
    metadata: {},
    status: 'Failure',
    reason: 'NonZeroExitCode',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${exitCode}`,
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  }
}

/** The channel-3 Status of an exec that could not run at all (e.g. executable not found). */
export function execStreamFailure(message: string): Omit<KubeStatus, 'kind' | 'apiVersion' | 'code'> {
  const { kind: _k, apiVersion: _a, code: _c, ...rest } = kubeStatus.internal(message).status
  return rest
}
