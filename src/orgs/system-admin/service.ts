import { USER_TYPE } from '../../../db/schema/codes'
import type { Actor } from '../../authz/actor'
import type { OrgScope } from '../../authz/authorize'
import { Messages as AuthzMessages } from '../../authz/authorize'
import { nowSeconds } from '../../clock'
import type { Deps } from '../../deps'
import { AppError } from '../../errors'
import type { User } from '../../identity/schemas'
import { presentUser } from '../../identity/service'
import { insertUser, type UserRow } from '../../identity/store'
import { createToken, presentSettingsToken, Messages as TokenMessages } from '../../identity/tokens/service'
import * as tokenStore from '../../identity/tokens/store'
import type { Executor } from '../../storage/database'
import * as orgStore from '../store'
import type { AccessTokenInfo, CreateOrgAccessTokenOption } from './schemas'
import * as store from './store'

export const Messages = {
  missing: 'the organization has no system admin; a site admin creates it with POST /api/v1/orgs/{org}/system-admin',
  present: 'the organization already has a system admin',
  loginTaken: (login: string) => `the system admin login "${login}" is already taken by another account`,
} as const

/** The bot's login (docs/decisions.md §6a). */
const systemAdminLogin = (org: UserRow) => `${org.name}-sysadmin`

/**
 * Makes the org's system admin in `tx` (docs/decisions.md §6a): a bot user that cannot sign in with a
 * password nor create orgs, a private member of the org's Owners team, so its tokens act as an owner's
 * in this org and nowhere else; the org rules never count it as the last owner (orgs/rules.ts).
 * Throws conflict (present, or login taken).
 */
export async function insertSystemAdmin(tx: Executor, org: UserRow): Promise<UserRow> {
  if (await store.findSystemAdmin(tx, org.id)) throw new AppError('conflict', Messages.present)
  const login = systemAdminLogin(org)
  const bot = await insertUser(tx, {
    name: login,
    lowerName: login.toLowerCase(),
    type: USER_TYPE.bot,
    fullName: `${org.name} system admin`,
    passwordHash: '',
    allowCreateOrganization: false,
  }).catch((error: unknown) => {
    throw error instanceof AppError && error.kind === 'duplicate' ? new AppError('conflict', Messages.loginTaken(login)) : error
  })
  await store.insertSystemAdminLink(tx, org.id, bot.id)
  const owners = await orgStore.findTeamByName(tx, org.id, orgStore.OWNERS_TEAM)
  if (owners) await orgStore.addTeamMember(tx, owners, bot.id)
  return bot
}

/** POST /orgs/{org}/system-admin (site admin). Throws notFound (org deleted meanwhile), conflict. */
export async function createSystemAdmin(deps: Deps, me: Actor, scope: OrgScope): Promise<User> {
  const bot = await deps.db.write(async (tx) => {
    // The guard loaded the org before this transaction: a concurrent delete is a 404, not a dangling bot.
    if (!(await orgStore.findOrgById(tx, scope.org.id))) throw new AppError('notFound', AuthzMessages.orgNotFound)
    return insertSystemAdmin(tx, scope.org)
  })
  return presentUser(bot, { user: me.user, publicUrl: deps.config.publicUrl })
}

/** The org's system admin. Throws badRequest when it has none (the contract's 400). */
export async function systemAdminOf(deps: Deps, scope: OrgScope): Promise<UserRow> {
  const bot = await store.findSystemAdmin(deps.db.read, scope.org.id)
  if (!bot) throw new AppError('badRequest', Messages.missing)
  return bot
}

/** AccessTokenInfo: the settings view without scopes; `token` only at creation. */
function presentTokenInfo(row: tokenStore.AccessTokenRow, now: number, plaintext = ''): AccessTokenInfo {
  const { scopes: _scopes, ...info } = presentSettingsToken(row, now, plaintext)
  return info
}

export async function listAccessTokens(deps: Deps, scope: OrgScope): Promise<AccessTokenInfo[]> {
  const bot = await systemAdminOf(deps, scope)
  const { rows } = await tokenStore.listTokensPage(deps.db.read, bot.id, 1000, 0)
  return rows.map((row) => presentTokenInfo(row, nowSeconds(deps.clock)))
}

/**
 * A token of the org's system admin, its plaintext shown only here; the caller's own token
 * scopes bound the new one. Throws badRequest (no system admin), invalid, duplicate, forbidden.
 */
export async function createAccessToken(
  deps: Deps,
  scope: OrgScope,
  me: Actor,
  input: CreateOrgAccessTokenOption,
): Promise<AccessTokenInfo> {
  const bot = await systemAdminOf(deps, scope)
  const now = nowSeconds(deps.clock)
  const { row, plaintext } = await createToken(deps.db, bot.id, input, me.scopes, now)
  return presentTokenInfo(row, now, plaintext)
}

/** Throws badRequest (no system admin), notFound (not one of its tokens). */
export async function deleteAccessToken(deps: Deps, scope: OrgScope, id: number): Promise<void> {
  const bot = await systemAdminOf(deps, scope)
  const gone = await deps.db.write((tx) => tokenStore.deleteTokensOfUser(tx, bot.id, Number.isSafeInteger(id) ? [id] : []))
  if (gone === 0) throw new AppError('notFound', TokenMessages.tokenNotFound)
}
