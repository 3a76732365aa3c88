import { auditConcerns, auditSignedIn, auditSignIn } from '../../audit/recorder'
import type { Actor } from '../../authz/actor'
import type { OrgScope } from '../../authz/authorize'
import { nowSeconds } from '../../clock'
import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import { checkName } from '../../identity/names'
import * as links from '../../identity/security/account-links/store'
import { type NewSessionCookies, startSession } from '../../identity/sessions/service'
import * as users from '../../identity/store'
import type { Executor } from '../../storage/database'
import * as orgStore from '../store'
import { authorizationRequest, discover, type OidcClient, redeemCode, type VerifiedIdentity } from './oidc'
import type { OrgAuthSourceOption, OrgAuthSourceResponse, OrgAuthSourceUpdateOption } from './schemas'
import * as store from './store'

export const Messages = {
  noSource: 'this organization has no auth source',
  unknownProvider: (provider: string) => `unknown provider "${provider}": use one of ${PROVIDERS.join(', ')}`,
  discoveryNeeded: (provider: string) => `provider ${provider} needs a discoveryURL (its OpenID configuration)`,
  badSourcePath: 'the sign-in path must be /user/oauth2/org-<orgID>',
  stateMissing: 'the single sign-on attempt has expired or was started in another browser: start signing in again',
  linkedElsewhere: 'this identity is already linked to another account',
  alreadyLinked: 'your account is already linked to another identity of this source: unlink it first',
  cannotSignIn: 'this account may not sign in',
} as const

/** Gitea's OAuth2 provider names; openidConnect fits every OIDC provider (Keycloak, Dex, Entra ID, Google). */
const PROVIDERS = [
  'openidConnect',
  'gitea',
  'gitlab',
  'github',
  'google',
  'azuread',
  'azureadv2',
  'microsoftonline',
  'nextcloud',
  'mastodon',
  'bitbucket',
  'dropbox',
  'facebook',
  'discord',
  'twitter',
  'yandex',
] as const

/** The path (under /api/v1) that starts and finishes an org's sign-in: the spec's oauthCallbackPath. */
const callbackPath = (orgId: number) => `/user/oauth2/org-${orgId}`
const redirectUri = (deps: Deps, orgId: number) => `${deps.config.publicUrl}/api/v1${callbackPath(orgId)}`
const policyOf = (deps: Deps) => ({ allowPrivate: deps.config.allowPrivateEndpoints })

function present(row: store.AuthSourceRow): OrgAuthSourceResponse {
  return {
    id: row.orgId,
    orgID: row.orgId,
    name: row.name,
    provider: row.provider,
    clientID: row.clientId,
    ...(row.discoveryUrl ? { discoveryURL: row.discoveryUrl } : {}),
    isActive: row.isActive,
    enforceForMembers: row.enforceForMembers,
  }
}

/** Checks provider and discovery URL (fetched: it must be a valid OpenID configuration). Throws invalid, upstream. */
async function checkProvider(deps: Deps, provider: string, discoveryUrl: string): Promise<void> {
  if (!(PROVIDERS as readonly string[]).includes(provider))
    throw new AppError('invalid', Messages.unknownProvider(provider), [{ field: 'provider', message: 'is not a known provider' }])
  if (!discoveryUrl) throw new AppError('invalid', Messages.discoveryNeeded(provider), [{ field: 'discoveryURL', message: 'is required' }])
  await discover(discoveryUrl, policyOf(deps))
}

/** The org's source. Throws notFound. */
export async function getSource(deps: Deps, scope: OrgScope): Promise<OrgAuthSourceResponse> {
  const row = await store.findAuthSource(deps.db.read, scope.org.id)
  if (!row) throw new AppError('notFound', Messages.noSource)
  return present(row)
}

/** Creates the org's (only) source, active. Throws invalid, conflict (one exists), upstream. */
export async function createSource(deps: Deps, scope: OrgScope, input: OrgAuthSourceOption): Promise<OrgAuthSourceResponse> {
  const discoveryUrl = input.discoveryURL?.trim() ?? ''
  await checkProvider(deps, input.provider, discoveryUrl)
  const sealedClientSecret = await deps.secrets.seal(input.clientSecret)
  const row = await deps.db.write(async (tx) => {
    if (!(await orgStore.findOrgById(tx, scope.org.id))) throw new AppError('notFound', Messages.noSource)
    return store.insertAuthSource(tx, {
      orgId: scope.org.id,
      name: input.name,
      provider: input.provider,
      clientId: input.clientID,
      sealedClientSecret,
      discoveryUrl,
      isActive: true,
      enforceForMembers: input.enforceForMembers ?? false,
    })
  })
  return present(row)
}

/** Updates the org's source; an omitted or empty secret keeps the stored one. Throws notFound, invalid, upstream. */
export async function updateSource(deps: Deps, scope: OrgScope, input: OrgAuthSourceUpdateOption): Promise<OrgAuthSourceResponse> {
  const current = await store.findAuthSource(deps.db.read, scope.org.id)
  if (!current) throw new AppError('notFound', Messages.noSource)
  const discoveryUrl = input.discoveryURL === undefined ? current.discoveryUrl : input.discoveryURL.trim()
  await checkProvider(deps, input.provider, discoveryUrl)
  const row = await deps.db.write(async (tx) =>
    store.updateAuthSource(tx, scope.org.id, {
      name: input.name,
      provider: input.provider,
      clientId: input.clientID,
      discoveryUrl,
      ...(input.clientSecret ? { sealedClientSecret: await deps.secrets.seal(input.clientSecret) } : {}),
      ...(input.isActive !== undefined ? { isActive: input.isActive } : {}),
      ...(input.enforceForMembers !== undefined ? { enforceForMembers: input.enforceForMembers } : {}),
    }),
  )
  if (!row) throw new AppError('notFound', Messages.noSource)
  return present(row)
}

/** Deletes the org's source: members sign in with passwords again. Throws notFound. */
export async function deleteSource(deps: Deps, scope: OrgScope): Promise<void> {
  if (!(await deps.db.write((tx) => store.deleteAuthSource(tx, scope.org.id)))) throw new AppError('notFound', Messages.noSource)
}

/** The org id of a `org-<id>` path segment. Throws notFound. */
export function orgIdOfSourcePath(segment: string): number {
  const match = /^org-([1-9]\d{0,15})$/.exec(segment)
  if (!match) throw new AppError('notFound', Messages.badSourcePath)
  return Number(match[1])
}

async function activeSource(deps: Deps, orgId: number): Promise<{ row: store.AuthSourceRow; client: OidcClient }> {
  const row = await store.findAuthSource(deps.db.read, orgId)
  if (!row?.isActive) throw new AppError('notFound', Messages.noSource)
  return {
    row,
    client: { discoveryUrl: row.discoveryUrl, clientId: row.clientId, clientSecret: await deps.secrets.open(row.sealedClientSecret) },
  }
}

/** What the browser keeps between the start and the callback, sealed in a short-lived cookie. */
interface SignInState {
  orgId: number
  state: string
  nonce: string
  codeVerifier: string
  /** Where to land afterwards: a path on this site. */
  redirectTo: string
  /** The signed-in user who started the flow to link this identity to their account. */
  linkUid?: number
  expiresAt: number
}

export const STATE_TTL_SECONDS = 600

/** A path on this site, or `/`: an open redirect through the callback is not possible. */
function sameSiteTarget(redirectTo: string | undefined): string {
  return redirectTo && /^\/(?![/\\])/.test(redirectTo) ? redirectTo : '/'
}

/**
 * Starts an org's sign-in: the provider's authorization URL, and the sealed state the browser must
 * bring back. A session caller links the identity to their account. Throws notFound (no active source).
 */
export async function startSignIn(
  deps: Deps,
  orgId: number,
  actor: Actor | undefined,
  redirectTo: string | undefined,
): Promise<{ location: string; sealedState: string }> {
  const { client } = await activeSource(deps, orgId)
  const server = await discover(client.discoveryUrl, policyOf(deps))
  const request = await authorizationRequest(server, client, redirectUri(deps, orgId))
  const state: SignInState = {
    orgId,
    state: request.state,
    nonce: request.nonce,
    codeVerifier: request.codeVerifier,
    redirectTo: sameSiteTarget(redirectTo),
    ...(actor?.credential === 'session' ? { linkUid: actor.user.id } : {}),
    expiresAt: deps.clock.now() + STATE_TTL_SECONDS * 1000,
  }
  return { location: request.url, sealedState: await deps.secrets.seal(JSON.stringify(state)) }
}

async function openState(deps: Deps, orgId: number, sealed: string | undefined): Promise<SignInState> {
  if (!sealed) throw new AppError('badRequest', Messages.stateMissing)
  let state: SignInState
  try {
    state = JSON.parse(await deps.secrets.open(sealed)) as SignInState
  } catch {
    throw new AppError('badRequest', Messages.stateMissing)
  }
  if (state.orgId !== orgId || state.expiresAt < deps.clock.now()) throw new AppError('badRequest', Messages.stateMissing)
  return state
}

/**
 * Finishes an org's sign-in at the callback: verifies the answer and the ID token, finds the user by
 * the link (source, issuer, subject) — links a signed-in starter's account or creates a new user,
 * never joins an account by email — adds them to the org and starts a session. Throws badRequest
 * (state, provider refusal, ID token), notFound (no active source), methodNotAllowed (account may
 * not sign in), conflict (identity linked elsewhere), upstream.
 */
export async function finishSignIn(
  deps: Deps,
  orgId: number,
  callback: URLSearchParams,
  sealedState: string | undefined,
  client: { ip: string; userAgent: string },
): Promise<{ session: NewSessionCookies; location: string }> {
  auditSignIn('sso')
  const org = await orgStore.findOrgById(deps.db.read, orgId)
  if (org) auditConcerns({ org })
  const state = await openState(deps, orgId, sealedState)
  const source = await activeSource(deps, orgId)
  const server = await discover(source.client.discoveryUrl, policyOf(deps))
  const identity = await redeemCode(server, source.client, callback, { ...state, redirectUri: redirectUri(deps, orgId) }, policyOf(deps))
  auditSignIn('sso', identity.preferredUsername ?? identity.email ?? identity.subject)
  // The account made or linked here is the sign-in's change: its transaction carries the event.
  const user = await deps.db.write(async (tx) => {
    const found = await userForIdentity(tx, source.row, identity, state.linkUid)
    auditSignedIn(found)
    return found
  })
  if (user.prohibitLogin || !user.isActive) throw new AppError('methodNotAllowed', Messages.cannotSignIn)
  const session = await startSession(deps.db, user, { ip: client.ip, userAgent: client.userAgent, remember: false }, nowSeconds(deps.clock))
  await deps.db.write((tx) => users.updateUser(tx, user.id, { lastLoginAt: new Date() }))
  return { session, location: `${deps.config.publicUrl}${state.redirectTo}` }
}

/** One transaction: the linked user, or a link for the starter, or a new user; then org membership. */
async function userForIdentity(
  tx: Executor,
  source: store.AuthSourceRow,
  identity: VerifiedIdentity,
  linkUid: number | undefined,
): Promise<users.UserRow> {
  const link = await links.findLinkByIdentity(tx, source.orgId, identity.issuer, identity.subject)
  let user: users.UserRow | undefined
  if (link) {
    if (linkUid !== undefined && link.uid !== linkUid) throw new AppError('conflict', Messages.linkedElsewhere)
    user = await users.findUserById(tx, link.uid)
  } else {
    user = linkUid !== undefined ? await users.findUserById(tx, linkUid) : await createSsoUser(tx, identity)
    if (!user) throw new AppError('badRequest', Messages.stateMissing)
    if (await links.findLinkOfUser(tx, user.id, source.orgId)) throw new AppError('conflict', Messages.alreadyLinked)
    await links.insertLink(tx, {
      uid: user.id,
      sourceId: source.orgId,
      provider: source.provider,
      sourceName: source.name,
      issuer: identity.issuer,
      externalId: identity.subject,
    })
  }
  if (!user) throw new AppError('badRequest', Messages.stateMissing)
  await joinMembersTeam(tx, source.orgId, user.id)
  return user
}

/**
 * A new password-less user named after `preferred_username` (or the email's local part), made
 * valid and unique with a suffix; the email only when the provider verified it and no account uses it.
 */
async function createSsoUser(tx: Executor, identity: VerifiedIdentity): Promise<users.UserRow> {
  const base = loginBase(identity)
  let name = base
  for (let n = 2; (await users.findAccountByName(tx, name)) || checkName(name) !== 'VALID'; n++) name = `${base.slice(0, 34)}-${n}`
  const email = identity.email && identity.emailVerified && !(await users.findUserByAnyEmail(tx, identity.email)) ? identity.email : ''
  return users.insertUser(tx, {
    name,
    lowerName: name.toLowerCase(),
    fullName: identity.name ?? '',
    email,
    keepEmailPrivate: true,
    passwordHash: '',
  })
}

function loginBase(identity: VerifiedIdentity): string {
  const wanted = identity.preferredUsername ?? identity.email?.split('@')[0] ?? 'user'
  const cleaned = wanted
    .replace(/[^-.\w]/g, '-')
    .replace(/[-._]{2,}/g, '-')
    .replace(/^[^0-9A-Za-z]+|[-._]+$/g, '')
    .slice(0, 34)
  return cleaned && checkName(cleaned) === 'VALID' ? cleaned : `user-${identity.subject.replace(/[^0-9A-Za-z]/g, '').slice(0, 20) || 'sso'}`
}

const MEMBERS_TEAM = 'Members'

/** Adds the user to the org's Members team, created with permission read when missing. */
async function joinMembersTeam(tx: Executor, orgId: number, uid: number): Promise<void> {
  const team =
    (await orgStore.findTeamByName(tx, orgId, MEMBERS_TEAM)) ??
    (await orgStore.insertTeam(
      tx,
      {
        orgId,
        name: MEMBERS_TEAM,
        lowerName: MEMBERS_TEAM.toLowerCase(),
        description: 'Members who signed in with single sign-on',
        permission: 'read',
      },
      [],
    ))
  await orgStore.addTeamMember(tx, team, uid)
}
