import { afterAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import YAML from 'yaml'
import type { AuditEvent } from '../../src/audit/schemas'
import { pruneAuditEventsPeriodically } from '../../src/audit/service'
import { auditWriter } from '../../src/audit/writer'
import { startEmulator } from '../../src/kube-emulator'
import { basic, makeTestApp, PASSWORD, tempDir } from '../support/app'
import { auditAt, eventOf, storedEvents } from './support'

const member = await startEmulator({ tls: true, seed: true })
afterAll(() => member.stop())

const b64 = (text: string) => Buffer.from(text).toString('base64')
const kubeconfig = YAML.stringify({
  apiVersion: 'v1',
  kind: 'Config',
  'current-context': 'member',
  clusters: [{ name: 'm', cluster: { server: member.url, 'certificate-authority-data': b64(member.caCertPem!) } }],
  users: [{ name: 'u', user: { token: member.token } }],
  contexts: [{ name: 'member', context: { cluster: 'm', user: 'u' } }],
})
const CLOUD_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'

describe('PLATFORM_AUDIT_LOG and what events never hold', () => {
  test('a session of sign-ins, token minting, a cluster import and a cloud secret → one log line per event; no secret anywhere', async () => {
    const log = join(tempDir(), 'audit.jsonl')
    const t = await makeTestApp({ PLATFORM_AUDIT_LOG: log, PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
    const [alice] = await t.users('alice')
    const wrongPassword = 'hunter2-wrong-password'
    expect((await t.request('POST', '/api/v1/user/signin', { body: { username: 'alice', password: wrongPassword } })).status).toBe(422)
    expect((await t.request('POST', '/api/v1/user/signin', { body: { username: 'alice', password: PASSWORD } })).status).toBe(200)
    const minted = await t.request('POST', '/api/v1/users/alice/tokens', {
      body: { name: 'ci', scopes: ['all'] },
      headers: { authorization: basic('alice', PASSWORD) },
    })
    const token = ((await minted.json()) as { sha1: string }).sha1
    const imported = await t.request('POST', '/api/v1/clustersv2/alice/import', {
      token,
      body: { name: 'dev', kubeconfig },
      headers: { 'x-request-id': 'import-1' },
    })
    expect(imported.status).toBe(201)
    const cloud = await t.request('POST', '/api/v1/user/credentials', {
      token,
      body: { name: 'aws1', type: 'Aws', aws: { accessKeyID: 'AKIAEXAMPLE', secretAccessKey: CLOUD_SECRET, region: 'eu-west-1' } },
    })
    expect(cloud.status).toBeLessThan(300)
    expect(
      (await t.request('DELETE', '/api/v1/users/alice/tokens/ci', { headers: { authorization: basic('alice', PASSWORD) } })).status,
    ).toBe(204)
    await auditWriter(t.deps).drain()

    expect(await eventOf(t, 'import-1')).toMatchObject({
      actor: { login: 'alice' },
      credential: { kind: 'token', name: 'ci' },
      cluster: 'alice/dev',
      route: '/api/v1/clustersv2/{owner}/import',
      outcome: { status: 201, result: 'allowed' },
    })
    const lines = readFileSync(log, 'utf8').trimEnd().split('\n')
    const logged = lines.map((line) => JSON.parse(line) as AuditEvent)
    const events = await auditAt(t, await t.admin(), '/api/v1/admin/audit?limit=50')
    expect(logged.map((e) => e.id).sort((a, b) => a - b)).toEqual(events.map((e) => e.id).sort((a, b) => a - b))
    expect(logged.find((e) => e.requestId === 'import-1')).toEqual(events.find((e) => e.requestId === 'import-1')!)
    const everything = `${readFileSync(log, 'utf8')}\n${await storedEvents(t)}`
    for (const secret of [PASSWORD, wrongPassword, token, alice!.token, member.token, CLOUD_SECRET])
      expect(everything.includes(secret)).toBe(false)
  })
})

describe('retention', () => {
  test('the periodic job prunes events older than PLATFORM_AUDIT_RETENTION_DAYS, keeps newer ones, and runs once an hour', async () => {
    const t = await makeTestApp({ PLATFORM_AUDIT_RETENTION_DAYS: '2' })
    const [olga] = await t.users('olga')
    await t.as(olga!).send('POST', '/api/v1/orgs', { username: 'old' }, { 'x-request-id': 'old' })
    t.clock.advance(36 * 3600 * 1000)
    await t.as(olga!).send('POST', '/api/v1/orgs', { username: 'recent' }, { 'x-request-id': 'recent' })
    t.clock.advance(24 * 3600 * 1000)
    const job = pruneAuditEventsPeriodically(t.deps)
    expect(await job.runIfDue()).toBe(true)
    expect((await auditAt(t, olga!, '/api/v1/user/audit')).map((e) => e.requestId)).toEqual(['recent'])
    t.clock.advance(30 * 60 * 1000)
    expect(await job.runIfDue()).toBe(false)
    t.clock.advance(31 * 60 * 1000)
    expect(await job.runIfDue()).toBe(true)
    await job.stop()
  })
})
