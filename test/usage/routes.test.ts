import { describe, expect, test } from 'bun:test'
import { billingWorld } from './support'

/** Sweeps over every usage route of a billing-mode app (the general sweeps run without billing mode). */

const isUsage = (path: string) => /^\/api\/v1\/(usage|dashboard|dbaas|admin\/usage)\//.test(path)
const fill = (path: string) =>
  path.replace(
    /:(\w+)/g,
    (_, name: string) => (({ year: '2025', month: '10', product: 'dbprod', id: '1' }) as Record<string, string>)[name] ?? 'x',
  )

describe('usage routes', () => {
  test('each is in the OpenAPI document with a summary, its permission and its token scope', async () => {
    const w = await billingWorld()
    const doc = (await (await w.t.request('GET', '/api/v1/swagger.json')).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>
    }
    const routes = w.t.app.routes.filter((r) => isUsage(r.path))
    expect(routes.length).toBe(20)
    for (const r of routes) {
      const op = doc.paths[r.path.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()]
      expect({
        route: `${r.method} ${r.path}`,
        summary: typeof op?.summary,
        permission: typeof op?.['x-permission'],
        scope: typeof op?.['x-token-scope'],
      }).toEqual({ route: `${r.method} ${r.path}`, summary: 'string', permission: 'string', scope: 'string' })
    }
  })

  test('anonymous → 401 on each', async () => {
    const w = await billingWorld()
    const outcomes = []
    for (const r of w.t.app.routes.filter((x) => isUsage(x.path)))
      outcomes.push(
        `${r.method} ${r.path} ${(await w.t.request(r.method, `${fill(r.path)}?org=acme`, { body: r.method === 'POST' ? [] : undefined })).status}`,
      )
    expect(outcomes.filter((o) => !o.endsWith(' 401'))).toEqual([])
  })

  test('a site admin sends junk in every path parameter and query → 4xx or 200, never 5xx', async () => {
    const w = await billingWorld()
    const outcomes = []
    for (const r of w.t.app.routes.filter((x) => isUsage(x.path) && x.method === 'GET')) {
      for (const junk of ['%20', '9007199254740993', '-1', 'ü', '..']) {
        const path = r.path.replace(/:(\w+)/g, encodeURIComponent(junk))
        const res = await w.t.as(w.admin).get(`${path}?org=acme&view_type=${junk}&contractID=${junk}&period_start=${junk}`)
        if (res.status >= 500) outcomes.push(`${r.path} ${junk} → ${res.status}`)
      }
    }
    expect(outcomes).toEqual([])
  })
})
