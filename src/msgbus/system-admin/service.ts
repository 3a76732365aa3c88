import type { OrgScope } from '../../authz/authorize'
import type { Deps } from '../../deps'
import type { CreateOrgMsgbusTokenOption } from '../../orgs/system-admin/schemas'
import { systemAdminOf } from '../../orgs/system-admin/service'
import { assertConfigured } from '../bus'
import type { MsgbusAccount, MsgbusCredentialsResponse } from '../schemas'
import * as msgbus from '../service'

/** The message-bus keys of the org's system admin, newest first. Throws badRequest (no system admin). */
export async function listMsgbusTokens(deps: Deps, scope: OrgScope): Promise<MsgbusAccount[]> {
  return msgbus.listTokens(deps, (await systemAdminOf(deps, scope)).id)
}

/** New credentials of the system admin in the org's account. Throws badRequest, unavailable. */
export async function createMsgbusToken(
  deps: Deps,
  scope: OrgScope,
  input: CreateOrgMsgbusTokenOption,
): Promise<MsgbusCredentialsResponse> {
  const bot = await systemAdminOf(deps, scope)
  assertConfigured(deps)
  return msgbus.orgCredentials(deps, scope.org, bot, input)
}

/** Throws badRequest (no system admin, or no such message-bus user), unavailable. */
export async function revokeMsgbusToken(deps: Deps, scope: OrgScope, id: number): Promise<void> {
  await msgbus.revokeToken(deps, (await systemAdminOf(deps, scope)).id, id, 'badRequest')
}
