import { eventLine } from '../audit/event'
import type { AuditSink } from '../audit/writer'
import { type Deps, runtimeSlot } from '../deps'
import { messageOf } from '../errors'
import { accountKeys, orgAccount } from './accounts'
import { ensureAccountPushed, systemLink } from './bus'
import { credsFile, newKeyPair, userJwt } from './claims'
import { type AccountPublisher, publishAsAccountUser } from './nats'
import * as store from './store'

/** The subject an org's audit events are published on, in the org's account (docs/decisions.md §8). */
export const auditSubject = (orgName: string) => `audit.${orgName}`

/** Org id → its account's publisher, being opened or open (undefined: the org has no account, or opening failed). */
type Publishers = Map<number, Promise<AccountPublisher | undefined>>

const PUBLISHERS = runtimeSlot(
  'org account publishers',
  (): Publishers => new Map(),
  async (publishers) => {
    const open = [...publishers.values()]
    publishers.clear()
    await Promise.all(open.map(async (p) => (await p)?.close()))
  },
)

/**
 * The platform's publisher in org `orgId`'s account: a user it signs with the account's signing
 * key (never recorded, living only in this process) that may publish `audit.>` and subscribe to
 * nothing. Undefined while the org has no account (it issued no credentials: nobody could
 * subscribe); nothing is made for it.
 */
async function openPublisher(deps: Deps, orgId: number): Promise<AccountPublisher | undefined> {
  const account = orgAccount(orgId)
  if (!(await store.findKey(deps.db.read, account))) return undefined
  await ensureAccountPushed(deps, await systemLink(deps), account)
  const keys = await accountKeys(deps, account)
  const user = newKeyPair('user')
  const jwt = await userJwt(user, keys.signer, {
    name: 'platform-audit',
    accountPublicKey: keys.publicKey,
    permissions: { pub: { allow: ['audit.>'] }, sub: { deny: ['>'] } },
  })
  return publishAsAccountUser(deps.config.msgbusUrls, credsFile(jwt, user), `platform-api audit ${account}`)
}

function publisherOf(deps: Deps, orgId: number): Promise<AccountPublisher | undefined> {
  const publishers = deps.runtimes.of(PUBLISHERS)
  const existing = publishers.get(orgId)
  if (existing) return existing
  const opening = openPublisher(deps, orgId).then(
    (publisher) => {
      // An org without an account is asked again next time: it may have issued credentials since.
      if (!publisher) publishers.delete(orgId)
      return publisher
    },
    (error: unknown) => {
      publishers.delete(orgId)
      deps.log.error('audit events not published', { orgId, reason: messageOf(error) })
      return undefined
    },
  )
  publishers.set(orgId, opening)
  return opening
}

/**
 * The audit trail's message-bus sink: each committed event of an org, as its JSON line, on
 * `audit.<org>` in the org's account (again when a session's event is completed). Events wait,
 * in order, while the org's publisher connects; without an account they are not published.
 */
export const auditBusSink =
  (deps: Deps): AuditSink =>
  (event, orgId) => {
    if (orgId === null || !event.org) return
    const subject = auditSubject(event.org)
    const line = eventLine(event)
    void publisherOf(deps, orgId).then((publisher) => publisher?.publish(subject, line))
  }
