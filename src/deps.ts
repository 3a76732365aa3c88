import type { OrgFacts, UserFacts } from './authz/authorize'
import type { ClusterFacts } from './authz/clusters'
import type { CheckCredential } from './authz/credentials'
import type { Clock } from './clock'
import type { Config } from './config'
import type { Logger } from './logger'
import type { Network } from './net/egress'
import type { RuntimeSlot, Runtimes } from './runtimes'
import type { Database, Executor } from './storage/database'
import type { SecretBox } from './storage/secret-box'

/** What every area receives from createApp: configuration and the shared outside-world handles. */
export interface Deps {
  config: Config
  db: Database
  log: Logger
  /** What expiry and age decisions read as "now"; tests set and advance it. */
  clock: Clock
  secrets: SecretBox
  /** How host names given by users resolve, and which addresses count as public, when the platform dials them (net/egress.ts). */
  network: Network
  /** Per-app state of the areas (pools, caches, links): the one place it is held (runtimes.ts). */
  runtimes: Runtimes<Deps>
  /** Checks the credential a request presented (identity/authenticate.ts); `http/` reads it off the request. */
  checkCredential: CheckCredential
  /** The org facts authz loads a route's scope from (orgs/scope-facts.ts). */
  orgFacts: OrgFacts
  /** The user facts authz loads a `self-or-admin` route's target from (identity/user-facts.ts). */
  userFacts: UserFacts
  /** The cluster facts authz loads an `inCluster` route's cluster from (clusters/access.ts). */
  clusterFacts: ClusterFacts
  /** The cookie a browser gets beside its session: the message bus's (msgbus/service.ts). */
  busCookie: CompanionCookie
  /** What identity asks of the orgs an account belongs to (orgs/account-facts.ts). */
  accountOrgFacts: AccountOrgFacts
  /** What other areas drop with an org membership or an org, in the orgs' write unit: the inbox's org subscriptions (inbox/store.ts). */
  orgDepartures: OrgDepartures
}

/** Called by orgs, which may not import the areas above it (inbox imports orgs), inside the write unit that makes the change. */
export interface OrgDepartures {
  /** `uid` is no longer a member of the org `orgId`. */
  memberLeft(tx: Executor, orgId: number, uid: number): Promise<void>
  /** The org `orgId` is being deleted. */
  orgDeleted(tx: Executor, orgId: number): Promise<void>
}

/** An organization's single sign-on source, as sign-in needs it. */
export interface SsoSourceSummary {
  orgId: number
  orgName: string
  name: string
  provider: string
}

/** What identity asks of organizations, which it may not import (orgs imports identity). */
export interface AccountOrgFacts {
  /** The active single sign-on source of the organization named `orgName` (case-insensitive), if any. */
  activeSsoSourceOfOrg(orgName: string): Promise<SsoSourceSummary | undefined>
  /** The first active source (by org id) that makes `uid`, a member of its org, sign in with single sign-on, if any. */
  ssoSourceEnforcedOn(uid: number): Promise<SsoSourceSummary | undefined>
  /** Ids of the orgs whose Owners team has `uid` as its only member, read in `db` (account deletion asks in its write unit). */
  orgIdsOwnedSolelyBy(db: Executor, uid: number): Promise<number[]>
}

/** A cookie set beside the session cookie at sign-in, by an area identity does not import. */
interface CompanionCookie {
  name: string
  maxAgeSeconds: number
  /** The value for `uid`, or undefined when there is none to give (no message bus configured). */
  issue(uid: number): Promise<string | undefined>
}

/** Declares a piece of per-app state an area keeps (runtimes.ts): made by `create` on first use, closed by `close` with the app. */
export const runtimeSlot = <T>(
  name: string,
  create: (deps: Deps) => T,
  close?: (value: T) => Promise<void> | void,
): RuntimeSlot<T, Deps> => ({ name, create, close })
