import type { Actor } from '../authz/actor'
import type { AuditCredential, AuditEvent, AuditObjectRef, AuditResult } from './schemas'
import type { AuditRow } from './store'

/** An event as recorded, before the database gave it an id. */
export type AuditDraft = Omit<AuditRow, 'id'>

/** allowed below 400 (a stream that opened is 101), refused for 4xx, failed for 5xx and a client that left (499). */
export function resultOf(status: number): AuditResult {
  if (status < 400) return 'allowed'
  return status >= 500 || status === 499 ? 'failed' : 'refused'
}

/** The credential of a signed-in caller by kind, a token or OAuth2 application by name and id. */
export function credentialOf(actor: Actor): typeof AuditCredential.static {
  switch (actor.credential) {
    case 'token':
    case 'basic-token':
      return { kind: 'token', ...actor.token }
    case 'oauth':
      return { kind: 'oauth2', ...actor.oauthApp }
    case 'basic-password':
      return { kind: 'basic' }
    case 'session':
      return { kind: 'session' }
  }
}

const parsed = <T>(json: string | null): T | undefined => (json === null ? undefined : (JSON.parse(json) as T))
const present = <T>(value: T | null): T | undefined => (value === null ? undefined : value)

/** The wire shape of a stored event (docs/decisions.md §8): absent fields left out, JSON columns parsed. */
export function presentEvent(row: AuditRow): AuditEvent {
  return {
    id: row.id,
    time: row.time.toISOString(),
    requestId: row.requestId,
    kind: row.kind as AuditEvent['kind'],
    actor:
      row.actorId === null || row.actorLogin === null
        ? null
        : { id: row.actorId, login: row.actorLogin, ...(row.realLogin === null ? {} : { realLogin: row.realLogin }) },
    credential: {
      kind: row.credentialKind as AuditEvent['credential']['kind'],
      name: present(row.credentialName),
      id: present(row.credentialId),
    },
    sourceAddress: row.sourceAddress,
    org: present(row.org),
    cluster: present(row.cluster),
    outcome: { status: row.status, result: row.result as AuditResult },
    method: present(row.method),
    route: present(row.route),
    target: parsed<Record<string, string>>(row.target),
    verb: present(row.verb),
    objectRef: parsed<AuditObjectRef>(row.objectRef),
    command: parsed<string[] | string>(row.command),
    exitCode: present(row.exitCode),
    endTime: row.endTime?.toISOString(),
  }
}

/** The event as one line of JSON, its absent fields left out (the audit log, the bus). */
export const eventLine = (event: AuditEvent): string => JSON.stringify(event)
