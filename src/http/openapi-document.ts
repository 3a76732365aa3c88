import { STATUS_CODES } from 'node:http'
import { toOpenAPISchema, unwrapSchema } from '@elysiajs/openapi/openapi'
import type { TObject, TSchema } from '@sinclair/typebox'
import type { AnyElysia } from 'elysia'

type JsonSchema = Record<string, unknown>
type Content = Record<string, { schema?: JsonSchema }>
interface Response {
  description?: string
  content?: Content | JsonSchema
}
interface Parameter {
  name: string
  in: string
  required?: boolean
  description?: string
  schema?: JsonSchema
}
interface Operation {
  operationId?: string
  summary?: string
  tags?: string[]
  parameters?: Parameter[]
  requestBody?: { description?: string; required?: boolean; content?: Content }
  responses?: Record<string, Response>
  security?: Record<string, string[]>[]
  'x-permission'?: string
  'x-credential'?: string
  'x-operations'?: DocumentedOperation[]
  [extension: `x-${string}`]: unknown
}
type Paths = Record<string, Record<string, Operation>>

/** A documented answer: a JSON schema, or another media type (`text/plain` logs), or none (204, 304, 101). */
export interface DocumentedResponse {
  description: string
  schema?: TSchema
  /** Default application/json when there is a schema. */
  mediaType?: string
}

/**
 * One operation of a route that answers many paths (a wildcard such as the cluster proxy): the route
 * lists them in `detail['x-operations']` and the document shows them in its place, each path
 * parameter a string.
 */
export interface DocumentedOperation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete'
  /** The OpenAPI path, absolute (`/api/v1/...`), with `{param}` templates. */
  path: string
  summary: string
  /** Descriptions of the path's `{param}`s, by name. */
  pathParameters: Record<string, string>
  query?: TObject
  body?: { schema: TSchema; required: boolean; mediaTypes?: string[] }
  responses: Record<number, DocumentedResponse>
}

/** How a caller proves who they are (docs/api/README.md, Authentication). */
const SECURITY_SCHEMES = {
  AuthorizationHeaderToken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'token <ACCESS_TOKEN>' },
  BasicAuth: { type: 'http', scheme: 'basic', description: 'Username and password; the token routes also take a one-time code' },
  Token: { type: 'apiKey', in: 'query', name: 'token', description: 'An access token in the query (for clients that cannot set headers)' },
  AccessToken: { type: 'apiKey', in: 'query', name: 'access_token', description: 'The same, under the name OAuth2 clients use' },
} as const
const ANY_CREDENTIAL = Object.keys(SECURITY_SCHEMES).map((scheme) => ({ [scheme]: [] }))
/** Routes anyone may call; a credential, when sent, is still checked (and changes what some answer). */
const OPTIONAL_CREDENTIAL = [{}, ...ANY_CREDENTIAL]
const PUBLIC_PERMISSIONS = new Set(['public', 'org-visible'])

const isObject = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The named schemas of the document. An object schema is named by its `title` (the contract's type
 * names, byte for byte), else by the operation it belongs to. A shape seen before is referenced
 * under its first name, so an untitled copy of a titled schema points at it.
 */
class SchemaNames {
  readonly schemas: Record<string, JsonSchema> = {}
  private readonly nameOfShape = new Map<string, string>()

  /** `schema` with every named object in it moved to the components and referenced. */
  refer(schema: JsonSchema, fallbackName?: string): JsonSchema {
    if (schema.type === 'array' && isObject(schema.items))
      return { ...schema, items: this.refer(schema.items, fallbackName && `${fallbackName}Item`) }
    if (schema.type !== 'object' || '$ref' in schema) return schema
    const name = typeof schema.title === 'string' ? schema.title : fallbackName
    const inner = this.referProperties(schema)
    return name ? { $ref: `#/components/schemas/${this.register(name, inner)}` } : inner
  }

  private referProperties(schema: JsonSchema): JsonSchema {
    if (!isObject(schema.properties)) return schema
    const properties = Object.fromEntries(
      Object.entries(schema.properties).map(([key, value]) => [key, isObject(value) ? this.refer(value) : value]),
    )
    return { ...schema, properties }
  }

  private register(name: string, schema: JsonSchema): string {
    const shape = JSON.stringify(schema)
    const known = this.nameOfShape.get(shape)
    if (known) return known
    let unique = name
    // Only generated names get a number: two shapes under one title fail the document's test.
    for (let n = 2; unique in this.schemas; n++) unique = `${name}${n}`
    this.schemas[unique] = schema
    this.nameOfShape.set(shape, unique)
    return unique
  }
}

/**
 * A copy of `value` without the `additionalProperties: false` Elysia's validator writes into a
 * schema when it first compiles it: what the document says must not depend on which routes have
 * answered yet, and the server ignores unknown body properties (docs/api/README.md).
 */
function withoutCompilerMarks<T>(value: T): T {
  return JSON.parse(JSON.stringify(value), (key, v) => (key === 'additionalProperties' && v === false ? undefined : v))
}

/** `post /api/v1/orgs/{org}/teams` → `PostOrgsOrgTeams`: a name for schemas that have none of their own. */
function operationName(method: string, path: string): string {
  const words = [method.toLowerCase(), ...path.replace(/^\/api\/v1\//, '').split(/[^A-Za-z0-9]+/)].filter(Boolean)
  return words.map((w) => w[0].toUpperCase() + w.slice(1)).join('')
}

const hasFile = (schema: JsonSchema): boolean =>
  schema.format === 'binary' || (isObject(schema.properties) && Object.values(schema.properties).some((p) => isObject(p) && hasFile(p)))

/**
 * The media types a route reads its body as: its declared parser; multipart when the body carries a
 * file; JSON otherwise (and the form encoding the OAuth2 standard prescribes).
 */
function mediaTypesOf(path: string, declared: unknown, body: JsonSchema): string[] {
  if (typeof declared === 'string' && declared.includes('/')) return [declared]
  if (hasFile(body)) return ['multipart/form-data']
  return path.startsWith('/login/oauth/') ? ['application/json', 'application/x-www-form-urlencoded'] : ['application/json']
}

/** A bodiless answer has no `content` (Elysia writes `{type: 'void'}` there); every answer gets a description. */
function normalizeResponses(responses: Record<string, Response>): void {
  for (const [status, response] of Object.entries(responses)) {
    const reason = STATUS_CODES[Number(status)] ?? `Status ${status}`
    if (response.description === undefined || response.description.startsWith('Response for status')) response.description = reason
    if (response.content && 'type' in response.content) delete response.content
  }
}

/** Each `{name}` of `path` as a required string parameter, described from `descriptions`. */
function pathParameters(path: string, descriptions: Record<string, string>): Parameter[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    description: descriptions[name],
    schema: { type: 'string' },
  }))
}

/** The query parameters of a TypeBox object, as OpenAPI writes them. */
function queryParameters(query: TObject | undefined): Parameter[] {
  if (!query) return []
  const required = new Set(query.required ?? [])
  return Object.entries(query.properties).map(([name, schema]) => {
    const { description, ...rest } = schema as JsonSchema
    return { name, in: 'query', required: required.has(name), description: description as string | undefined, schema: rest }
  })
}

/** The operations a wildcard route documents in its place (see DocumentedOperation). */
function expand(route: Operation, documented: DocumentedOperation[]): Paths {
  const { 'x-operations': _, parameters: _routeParameters, responses: shared = {}, operationId: _id, ...inherited } = route
  const paths: Paths = {}
  for (const op of documented) {
    const responses: Record<string, Response> = { ...shared }
    for (const [status, answer] of Object.entries(op.responses))
      responses[status] = {
        description: answer.description,
        ...(answer.schema ? { content: { [answer.mediaType ?? 'application/json']: { schema: answer.schema as JsonSchema } } } : {}),
      }
    paths[op.path] ??= {}
    paths[op.path][op.method] = {
      ...inherited,
      summary: op.summary,
      parameters: [...pathParameters(op.path, op.pathParameters), ...queryParameters(op.query)],
      ...(op.body
        ? {
            requestBody: {
              required: op.body.required,
              content: Object.fromEntries(
                (op.body.mediaTypes ?? ['application/json']).map((type) => [type, { schema: op.body?.schema as JsonSchema }]),
              ),
            },
          }
        : {}),
      responses,
    }
  }
  return paths
}

/** Who may call an operation, from the permission its guard declared. */
function securityOf(operation: Operation): Record<string, string[]>[] {
  if (PUBLIC_PERMISSIONS.has(operation['x-permission'] ?? '')) return OPTIONAL_CREDENTIAL
  if (operation['x-credential'] === 'password') return [{ BasicAuth: [] }]
  return ANY_CREDENTIAL
}

/**
 * Builds the OpenAPI document from the app's routes: Elysia's generator for paths and parameters,
 * then every request body (which the generator leaves without content, since bodies are parsed by
 * our own hook) and every JSON schema named in `components.schemas` and referenced, the
 * wildcard routes' documented operations in their place, and who may call each operation.
 */
export function buildOpenApiDocument(app: AnyElysia, version: string, hidden: string[]) {
  // staticFile off: the generator would drop every path with a dot, an API route such as `…/agent.yaml` included.
  const generated = withoutCompilerMarks(toOpenAPISchema(app, { paths: hidden, staticFile: false }))
  const paths = generated.paths as Paths
  for (const route of app.routes) {
    const body = route.hooks.body === undefined ? undefined : (unwrapSchema(route.hooks.body) as JsonSchema | undefined)
    const path = route.path.replace(/:(\w+)/g, '{$1}')
    const operation = paths[path]?.[route.method.toLowerCase()]
    if (!body || !operation) continue
    operation.requestBody = {
      description: operation.requestBody?.description,
      content: Object.fromEntries(
        mediaTypesOf(route.path, route.hooks.type, body).map((type) => [type, { schema: withoutCompilerMarks(body) }]),
      ),
    }
  }
  for (const [path, methods] of Object.entries(paths)) {
    const documented = Object.values(methods).find((operation) => operation['x-operations'])
    if (!documented) continue
    delete paths[path]
    for (const [documentedPath, operations] of Object.entries(expand(documented, documented['x-operations'] ?? [])))
      paths[documentedPath] = { ...paths[documentedPath], ...operations }
  }
  const names = new SchemaNames()
  const operationIds = new Set<string>()
  for (const [path, methods] of Object.entries(paths))
    for (const [method, operation] of Object.entries(methods)) {
      const name = operationName(method, path)
      let id = name
      for (let n = 2; operationIds.has(id); n++) id = `${name}${n}`
      operationIds.add(id)
      operation.operationId = id[0].toLowerCase() + id.slice(1)
      operation.security = securityOf(operation)
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {}))
        if (media.schema) media.schema = names.refer(media.schema, `${name}Body${type === 'application/json' ? '' : 'Form'}`)
      normalizeResponses(operation.responses ?? {})
      for (const [status, response] of Object.entries(operation.responses ?? {}))
        for (const media of Object.values((response.content ?? {}) as Content))
          if (media.schema) media.schema = names.refer(media.schema, `${name}${status}Response`)
    }
  return {
    openapi: '3.1.0',
    info: {
      title: 'platform-api',
      version,
      description:
        'Identity, organizations, member-cluster proxy, deployment orders and usage reports. Unknown properties of a request body are ignored.',
    },
    servers: [{ url: '/', description: 'This server' }],
    paths,
    components: { schemas: names.schemas, securitySchemes: SECURITY_SCHEMES },
    security: ANY_CREDENTIAL,
  }
}
