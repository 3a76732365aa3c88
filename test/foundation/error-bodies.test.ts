import { describe, expect, test } from 'bun:test'
import { makeTestApp } from '../support/app'

/** Decisions §1: every non-2xx answer (but 101/204/302/304) carries {message, url}. */
describe('error bodies', () => {
  test('an unknown swagger asset → 404 with the JSON error body', async () => {
    const t = await makeTestApp()
    const res = await t.request('GET', '/api/v1/swagger/assets/package.json')
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(Object.keys(await res.json()).sort()).toEqual(['message', 'url'])
  })

  test('anonymous GET of every route with junk params → any 4xx carries {message, url} as JSON', async () => {
    const t = await makeTestApp()
    const odd: string[] = []
    for (const route of t.app.routes.filter((r) => r.method === 'GET' && !r.path.startsWith('/login/oauth'))) {
      const res = await t.request('GET', route.path.replace(/:(\w+)/g, 'no-such-thing'))
      if (res.status < 400) continue
      const text = await res.text()
      let keys: string[] = []
      try {
        keys = Object.keys(JSON.parse(text))
      } catch {
        /* not JSON: reported below */
      }
      if (!keys.includes('message') || !keys.includes('url')) odd.push(`${route.path} → ${res.status} ${text.slice(0, 40)}`)
    }
    expect(odd).toEqual([])
  })
})
