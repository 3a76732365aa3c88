import type { AccountOrgFacts } from '../deps'
import type { Database } from '../storage/database'
import { findActiveSourceOfOrg, findSourceEnforcedOn } from './auth-source/store'
import { orgIdsOwnedSolelyBy } from './store'

/** What identity asks of the orgs an account belongs to (Deps.accountOrgFacts); single sign-on is read from the read side of `db`. */
export function accountOrgFacts(db: Database): AccountOrgFacts {
  return {
    activeSsoSourceOfOrg: (orgName) => findActiveSourceOfOrg(db.read, orgName),
    ssoSourceEnforcedOn: (uid) => findSourceEnforcedOn(db.read, uid),
    orgIdsOwnedSolelyBy,
  }
}
