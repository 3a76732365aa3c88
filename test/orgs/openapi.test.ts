import { describe, expect, test } from 'bun:test'
import { makeTestApp } from '../support/app'

const AREA = /^\/api\/v1\/(orgs|teams|user\/(orgs|teams|inbox|settings\/organizations))|^\/avatars\//

describe('OpenAPI document', () => {
  test('every route of the orgs and inbox areas is documented with a summary and its permission', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'hosted,marketplace' })
    const doc = (await (await t.request('GET', '/api/v1/swagger.json')).json()) as {
      paths: Record<string, Record<string, { summary?: string; 'x-permission'?: string }>>
    }
    const routes = t.app.routes.filter((r) => AREA.test(r.path))
    expect(routes.length).toBeGreaterThan(35)
    for (const route of routes) {
      const path = route.path.replace(/:(\w+)/g, '{$1}')
      const operation = doc.paths[path]?.[route.method.toLowerCase()]
      expect({
        route: `${route.method} ${path}`,
        summary: Boolean(operation?.summary),
        permission: operation?.['x-permission'] !== undefined,
      }).toEqual({ route: `${route.method} ${path}`, summary: true, permission: true })
    }
  })
})
