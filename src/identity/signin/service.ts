import { auditSignedIn, auditSignIn } from '../../audit/recorder'
import { nowSeconds } from '../../clock'
import type { Deps, SsoSourceSummary } from '../../deps'
import { AppError } from '../../errors'
import { bindPrimaryEmail } from '../emails/service'
import { checkPasswordAttempt } from '../limiter/service'
import { checkSecondFactor } from '../security/two-factor/service'
import { hasSecurityKey, requestAssertion, verifyAssertion } from '../security/webauthn/service'
import { endSession, type NewSessionCookies, startSession } from '../sessions/service'
import * as store from '../store'
import * as tickets from './tickets'

export const Messages = {
  userNotFound: 'user does not exist',
  wrongPassword: 'username or password is incorrect',
  prohibited: 'This account is prohibited from signing in, please contact your site administrator.',
  inactive: 'This account is not activated.',
  twoFactor:
    'This account uses two-factor authentication: finish signing in with POST /api/v1/user/signin/two-factor (TOTP code or scratch token) or POST /api/v1/user/signin/webauthn (security key) within 5 minutes',
  noTicket: 'no sign-in is waiting for a second factor, or it expired: sign in with the password again',
  noTotp: 'this account has no TOTP enrolled: finish signing in with its security key',
  noSecurityKey: 'this account has no security key: finish signing in with a TOTP code',
  noChallenge: 'request the security key options first: POST /api/v1/user/signin/webauthn/options',
  loginMethodInput: 'orgname or username is required',
  ssoRequired: (org: string, source: string) => `members of ${org} must sign in with single sign-on (${source}), not a password`,
} as const

export interface SignInInput {
  username: string
  password: string
  remember?: boolean
}

/** The 405 of a password sign-in that needs a second factor; `ticket` names the waiting sign-in. */
export class TwoFactorRequired extends AppError {
  constructor(readonly ticket: string) {
    super('methodNotAllowed', Messages.twoFactor)
  }
}

/**
 * Checks a login (name or any of the account's email addresses) and password and starts a
 * session. Order: rate limit (429, after a cheap lookup, before any hashing), unknown user (404, after a decoy hash so
 * it costs what a real check costs), wrong password (422), prohibited / inactive (405, only told
 * to someone who knows the password), a second factor enrolled (TOTP or a security key:
 * TwoFactorRequired, 405 with a sign-in ticket), email bound elsewhere (409).
 */
export async function signIn(deps: Deps, input: SignInInput, client: SignInClient): Promise<NewSessionCookies> {
  const login = input.username.trim()
  const user = login.includes('@') ? await store.findUserByAnyEmail(deps.db.read, login) : await store.findUserByName(deps.db.read, login)
  auditSignIn('password', login, user)
  const ok = await checkPasswordAttempt(deps, user, login, input.password, client.address)
  if (!user) throw new AppError('notFound', Messages.userNotFound)
  if (!ok) throw new AppError('invalid', Messages.wrongPassword, [{ field: 'password', message: Messages.wrongPassword }])
  await assertPasswordSignInAllowed(deps, user)
  if (user.prohibitLogin) throw new AppError('methodNotAllowed', Messages.prohibited)
  if (!user.isActive) throw new AppError('methodNotAllowed', Messages.inactive)
  if ((await store.hasTwoFactor(deps.db.read, user.id)) || (await hasSecurityKey(deps, user.id)))
    throw new TwoFactorRequired(await tickets.issueTicket(deps, user.id, input.remember ?? false))
  return startSignedInSession(deps, user, input.remember ?? false, client)
}

export interface SignInClient {
  address: string
  userAgent: string
}

async function startSignedInSession(deps: Deps, user: store.UserRow, remember: boolean, client: SignInClient): Promise<NewSessionCookies> {
  auditSignedIn(user)
  await bindPrimaryEmail(deps.db, user)
  const session = await startSession(deps.db, user, { ip: client.address, userAgent: client.userAgent, remember }, nowSeconds(deps.clock))
  await deps.db.write((tx) => store.updateUser(tx, user.id, { lastLoginAt: new Date() }))
  return session
}

/** The waiting sign-in of `ticketId` and its user, still allowed to sign in; recorded as a sign-in by `method`. Throws unauthenticated. */
async function waitingSignIn(deps: Deps, ticketId: string | undefined, method: 'totp' | 'webauthn') {
  auditSignIn(method)
  const ticket = ticketId ? await tickets.findTicket(deps, ticketId) : undefined
  const user = ticket ? await store.findUserById(deps.db.read, ticket.uid) : undefined
  if (!ticketId || !ticket || !user || user.prohibitLogin || !user.isActive) throw new AppError('unauthenticated', Messages.noTicket)
  auditSignIn(method, user.name, user)
  return { id: ticketId, ticket, user }
}

/** Runs a second-factor check for the ticket: a failure counts against it, success ends it and starts the session. */
async function finishSignIn(
  deps: Deps,
  waiting: Awaited<ReturnType<typeof waitingSignIn>>,
  client: SignInClient,
  check: () => Promise<void>,
): Promise<NewSessionCookies> {
  try {
    await check()
  } catch (e) {
    await tickets.countTicketFailure(deps, waiting.id)
    throw e
  }
  if (!(await tickets.takeTicket(deps, waiting.id))) throw new AppError('unauthenticated', Messages.noTicket)
  return startSignedInSession(deps, waiting.user, waiting.ticket.remember, client)
}

/**
 * Second step with a TOTP code (or the scratch token, which then stops working). Throws
 * unauthenticated (no ticket, wrong code), badRequest (no TOTP enrolled), tooManyRequests.
 */
export async function finishWithCode(
  deps: Deps,
  ticketId: string | undefined,
  passcode: string,
  client: SignInClient,
): Promise<NewSessionCookies> {
  const waiting = await waitingSignIn(deps, ticketId, 'totp')
  if (!(await store.hasTwoFactor(deps.db.read, waiting.user.id))) throw new AppError('badRequest', Messages.noTotp)
  return finishSignIn(deps, waiting, client, () => checkSecondFactor(deps, waiting.user.id, passcode))
}

/** Request options for the security-key step; the challenge is kept with the ticket. Throws unauthenticated, badRequest. */
export async function securityKeyOptions(deps: Deps, ticketId: string | undefined): Promise<{ publicKey: Record<string, unknown> }> {
  const waiting = await waitingSignIn(deps, ticketId, 'webauthn')
  if (!(await hasSecurityKey(deps, waiting.user.id))) throw new AppError('badRequest', Messages.noSecurityKey)
  const { publicKey, challenge } = await requestAssertion(deps, waiting.user.id)
  await tickets.setTicketChallenge(deps, waiting.id, challenge)
  return { publicKey }
}

/** Second step with a security key's assertion over the ticket's challenge. Throws unauthenticated, badRequest. */
export async function finishWithSecurityKey(
  deps: Deps,
  ticketId: string | undefined,
  assertion: Parameters<typeof verifyAssertion>[2],
  client: SignInClient,
): Promise<NewSessionCookies> {
  const waiting = await waitingSignIn(deps, ticketId, 'webauthn')
  // A challenge answers once, right or wrong.
  const challenge = await tickets.takeTicketChallenge(deps, waiting.id)
  if (!challenge) throw new AppError('badRequest', Messages.noChallenge)
  return finishSignIn(deps, waiting, client, () => verifyAssertion(deps, waiting.user.id, assertion, challenge))
}

/** Ends the caller's session when they used one; token callers only get their cookies cleared. */
export async function signOut(deps: Deps, sessionId: number | undefined): Promise<void> {
  if (sessionId !== undefined) await endSession(deps.db, sessionId)
}

/**
 * Password sign-in (POST /user/signin, Basic) is refused for members of an org whose active source
 * enforces single sign-on; site admins are exempt so the site cannot be locked out. Throws forbidden.
 */
export async function assertPasswordSignInAllowed(deps: Deps, user: store.UserRow): Promise<void> {
  if (user.isAdmin) return
  const source = await deps.accountOrgFacts.ssoSourceEnforcedOn(user.id)
  if (source) throw new AppError('forbidden', Messages.ssoRequired(source.orgName, source.name))
}

export interface LoginMethod {
  method: 'password' | 'sso'
  orgAuthSourceID?: number
  providerName?: string
  oauthCallbackPath?: string
  displayName?: string
}

const ssoMethod = (source: SsoSourceSummary): LoginMethod => ({
  method: 'sso',
  orgAuthSourceID: source.orgId,
  providerName: source.provider,
  oauthCallbackPath: `/user/oauth2/org-${source.orgId}`,
  displayName: source.name,
})

/**
 * How members of `orgname`, or `username` (login or email), sign in: `sso` with the source's
 * fields when the org has an active source, or when one of the user's orgs enforces its source;
 * otherwise `password` (also for unknown names: the answer does not reveal accounts). Throws
 * badRequest when neither is given.
 */
export async function loginMethod(deps: Deps, query: { orgname?: string; username?: string }): Promise<LoginMethod> {
  const orgname = query.orgname?.trim()
  const login = query.username?.trim()
  if (!orgname && !login) throw new AppError('badRequest', Messages.loginMethodInput)
  const ofOrg = orgname ? await deps.accountOrgFacts.activeSsoSourceOfOrg(orgname) : undefined
  if (ofOrg) return ssoMethod(ofOrg)
  const user = login
    ? await (login.includes('@') ? store.findUserByAnyEmail(deps.db.read, login) : store.findUserByName(deps.db.read, login))
    : undefined
  const enforced = user && !user.isAdmin ? await deps.accountOrgFacts.ssoSourceEnforcedOn(user.id) : undefined
  return enforced ? ssoMethod(enforced) : { method: 'password' }
}
