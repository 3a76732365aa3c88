import type { components } from './openapi'

export type AuditEvent = components['schemas']['AuditEvent']

/**
 * What an event did, in one line (docs/api/audit.md): the API call, the sign-in and whom it tried to reach, the
 * command, or the verb and its object (a Kubernetes call, an agent's connection). The org's and the site's audit
 * tables both show it.
 */
export function auditSummary(event: AuditEvent): string {
  if (event.kind === 'api') return `${event.method ?? ''} ${event.route ?? ''}`
  if (event.kind === 'signin') return `${event.method ?? ''} sign-in as ${event.target?.login ?? ''}`
  if (event.kind === 'cli') return Array.isArray(event.command) ? event.command.join(' ') : (event.command ?? '')
  const ref = event.objectRef
  const object = ref ? ` ${[ref.namespace, ref.resource, ref.name].filter(Boolean).join('/')}` : ''
  return `${event.verb ?? ''}${object}`
}
