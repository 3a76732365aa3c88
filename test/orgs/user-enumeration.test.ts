import { describe, expect, test } from 'bun:test'
import { updateUser } from '../../src/identity/store'
import { makeOrg } from '../orgs/support'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'

/**
 * The public member routes must not tell an outsider whether a user exists: `/users/{priv}` hides
 * private users (404), so `/orgs/{org}/public_members/{priv}` and the member check's redirect
 * must answer for them exactly as for a name nobody has.
 */

const API = '/api/v1'
const PER_REQUEST = new Set(['date', 'x-request-id'])

async function snapshot(res: Response) {
  const headers = [...res.headers.entries()].filter(([k]) => !PER_REQUEST.has(k)).sort()
  return { status: res.status, headers, body: await res.text() }
}

async function world(): Promise<{ t: TestApp; olga: TestUser }> {
  const t = await makeTestApp()
  const [olga, priv] = await t.users('olga', 'priv')
  await t.deps.db.write((tx) => updateUser(tx, priv.user.id, { visibility: 2 }))
  await makeOrg(t, 'acme', { owner: olga })
  return { t, olga }
}

describe('existence of users through the public member routes', () => {
  test('anonymous checks /public_members/{private user} → the same 404 as for a nobody', async () => {
    const { t } = await world()
    expect((await t.request('GET', `${API}/users/priv`)).status).toBe(404)
    const hidden = await snapshot(await t.request('GET', `${API}/orgs/acme/public_members/priv`))
    const nobody = await snapshot(await t.request('GET', `${API}/orgs/acme/public_members/nobody`))
    expect(hidden).toEqual(nobody)
    expect(hidden.status).toBe(404)
  })

  test('anonymous checks /members/{private user} → the same redirect as for a nobody', async () => {
    const { t } = await world()
    const hidden = await t.request('GET', `${API}/orgs/acme/members/priv`)
    const nobody = await t.request('GET', `${API}/orgs/acme/members/nobody`)
    expect([hidden.status, nobody.status]).toEqual([302, 302])
    expect(nobody.headers.get('location')).toBe('/api/v1/orgs/acme/public_members/nobody')
  })

  test('an org member checks /members/nobody → 404 (members learn the truth)', async () => {
    const { t, olga } = await world()
    expect((await t.as(olga).get(`${API}/orgs/acme/members/nobody`)).status).toBe(404)
    expect((await t.as(olga).get(`${API}/orgs/acme/members/priv`)).status).toBe(404)
  })
})
