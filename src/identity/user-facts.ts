import type { UserFacts } from '../authz/authorize'
import type { Database } from '../storage/database'
import * as store from './store'

/** The user facts authz loads a `self-or-admin` route's target from, read from the read side of `db`. */
export function userFacts(db: Database): UserFacts {
  return {
    findUserByName: (name) => store.findUserByName(db.read, name),
  }
}
