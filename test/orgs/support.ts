import type { UserRow } from '../../src/identity/store'
import { createOrg } from '../../src/orgs/service'
import * as store from '../../src/orgs/store'
import type { TestApp, TestUser } from '../support/app'

export interface OrgFixture {
  org: UserRow
  ownersTeam: store.TeamRow
  /** Team `Admins` (permission admin), present when admins were asked for. */
  adminsTeam?: store.TeamRow
  /** Team `Members` (permission read), present when members were asked for. */
  membersTeam?: store.TeamRow
}

export interface OrgSetup {
  owner: TestUser
  owners?: TestUser[]
  admins?: TestUser[]
  members?: TestUser[]
  visibility?: 'public' | 'limited' | 'private'
  /** Members whose membership is public. */
  publicMembers?: TestUser[]
}

/** Creates an org through the service (owner = creator), then teams for the other roles. */
export async function makeOrg(t: TestApp, name: string, setup: OrgSetup): Promise<OrgFixture> {
  const org = await createOrg(t.deps, setup.owner.user, { username: name, visibility: setup.visibility ?? 'public', origin: 'api' })
  const db = t.deps.db
  const { rows } = await store.listTeams(db.read, org.id, { limit: 50, offset: 0 })
  const ownersTeam = rows[0]
  const team = async (teamName: string, permission: string, people: TestUser[] | undefined) => {
    if (!people || people.length === 0) return undefined
    return db.write(async (tx) => {
      const row = await store.insertTeam(tx, { orgId: org.id, name: teamName, lowerName: teamName.toLowerCase(), permission }, [])
      for (const p of people) await store.addTeamMember(tx, row, p.user.id)
      return row
    })
  }
  await db.write(async (tx) => {
    for (const p of setup.owners ?? []) await store.addTeamMember(tx, ownersTeam, p.user.id)
  })
  const adminsTeam = await team('Admins', 'admin', setup.admins)
  const membersTeam = await team('Members', 'read', setup.members)
  await db.write(async (tx) => {
    for (const p of setup.publicMembers ?? []) await store.setMembershipPublic(tx, org.id, p.user.id, true)
  })
  return { org, ownersTeam, adminsTeam, membersTeam }
}

/** A 1×1 PNG. */
export const PNG: Uint8Array<ArrayBuffer> = Uint8Array.from(
  Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'),
)
