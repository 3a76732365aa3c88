import { describe, expect, test } from 'bun:test'
import { Messages, registerClaimableOrg } from '../../src/orgs/claims/service'
import { makeTestApp } from '../support/app'

const API = '/api/v1'

describe('PATCH /orgs/claim/{claimID} (hosted)', () => {
  test('alice claims a marketplace org → 200 organization; she is now its owner', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'hosted' })
    const [alice] = await t.users('alice')
    const { claimId } = await registerClaimableOrg(t.deps, { username: 'bought', visibility: 'private' })
    const res = await t.as(alice).send('PATCH', `${API}/orgs/claim/${claimId}`)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ username: 'bought', visibility: 'private' })
    expect((await t.as(alice).get(`${API}/orgs/bought/is-owner`)).status).toBe(200)
  })

  test('claiming again (anyone) → 409 already claimed', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'hosted' })
    const [alice, bob] = await t.users('alice', 'bob')
    const { claimId } = await registerClaimableOrg(t.deps, { username: 'bought' })
    await t.as(alice).send('PATCH', `${API}/orgs/claim/${claimId}`)
    const res = await t.as(bob).send('PATCH', `${API}/orgs/claim/${claimId}`)
    expect(res.status).toBe(409)
    expect((await res.json()).message).toBe(Messages.alreadyClaimed)
    expect((await t.as(bob).get(`${API}/orgs/bought/is-owner`)).status).toBe(403)
  })

  test('an unknown claim id → 404; anonymous → 401', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'hosted' })
    const [alice] = await t.users('alice')
    const res = await t.as(alice).send('PATCH', `${API}/orgs/claim/nope`)
    expect(res.status).toBe(404)
    expect((await res.json()).message).toBe(Messages.claimNotFound)
    expect((await t.request('PATCH', `${API}/orgs/claim/nope`)).status).toBe(401)
  })

  test('without the hosted mode the route is not registered → 404 Not Found', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'marketplace' })
    const [alice] = await t.users('alice')
    const { claimId } = await registerClaimableOrg(t.deps, { username: 'bought' })
    const res = await t.as(alice).send('PATCH', `${API}/orgs/claim/${claimId}`)
    expect(res.status).toBe(404)
    expect((await res.json()).message).toBe('Not Found')
  })
})

describe('GET /orgs/claim/ (marketplace or dev)', () => {
  test('a site admin → the oldest unclaimed marketplace org; once claimed, the next one; none → not claimable', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'marketplace,hosted' })
    const admin = await t.admin()
    const [alice] = await t.users('alice')
    await t.as(alice).send('POST', `${API}/orgs`, { username: 'regular' })
    const first = await registerClaimableOrg(t.deps, { username: 'first' })
    const second = await registerClaimableOrg(t.deps, { username: 'second' })
    const res = await t.as(admin).get(`${API}/orgs/claim/`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ isClaimable: true, claimID: first.claimId })
    await t.as(alice).send('PATCH', `${API}/orgs/claim/${first.claimId}`)
    expect(await (await t.as(admin).get(`${API}/orgs/claim/`)).json()).toEqual({ isClaimable: true, claimID: second.claimId })
    await t.as(alice).send('PATCH', `${API}/orgs/claim/${second.claimId}`)
    expect(await (await t.as(admin).get(`${API}/orgs/claim/`)).json()).toEqual({ isClaimable: false, claimID: '' })
  })

  test('a regular user → 403; anonymous → 401', async () => {
    const t = await makeTestApp({ PLATFORM_RUN_MODE: 'dev' })
    const [alice] = await t.users('alice')
    expect((await t.as(alice).get(`${API}/orgs/claim/`)).status).toBe(403)
    expect((await t.request('GET', `${API}/orgs/claim/`)).status).toBe(401)
  })

  test('dev run mode registers it → 200; neither marketplace nor dev → 404', async () => {
    const dev = await makeTestApp({ PLATFORM_RUN_MODE: 'dev' })
    expect((await dev.as(await dev.admin()).get(`${API}/orgs/claim/`)).status).toBe(200)
    const prod = await makeTestApp({ PLATFORM_MODES: 'hosted' })
    expect((await prod.as(await prod.admin()).get(`${API}/orgs/claim/`)).status).toBe(404)
  })
})
