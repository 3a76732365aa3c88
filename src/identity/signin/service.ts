import type { Deps } from '../../deps'
import { AppError } from '../../http/errors'
import { bindPrimaryEmail } from '../emails/service'
import { endSession, startSession, type NewSessionCookies } from '../sessions/service'
import { checkPasswordAttempt } from '../sign-in-limiter'
import * as store from '../store'

export const Messages = {
  userNotFound: 'user does not exist',
  wrongPassword: 'username or password is incorrect',
  prohibited: 'This account is prohibited from signing in, please contact your site administrator.',
  inactive: 'This account is not activated.',
  twoFactor: 'This account uses two-factor authentication and cannot sign in here',
  loginMethodInput: 'orgname or username is required',
  ssoRequired: (org: string, source: string) => `members of ${org} must sign in with single sign-on (${source}), not a password`,
} as const

export interface SignInInput {
  username: string
  password: string
  remember?: boolean
}

/**
 * Checks a login (name or any of the account's email addresses) and password and starts a
 * session. Order: rate limit (429, after a cheap lookup, before any hashing), unknown user (404, after a decoy hash so
 * it costs what a real check costs), wrong password (422), prohibited / inactive / TOTP-enrolled
 * (405, only told to someone who knows the password), email bound elsewhere (409).
 */
export async function signIn(deps: Deps, input: SignInInput, client: { address: string; userAgent: string }): Promise<NewSessionCookies> {
  const login = input.username.trim()
  const user = login.includes('@') ? await store.findUserByAnyEmail(deps.db.read, login) : await store.findUserByName(deps.db.read, login)
  const ok = await checkPasswordAttempt(deps, user, login, input.password, client.address)
  if (!user) throw new AppError('notFound', Messages.userNotFound)
  if (!ok) throw new AppError('invalid', Messages.wrongPassword, [{ field: 'password', message: Messages.wrongPassword }])
  await assertPasswordSignInAllowed(deps, user)
  if (user.prohibitLogin) throw new AppError('methodNotAllowed', Messages.prohibited)
  if (!user.isActive) throw new AppError('methodNotAllowed', Messages.inactive)
  if (await store.hasTwoFactor(deps.db.read, user.id)) throw new AppError('methodNotAllowed', Messages.twoFactor)
  await bindPrimaryEmail(deps.db, user)
  const session = await startSession(deps.db, user, { ip: client.address, userAgent: client.userAgent, remember: input.remember ?? false })
  await deps.db.write((tx) => store.updateUser(tx, user.id, { lastLoginAt: new Date() }))
  return session
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
  const source = await store.findSsoSourceEnforcedOn(deps.db.read, user.id)
  if (source) throw new AppError('forbidden', Messages.ssoRequired(source.orgName, source.name))
}

export interface LoginMethod {
  method: 'password' | 'sso'
  orgAuthSourceID?: number
  providerName?: string
  oauthCallbackPath?: string
  displayName?: string
}

const ssoMethod = (source: store.SsoSourceSummary): LoginMethod => ({
  method: 'sso', orgAuthSourceID: source.orgId, providerName: source.provider,
  oauthCallbackPath: `/user/oauth2/org-${source.orgId}`, displayName: source.name,
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
  const ofOrg = orgname ? await store.findActiveSsoSourceOfOrg(deps.db.read, orgname) : undefined
  if (ofOrg) return ssoMethod(ofOrg)
  const user = login ? await (login.includes('@') ? store.findUserByAnyEmail(deps.db.read, login) : store.findUserByName(deps.db.read, login)) : undefined
  const enforced = user && !user.isAdmin ? await store.findSsoSourceEnforcedOn(deps.db.read, user.id) : undefined
  return enforced ? ssoMethod(enforced) : { method: 'password' }
}
