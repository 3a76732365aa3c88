import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { startSession } from '../../src/identity/sessions/service'
import { makeTestApp } from '../support/app'
import { billingWorld, event, requests, send } from '../usage/support'

/** docs/decisions.md §1: every timestamp of an answer is RFC 3339 UTC to the second. */
const RFC3339_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/

describe('one timestamp form in every answer', () => {
  test('an OAuth2 application, the sign-in sessions and a user: created, createdAt, lastSeenAt, last_login all end in :ssZ', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const app = await (
      await t.as(alice!).send('POST', '/api/v1/user/settings/applications/oauth2', { name: 'x', redirect_uris: ['https://a.example/cb'] })
    ).json()
    expect(app.created).toMatch(RFC3339_SECONDS)
    expect((await (await t.as(alice!).get(`/api/v1/user/settings/applications/oauth2/${app.id}`)).json()).created).toMatch(RFC3339_SECONDS)
    const session = await startSession(t.deps.db, alice!.user, { ip: '', userAgent: 'test', remember: false }, t.clock.seconds())
    const sessions = await (
      await t.request('GET', '/api/v1/user/settings/security/sessions/', { headers: { cookie: `platform_session=${session.secret}` } })
    ).json()
    expect(sessions.length).toBe(1)
    for (const field of ['createdAt', 'lastSeenAt']) expect(sessions[0][field]).toMatch(RFC3339_SECONDS)
    const user = await (await t.as(alice!).get('/api/v1/user')).json()
    for (const field of ['created', 'last_login']) expect(user[field]).toMatch(RFC3339_SECONDS)
  })

  test("usage: a DBaaS report's firstSeen and lastSeen and a contract's start and end end in :ssZ", async () => {
    const w = await billingWorld()
    const spec = { uid: 'db', cluster: { uid: 'c1', name: 'one' }, namespace: 'client-a' }
    const now = Date.now()
    await send(w, [
      event(spec, now - 3 * 3_600_000, 'created', requests('1', '1Gi')),
      event(spec, now - 3_599_500, 'heartbeat', requests('1', '1Gi')),
    ])
    const report = await (await w.t.as(w.owner).get('/api/v1/dbaas/billing/reports/clusters/c1/namespaces/client-a?org=acme')).json()
    const seen = JSON.stringify(report).match(/"(firstSeen|lastSeen)":"[^"]*"/g) ?? []
    expect(seen.length).toBeGreaterThan(0)
    for (const pair of seen) expect(pair.split('":"')[1]!.slice(0, -1)).toMatch(RFC3339_SECONDS)
    const contract = await (
      await w.t.as(w.admin).send('POST', '/api/v1/admin/usage/contracts', {
        org: 'acme',
        product: 'dbprod',
        kind: 'paid',
        start: '2025-10-01T00:00:00Z',
        end: '2025-10-16T00:00:00.000Z',
      })
    ).json()
    expect(contract.start).toBe('2025-10-01T00:00:00Z')
    expect(contract.end).toBe('2025-10-16T00:00:00Z')
  })
})

describe('one formatter', () => {
  /**
   * Where toISOString may appear: the formatter itself, log lines, dates without a time, the PDF's printed text, names
   * made of a time (the CLI's token, a pre-migration copy), the backup manifest (a file, no answer), the emulator
   * (Kubernetes' own forms), and the audit events, whose times keep their milliseconds (an event log's order within
   * a second; docs/api/audit.md).
   */
  const ALLOWED = [
    'src/clock.ts',
    'src/logger.ts',
    'src/usage/calendar.ts',
    'src/usage/pdf/report.ts',
    'src/cli/admin.ts',
    'src/storage/migrations.ts',
    'src/system/backup.ts',
    'src/audit/event.ts',
  ]

  test('no module of src/ formats an answer timestamp with toISOString itself: they all call rfc3339 (src/clock.ts)', () => {
    const root = resolve(import.meta.dir, '../..')
    const offenders: string[] = []
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name)
        const name = relative(root, path)
        if (entry.isDirectory()) {
          if (name !== 'src/kube-emulator') walk(path)
        } else if (name.endsWith('.ts') && !ALLOWED.includes(name) && readFileSync(path, 'utf8').includes('.toISOString()'))
          offenders.push(name)
      }
    }
    walk(join(root, 'src'))
    expect(offenders).toEqual([])
  })
})
