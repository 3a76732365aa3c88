import { expect, test } from 'bun:test'
import { makeTestApp } from '../support/app'

interface OpenApiDocument {
  openapi: string
  paths: Record<string, Record<string, { summary?: string; 'x-permission'?: string }>>
}

/** Elysia's `:param` paths as OpenAPI writes them. */
const openapiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}')

test('GET /api/v1/swagger.json documents every registered API route with a summary and its permission', async () => {
  const t = await makeTestApp()
  const res = await t.request('GET', '/api/v1/swagger.json')
  expect(res.status).toBe(200)
  const doc = (await res.json()) as OpenApiDocument
  expect(doc.openapi).toMatch(/^3\./)
  const routes = t.app.routes.filter((r) => r.path.startsWith('/api/v1/') && !r.path.startsWith('/api/v1/swagger'))
  expect(routes.length).toBeGreaterThan(1)
  for (const route of routes) {
    // A wildcard route (the cluster proxy) is documented as the operations it answers; its first stands for them.
    const wildcard = route.path.endsWith('/*') ? openapiPath(route.path.slice(0, -1)) : undefined
    const path = wildcard ? Object.keys(doc.paths).find((p) => p.startsWith(wildcard)) : openapiPath(route.path)
    const methods = path ? doc.paths[path] : undefined
    const operation = route.method === 'ALL' ? Object.values(methods ?? {})[0] : methods?.[route.method.toLowerCase()]
    expect({
      route: `${route.method} ${route.path}`,
      documented: Boolean(operation?.summary),
      permission: typeof operation?.['x-permission'],
    }).toEqual({ route: `${route.method} ${route.path}`, documented: true, permission: 'string' })
  }
})

test('GET /api/v1/swagger → a browsable UI whose assets are served locally', async () => {
  const t = await makeTestApp()
  const page = await t.request('GET', '/api/v1/swagger')
  expect(page.status).toBe(200)
  const html = await page.text()
  expect(html).toContain('/api/v1/swagger/assets/swagger-ui-bundle.js')
  expect(html).not.toContain('unpkg.com')
  const bundle = await t.request('GET', '/api/v1/swagger/assets/swagger-ui-bundle.js')
  expect(bundle.status).toBe(200)
  expect((await bundle.text()).length).toBeGreaterThan(100_000)
  expect((await t.request('GET', '/api/v1/swagger/assets/package.json')).status).toBe(404)
})
