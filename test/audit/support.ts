import { expect } from 'bun:test'
import { readFileSync } from 'node:fs'
import type { AuditEvent } from '../../src/audit/schemas'
import { auditWriter } from '../../src/audit/writer'
import type { TestApp, TestUser } from '../support/app'

/** The events `who` reads at `path` (an audit route, with its query), failing loudly on a refusal. */
export async function auditAt(t: TestApp, who: TestUser, path = '/api/v1/admin/audit'): Promise<AuditEvent[]> {
  const res = await t.as(who).get(path)
  if (res.status !== 200) throw new Error(`GET ${path} → ${res.status} ${await res.text()}`)
  return (await res.json()) as AuditEvent[]
}

/** The one event of the request `requestId` in the site admin's view. */
export async function eventOf(t: TestApp, requestId: string): Promise<AuditEvent> {
  const events = (await auditAt(t, await t.admin(), '/api/v1/admin/audit?limit=50')).filter((e) => e.requestId === requestId)
  if (events.length !== 1) throw new Error(`expected one event of request ${requestId}, found ${events.length}`)
  return events[0]!
}

/** Every stored event, as the database holds it (what a grep for secrets must come up empty on). */
export async function storedEvents(t: TestApp): Promise<string> {
  return JSON.stringify(await t.deps.db.read.query.auditEvents.findMany())
}

/** The kubernetes events of cluster `cluster` (owner/name), oldest first, once the writer committed what is queued. */
export async function kubernetesEvents(t: TestApp, cluster: string): Promise<AuditEvent[]> {
  await auditWriter(t.deps).drain()
  return (await auditAt(t, await t.admin(), `/api/v1/admin/audit?kind=kubernetes&cluster=${cluster}&limit=100`)).reverse()
}

/** No stored event and no line of the audit log file `auditLog` holds any of `secrets`; the log has lines. */
export async function expectNoSecret(t: TestApp, auditLog: string, secrets: string[]): Promise<void> {
  await auditWriter(t.deps).drain()
  const stored = await storedEvents(t)
  const logged = readFileSync(auditLog, 'utf8')
  expect(logged.split('\n').filter(Boolean).length).toBeGreaterThan(0)
  for (const secret of secrets) {
    expect(stored).not.toContain(secret)
    expect(logged).not.toContain(secret)
  }
}
