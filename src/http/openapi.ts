import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import { dirname, join } from 'node:path'
import { AppError } from './errors'

export const DOCS_PATH = '/api/v1/swagger'
export const SPEC_PATH = '/api/v1/swagger.json'
const ASSETS = join(dirname(require.resolve('swagger-ui-dist/package.json')))

/**
 * The OpenAPI document, generated from the route schemas, and a browsable Swagger UI served
 * from the local swagger-ui-dist package (no CDN: self-hosted machines may be offline).
 */
export const openapiDocs = (version: string, checkCredential: (request: Request) => Promise<unknown>) =>
  new Elysia({ name: 'openapi' })
    // The document is public, but a credential that is present and invalid is 401 here too (decisions §1).
    .onRequest(async ({ request }) => {
      const path = new URL(request.url).pathname
      if (path === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`) || path === SPEC_PATH) await checkCredential(request)
    })
    .use(openapi({
      path: DOCS_PATH,
      specPath: SPEC_PATH,
      provider: 'swagger-ui',
      // An absolute spec URL: the plugin's default is relative to the page, which resolves to
      // /api/v1/api/v1/swagger.json. Its options type leaves `url` out, though its page honours it.
      swagger: { cdn: `${DOCS_PATH}/assets/swagger-ui-bundle.js`, theme: `${DOCS_PATH}/assets/swagger-ui.css`, ...({ url: SPEC_PATH } as object) },
      exclude: { paths: [`${DOCS_PATH}/assets/:file`] },
      documentation: {
        info: { title: 'platform-api', version, description: 'Identity, organizations, member-cluster proxy, deployment orders and usage reports.' },
        components: {
          securitySchemes: {
            AuthorizationHeaderToken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'token <ACCESS_TOKEN>' },
            BasicAuth: { type: 'http', scheme: 'basic' },
            Token: { type: 'apiKey', in: 'query', name: 'token' },
          },
        },
        security: [{ AuthorizationHeaderToken: [] }, { BasicAuth: [] }, { Token: [] }],
      },
    }))
    .get(`${DOCS_PATH}/assets/:file`, ({ params }) => {
      if (params.file !== 'swagger-ui-bundle.js' && params.file !== 'swagger-ui.css') throw new AppError('notFound', 'Not Found')
      return new Response(Bun.file(join(ASSETS, params.file)), { headers: { 'cache-control': 'public, max-age=86400' } })
    }, { detail: { hide: true } })
