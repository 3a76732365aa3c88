import { type AnyElysia, Elysia } from 'elysia'
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import swaggerBundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import { AppError } from '../errors'
import { jsonAnswer } from './json-answer'
import { buildOpenApiDocument } from './openapi-document'

export const DOCS_PATH = '/api/v1/swagger'
export const SPEC_PATH = '/api/v1/swagger.json'
const ASSETS_PATH = `${DOCS_PATH}/assets/:file`
/** The two files of the Swagger UI the page loads, served from here (no CDN). */
const ASSET_FILES: Record<string, string> = { 'swagger-ui-bundle.js': swaggerBundle, 'swagger-ui.css': swaggerCss }

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
  let document: string | undefined
  return new Elysia({ name: 'openapi' })
    .get(
      SPEC_PATH,
      async ({ request }) => {
        await checkCredential(request)
        document ??= JSON.stringify(buildOpenApiDocument(app, version, [DOCS_PATH, ASSETS_PATH, SPEC_PATH]))
        return jsonAnswer(document)
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
