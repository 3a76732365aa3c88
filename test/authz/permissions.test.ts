import { describe, expect, test } from 'bun:test'
import {
  grantedPermissions,
  PERMISSION_STRINGS,
  type PermissionString,
  ROLES,
  type Role,
  roleFromTeams,
  roleHas,
} from '../../src/authz/permissions'

// The expected answer for every (role, permission) pair, written out so a change to the table
// shows up here as a deliberate edit. O = owner, A = admin, M = member, S = site admin.
const EXPECTED: Record<PermissionString, string> = {
  'edit:org': 'OA-S',
  'delete:org': 'O--S',
  'admin:org': 'O--S',
  'view:avatar': 'OAMS',
  'update:avatar': 'OA-S',
  'delete:avatar': 'OA-S',
  'view:sync-token': 'OA-S',
  'create:fleetmgr-org-sync-token': 'O--S',
  'remove:fleetmgr-sync-token': 'O--S',
  'list:access-token': 'OA-S',
  'delete:access-token': 'O--S',
  'list:msgbus-token': 'OA-S',
  'revoke:msgbus-token': 'O--S',
  'create:access-token': 'O--S',
  'create:msgbus-token': 'O--S',
  'view:auth-source': 'OA-S',
  'create:auth-source': 'O--S',
  'update:auth-source': 'O--S',
  'delete:auth-source': 'O--S',
  'send:usage-events': 'OA-S',
  'view:audit': 'O--S',
  'view_usage_analytics:site_admin': '---S',
  'admin:chart-source': '---S',
  'create:org-system-admin': '---S',
}
const LETTER: Record<Role, string> = { owner: 'O', admin: 'A', member: 'M', 'site-admin': 'S' }

describe('role table', () => {
  test('the expectation covers every permission string of the contract', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...PERMISSION_STRINGS].sort())
  })

  for (const permission of PERMISSION_STRINGS)
    for (const [i, role] of ROLES.entries()) {
      const allowed = EXPECTED[permission][i] === LETTER[role]
      test(`${role} ${allowed ? 'holds' : 'lacks'} ${permission}`, () => {
        expect(roleHas(role, permission)).toBe(allowed)
      })
    }
})

describe('roles from teams', () => {
  test.each([
    [['owner', 'read'], 'owner'],
    [['read', 'admin'], 'admin'],
    [['write'], 'member'],
    [['none'], 'member'],
    [[], undefined],
  ] as const)('teams %p → %p', (teams, role) => {
    expect(roleFromTeams(teams)).toBe(role)
  })
})

describe('custom roles', () => {
  test('a member with a custom role holding delete:avatar gains it', () => {
    expect(grantedPermissions('member', ['delete:avatar'], false).has('delete:avatar')).toBe(true)
  })

  test('a custom role cannot grant the site-wide permission', () => {
    expect(grantedPermissions('owner', ['view_usage_analytics:site_admin'], false).has('view_usage_analytics:site_admin')).toBe(false)
  })

  test('a non-member gets nothing from custom roles', () => {
    expect(grantedPermissions(undefined, ['edit:org'], false).size).toBe(0)
  })
})
