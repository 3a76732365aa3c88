import type { OrgFacts } from '../authz/authorize'
import type { Database } from '../storage/database'
import { orgRoleOf } from './grants'
import * as store from './store'

/** The org facts authz loads a route's scope from, read from the read side of `db`. */
export function orgFacts(db: Database): OrgFacts {
  return {
    findOrgByName: (name) => store.findOrgByName(db.read, name),
    findOrgById: (id) => store.findOrgById(db.read, id),
    findTeamById: (id) => store.findTeamById(db.read, id),
    orgRoleOf: (orgId, uid) => orgRoleOf(db.read, orgId, uid),
    customPermissionsOf: (orgId, uid) => store.customPermissionsOf(db.read, orgId, uid),
    isTeamMember: (teamId, uid) => store.isTeamMember(db.read, teamId, uid),
  }
}
