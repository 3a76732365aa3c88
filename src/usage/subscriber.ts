import type { Deps } from '../deps'
import { AppError } from '../errors'
import { statusOf } from '../http/errors'
import type { BusMessage } from '../msgbus/nats'
import { closeOrgSubscribers, type OrgAccountSubscription } from '../msgbus/org-subscribers'
import { findOrgById } from '../orgs/store'
import { eventsOfMessage } from './body'
import { type IngestResult, ingestEvents } from './ingest'
import type { UsageBusAnswer } from './schemas'

/**
 * Usage events published on `usage.events.<org>` (docs/decisions.md §5a), ingested by the platform's
 * subscriber in each org account (msgbus/org-subscribers.ts). The account decides the org: a
 * subject naming another org is refused, never ingested anywhere. A request is answered with the
 * route's `{accepted, duplicates, rejected}` once the events are stored (so every later read sees
 * them), or `{error}` with the NATS service-error headers; a plain publish is only logged.
 */

const PREFIX = 'usage.events.'
/** Queue group: with several platform processes each message is ingested once (idempotency covers redelivery). */
const QUEUE = 'platform-usage-events'

export const SubscriberMessages = {
  otherOrg: (named: string, org: string) =>
    `the subject names organization "${named}" but these credentials belong to organization "${org}": publish on ${PREFIX}${org}`,
  orgGone: 'the organization of these credentials no longer exists',
  notUtf8: 'the message is not UTF-8 text',
  tooLarge: (max: number) => `the message is larger than ${max} bytes, the limit of POST /usage/events`,
  failed: 'the events could not be stored; nothing was kept, send them again',
} as const

/** The subscription createApp runs in every org account in billing mode. */
export const usageEventsSubscription = (deps: Deps): OrgAccountSubscription => ({
  name: 'usage-events',
  subject: `${PREFIX}>`,
  queue: QUEUE,
  handle: (orgId, message) => handleUsageMessage(deps, orgId, message),
})

/** Ingests one message of org `orgId`'s account and answers it; never throws. */
async function handleUsageMessage(deps: Deps, orgId: number, message: BusMessage): Promise<void> {
  const named = message.subject.slice(PREFIX.length)
  const fields = { orgId, subject: message.subject, bytes: message.data.byteLength, request: message.expectsReply }
  try {
    const result = await ingestMessage(deps, orgId, named, message.data)
    deps.log.info('usage events from the message bus', {
      ...fields,
      accepted: result.accepted,
      duplicates: result.duplicates,
      rejected: result.rejectedCount,
    })
    const answer: UsageBusAnswer = result
    message.respond(JSON.stringify(answer))
  } catch (error) {
    const known = error instanceof AppError && error.kind !== 'internal'
    const reason = known ? error.message : SubscriberMessages.failed
    if (known) deps.log.info('usage events from the message bus refused', { ...fields, reason })
    else
      deps.log.error('usage events from the message bus failed', {
        ...fields,
        error: error instanceof Error ? `${error.name}: ${error.message}` : 'non-Error thrown',
      })
    const answer: UsageBusAnswer = { error: reason }
    // The NATS services convention, so `nats req` and micro clients see an error too.
    message.respond(JSON.stringify(answer), {
      'Nats-Service-Error': reason,
      'Nats-Service-Error-Code': String(known ? statusOf(error.kind) : 500),
    })
    // A deleted org's subscriber goes with it, once the answer is out; a later message finds no responder.
    if (reason === SubscriberMessages.orgGone) void closeOrgSubscribers(deps, orgId)
  }
}

/** Throws notFound (org deleted), forbidden (subject names another org), payloadTooLarge, invalid. */
async function ingestMessage(deps: Deps, orgId: number, named: string, data: Uint8Array): Promise<IngestResult> {
  const org = await findOrgById(deps.db.read, orgId)
  if (!org) throw new AppError('notFound', SubscriberMessages.orgGone)
  if (named.toLowerCase() !== org.lowerName) throw new AppError('forbidden', SubscriberMessages.otherOrg(named, org.name))
  // The server's max_payload bounds messages (1 MiB by default); the route's limit holds if it is raised further.
  if (data.byteLength > deps.config.maxBodyBytes)
    throw new AppError('payloadTooLarge', SubscriberMessages.tooLarge(deps.config.maxBodyBytes))
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data)
  } catch {
    throw new AppError('invalid', SubscriberMessages.notUtf8)
  }
  return ingestEvents(deps, orgId, eventsOfMessage(text))
}
