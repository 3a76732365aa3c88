import { describe, expect, test } from 'bun:test'
import { pathOnThisSite } from '../../src/console/web/paths'
import { makeTestApp } from '../support/app'
import { expectAt, expectClean, withConsole } from './support'

const POLICY = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"

describe('serving the console', () => {
  test('GET /login → the page under a strict policy, no inline script or style, its files named for their content and cached for good', async () => {
    const t = await makeTestApp()
    const page = await t.request('GET', '/login')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('content-security-policy')).toBe(POLICY)
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(page.headers.get('referrer-policy')).toBe('same-origin')
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    expect(page.headers.get('cache-control')).toBe('no-cache')
    const html = await page.text()
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]|<style|style=|https?:\/\//)
    const files = [...html.matchAll(/\/console\/assets\/([\w.-]+)/g)].map((m) => m[1]!)
    expect(files).toEqual([expect.stringMatching(/^main-\w{8}\.css$/), expect.stringMatching(/^main-\w{8}\.js$/)])
    for (const file of files) {
      const res = await t.request('GET', `/console/assets/${file}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect(res.headers.get('content-security-policy')).toBe(POLICY)
      expect(res.headers.get('content-type')).toMatch(file.endsWith('.js') ? /^text\/javascript/ : /^text\/css/)
    }
  })

  test('an unknown console file → 404 with the JSON error body', async () => {
    const t = await makeTestApp()
    const res = await t.request('GET', '/console/assets/main-00000000.js')
    expect(res.status).toBe(404)
    expect((await res.json()).message).toBe('Not Found')
  })

  test('a browser with an ended session cookie still gets the sign-in page, not a 401', async () => {
    const t = await makeTestApp()
    const res = await t.request('GET', '/login', { headers: { cookie: 'platform_session=ended' } })
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('<div id="console">')
    expect((await t.request('GET', '/api/v1/user', { headers: { cookie: 'platform_session=ended' } })).status).toBe(401)
  })

  test('PLATFORM_CONSOLE=false → the pages and files are 404 and the API answers as before', async () => {
    const on = await makeTestApp()
    const html = await (await on.request('GET', '/login')).text()
    const script = html.match(/\/console\/assets\/[\w.-]+\.js/)![0]
    const t = await makeTestApp({ PLATFORM_CONSOLE: 'false' })
    for (const path of ['/', '/login', script, '/console/favicon.svg']) {
      const res = await t.request('GET', path)
      expect({ path, status: res.status }).toEqual({ path, status: 404 })
      expect(res.headers.get('content-type')).toStartWith('application/json')
    }
    const [alice] = await t.users('alice')
    const me = await t.as(alice!).get('/api/v1/user')
    expect(me.status).toBe(200)
    expect((await me.json()).login).toBe('alice')
  })
})

describe('redirect_to: paths on this site only', () => {
  const origin = 'http://localhost:3000'
  test.each([
    ['/clusters/alice/prod?tab=1', '/clusters/alice/prod?tab=1'],
    ['/', '/'],
    ['https://evil.example/', '/'],
    ['//evil.example/x', '/'],
    ['/\\evil.example', '/'],
    ['javascript:alert(1)', '/'],
    ['', '/'],
    [null, '/'],
  ])('redirect_to %p → %p', (target, expected) => {
    expect(pathOnThisSite(target, origin)).toBe(expected)
  })
})

describe('the console in Chromium', () => {
  test('a signed-out visit to / → the sign-in page, which is clean (no script error, no other origin, axe, 360 px)', async () => {
    await withConsole(async ({ origin, open }) => {
      const page = await open('/')
      await expectAt(page, origin, '/login', 'Sign in')
      expect(await page.title()).toBe('Sign in · platform-api')
      await expectClean(page, 'login')
    })
  }, 60_000)
})
