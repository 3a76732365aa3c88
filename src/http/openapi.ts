import { toOpenAPISchema, unwrapSchema } from '@elysiajs/openapi/openapi'
import { type AnyElysia, Elysia } from 'elysia'
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import swaggerBundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import { AppError } from '../errors'

export const DOCS_PATH = '/api/v1/swagger'
export const SPEC_PATH = '/api/v1/swagger.json'
const ASSETS_PATH = `${DOCS_PATH}/assets/:file`
/** The two files of the Swagger UI the page loads, served from here (no CDN). */
const ASSET_FILES: Record<string, string> = { 'swagger-ui-bundle.js': swaggerBundle, 'swagger-ui.css': swaggerCss }

type JsonSchema = Record<string, unknown>
type Operation = {
  operationId?: string
  requestBody?: { description?: string; content?: Record<string, { schema: JsonSchema }> }
  responses?: Record<string, { content?: Record<string, { schema: JsonSchema }> }>
}

/** A schema description that is a type name (`SignInParams`, `User`) rather than prose. */
const TYPE_NAME = /^[A-Z][A-Za-z0-9]*$/

/**
 * The named schemas of the document. An object schema is named by its description when that is a
 * type name (the spec's names, byte for byte), else by the operation it belongs to; one name per
 * distinct shape (a second shape under a taken name gets a number).
 */
class SchemaNames {
  readonly schemas: Record<string, JsonSchema> = {}
  private readonly nameOfShape = new Map<string, string>()

  /** `schema` with every named object in it moved to the components and referenced. */
  refer(schema: JsonSchema, fallbackName?: string): JsonSchema {
    if (schema.type === 'array' && isObject(schema.items))
      return { ...schema, items: this.refer(schema.items, fallbackName && `${fallbackName}Item`) }
    if (schema.type !== 'object' || '$ref' in schema) return schema
    const description = typeof schema.description === 'string' && TYPE_NAME.test(schema.description) ? schema.description : undefined
    const name = description ?? fallbackName
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
    for (let n = 2; unique in this.schemas; n++) unique = `${name}${n}`
    this.schemas[unique] = schema
    this.nameOfShape.set(shape, unique)
    return unique
  }
}

const isObject = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value)

/** `post /api/v1/orgs/{org}/teams` → `PostOrgsOrgTeams`: a name for schemas that have none of their own. */
function operationName(method: string, path: string): string {
  const words = [method.toLowerCase(), ...path.replace(/^\/api\/v1\//, '').split(/[^A-Za-z0-9]+/)].filter(Boolean)
  return words.map((w) => w[0].toUpperCase() + w.slice(1)).join('')
}

const hasFile = (schema: JsonSchema): boolean =>
  schema.format === 'binary' || (isObject(schema.properties) && Object.values(schema.properties).some((p) => isObject(p) && hasFile(p)))

/**
 * The media types a body is read as: multipart when it carries a file, JSON otherwise; the OAuth2
 * endpoints also take the form encoding their standard prescribes.
 */
function mediaTypesOf(path: string, schema: JsonSchema): string[] {
  if (hasFile(schema)) return ['multipart/form-data']
  return path.startsWith('/login/oauth/') ? ['application/json', 'application/x-www-form-urlencoded'] : ['application/json']
}

/**
 * Builds the OpenAPI document from the app's routes: Elysia's generator for paths and parameters,
 * then every request body (which the generator leaves without content, since bodies are parsed by
 * our own hook) and every JSON response schema named in `components.schemas` and referenced.
 */
export function buildOpenApiDocument(app: AnyElysia, version: string) {
  const { paths, components } = toOpenAPISchema(app, { paths: [DOCS_PATH, ASSETS_PATH, SPEC_PATH] })
  const operations = paths as Record<string, Record<string, Operation>>
  const names = new SchemaNames()
  for (const route of app.routes) {
    const body = route.hooks.body === undefined ? undefined : (unwrapSchema(route.hooks.body) as JsonSchema | undefined)
    const path = route.path.replace(/:(\w+)/g, '{$1}')
    const operation = operations[path]?.[route.method.toLowerCase()]
    if (!body || !operation) continue
    const schema = names.refer(body, `${operationName(route.method, path)}Body`)
    operation.requestBody = {
      description: operation.requestBody?.description,
      content: Object.fromEntries(mediaTypesOf(route.path, body).map((type) => [type, { schema }])),
    }
  }
  const operationIds = new Set<string>()
  for (const [path, methods] of Object.entries(operations))
    for (const [method, operation] of Object.entries(methods)) {
      // One id per method and path: a route for every method (the proxy) would otherwise repeat one.
      let id = operationName(method, path)
      for (let n = 2; operationIds.has(id); n++) id = `${operationName(method, path)}${n}`
      operationIds.add(id)
      operation.operationId = id[0].toLowerCase() + id.slice(1)
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const json = response.content?.['application/json']
        if (json) json.schema = names.refer(json.schema, `${operationName(method, path)}${status}Response`)
      }
    }
  return {
    openapi: '3.1.0',
    info: {
      title: 'platform-api',
      version,
      description: 'Identity, organizations, member-cluster proxy, deployment orders and usage reports.',
    },
    paths,
    components: {
      ...components,
      schemas: names.schemas,
      securitySchemes: {
        AuthorizationHeaderToken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'token <ACCESS_TOKEN>' },
        BasicAuth: { type: 'http', scheme: 'basic' },
        Token: { type: 'apiKey', in: 'query', name: 'token' },
      },
    },
    security: [{ AuthorizationHeaderToken: [] }, { BasicAuth: [] }, { Token: [] }],
  }
}

/** The browsable UI: the local swagger-ui-dist bundle (no CDN: self-hosted machines may be offline) reading the document. */
const SWAGGER_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>platform-api API</title><link rel="stylesheet" href="${DOCS_PATH}/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="${DOCS_PATH}/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '${SPEC_PATH}', dom_id: '#swagger-ui', deepLinking: true })</script>
</body>
</html>`

/**
 * The OpenAPI document of `app` (built once, on first request, when every route is registered)
 * and the Swagger UI. Public, but a credential that is present and invalid is 401 here too
 * (docs/decisions.md §1).
 */
export const openapiDocs = (app: AnyElysia, version: string, checkCredential: (request: Request) => Promise<unknown>) => {
  let document: ReturnType<typeof buildOpenApiDocument> | undefined
  return new Elysia({ name: 'openapi' })
    .get(
      SPEC_PATH,
      async ({ request }) => {
        await checkCredential(request)
        document ??= buildOpenApiDocument(app, version)
        return document
      },
      { detail: { hide: true } },
    )
    .get(
      DOCS_PATH,
      async ({ request }) => {
        await checkCredential(request)
        return new Response(SWAGGER_PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } })
      },
      { detail: { hide: true } },
    )
    .get(
      ASSETS_PATH,
      ({ params }) => {
        const file = Object.hasOwn(ASSET_FILES, params.file) ? ASSET_FILES[params.file] : undefined
        if (!file) throw new AppError('notFound', 'Not Found')
        return new Response(Bun.file(file), { headers: { 'cache-control': 'public, max-age=86400' } })
      },
      { detail: { hide: true } },
    )
}
