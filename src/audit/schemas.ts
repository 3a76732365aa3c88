import type { TLiteral } from '@sinclair/typebox'
import { t } from 'elysia'
import { PageQuery } from '../http/pagination'

/** One literal schema per name of a list, typed as a tuple so that their union's type is the names'. */
const literals = <const T extends readonly string[]>(names: T) =>
  names.map((name) => t.Literal(name)) as unknown as { -readonly [K in keyof T]: TLiteral<T[K]> }

/** The kinds of event (docs/decisions.md §8): a new kind is one more name here. */
const AUDIT_KINDS = ['api', 'kubernetes', 'signin', 'cli', 'agent'] as const
const Kind = (description: string) => t.Union(literals(AUDIT_KINDS), { description })
const Result = (description: string) => t.Union([t.Literal('allowed'), t.Literal('refused'), t.Literal('failed')], { description })
const CREDENTIAL_KINDS = ['session', 'token', 'basic', 'oauth2', 'cli', 'agent', 'none'] as const
const CredentialKind = t.Union(literals(CREDENTIAL_KINDS), {
  description:
    'How the caller proved who they are: session cookie, access token, Basic password, OAuth2 application, a command run on the server (cli), the token of a cluster agent, or none',
})
const SignInMethodSchema = t.Union([t.Literal('password'), t.Literal('totp'), t.Literal('webauthn'), t.Literal('sso')])

export type AuditKind = ReturnType<typeof Kind>['static']
export type AuditResult = ReturnType<typeof Result>['static']
export type AuditCredentialKind = typeof CredentialKind.static
export type SignInMethod = typeof SignInMethodSchema.static

const AuditActor = t.Object(
  {
    id: t.Integer({ description: 'User id the request acted as' }),
    login: t.String({ description: 'Login of that user' }),
    realLogin: t.Optional(t.String({ description: 'The site admin behind a sudo request' })),
  },
  { title: 'AuditActor', description: 'Who acted; null for an anonymous caller' },
)

export const AuditCredential = t.Object(
  {
    kind: CredentialKind,
    name: t.Optional(t.String({ description: "The access token's or OAuth2 application's name (never a token's value)" })),
    id: t.Optional(t.Integer({ description: "The access token's or OAuth2 application's id" })),
  },
  { title: 'AuditCredential', description: 'The credential the request was made with' },
)

const AuditOutcome = t.Object(
  {
    status: t.Integer({ description: 'HTTP status the caller got (101 for a stream that was opened)' }),
    result: Result('allowed (2xx, 3xx, an opened stream), refused (4xx) or failed (5xx, member unreachable)'),
  },
  { title: 'AuditOutcome', description: 'How the request ended' },
)

export const AuditObjectRef = t.Object(
  {
    apiGroup: t.String({ description: "The resource's API group; empty for the core group" }),
    apiVersion: t.String({ description: 'API version, e.g. v1' }),
    resource: t.String({ description: 'Plural resource name, e.g. deployments' }),
    namespace: t.Optional(t.String({ description: 'Namespace of a namespaced object' })),
    name: t.Optional(t.String({ description: 'Object name, when the request names one' })),
    subresource: t.Optional(t.String({ description: 'Subresource: status, scale, exec, attach, portforward, …' })),
  },
  { title: 'AuditObjectRef', description: 'The Kubernetes object a proxied request targeted, as the apiserver audit ObjectReference' },
)

export const AuditEvent = t.Object(
  {
    id: t.Integer({ description: 'Event id' }),
    time: t.String({ format: 'date-time', description: 'When the request arrived (a stream: when it opened)' }),
    requestId: t.String({ description: "The request's X-Request-Id" }),
    kind: Kind(
      'api: a state-changing API call; kubernetes: a proxied write, exec, attach or port-forward; signin: a sign-in; cli: a command run on the server; agent: a cluster agent connected, disconnected or was refused',
    ),
    actor: t.Union([AuditActor, t.Null()], { description: 'Who acted; null for an anonymous caller' }),
    credential: AuditCredential,
    sourceAddress: t.String({
      description: 'Client address (the nearest untrusted hop behind PLATFORM_TRUSTED_PROXIES); empty in-process',
    }),
    org: t.Optional(t.String({ description: 'Name of the organization the action concerns' })),
    cluster: t.Optional(t.String({ description: 'The member cluster, owner/name' })),
    outcome: AuditOutcome,
    method: t.Optional(t.String({ description: 'api: the HTTP method; signin: password, totp, webauthn or sso' })),
    route: t.Optional(t.String({ description: 'api: the route template, e.g. /api/v1/orgs/{org}/members/{username}' })),
    target: t.Optional(
      t.Record(t.String(), t.String(), {
        description: "api: the route's path parameters; signin: {login} (the login tried); cli: what the command acted on",
      }),
    ),
    verb: t.Optional(
      t.String({
        description:
          'kubernetes: create, update, patch, delete, deletecollection, exec, attach or portforward; agent: connected, disconnected or refused',
      }),
    ),
    objectRef: t.Optional(AuditObjectRef),
    command: t.Optional(
      t.Union([t.Array(t.String()), t.String()], {
        description: 'exec: the command run (its words); cli: the command of the program, e.g. "admin create-user"',
      }),
    ),
    exitCode: t.Optional(t.Integer({ description: 'exec, attach: the exit code, once the stream ended with one' })),
    endTime: t.Optional(t.String({ format: 'date-time', description: 'A stream: when it ended' })),
  },
  { title: 'AuditEvent', description: 'Who did what at the door (docs/decisions.md §8). Never a body, password, token or secret.' },
)
export type AuditEvent = typeof AuditEvent.static
export type AuditObjectRef = typeof AuditObjectRef.static

export const AuditQuery = t.Object({
  ...PageQuery.properties,
  actor: t.Optional(t.String({ description: 'Only events of this actor (login)' })),
  kind: t.Optional(Kind('Only events of this kind')),
  cluster: t.Optional(t.String({ description: 'Only events about this cluster (owner/name)' })),
  result: t.Optional(Result('Only events with this result')),
  since: t.Optional(t.String({ description: 'Only events at or after this time (RFC 3339)' })),
  until: t.Optional(t.String({ description: 'Only events before this time (RFC 3339)' })),
})
export type AuditQuery = typeof AuditQuery.static
