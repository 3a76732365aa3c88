import { describe, expect, test } from 'bun:test'
import { Messages as AvatarMessages, MAX_AVATAR_BYTES } from '../../src/identity/avatars/store'
import { makeTestApp } from '../support/app'
import { makeOrg, PNG } from './support'

const API = '/api/v1'
const upload = (bytes: Uint8Array<ArrayBuffer> | string, type = 'image/png') => {
  const form = new FormData()
  form.set('avatar', new File([bytes], 'avatar.png', { type }))
  return form
}

describe('organization avatar', () => {
  test('GET by a member → 200 JSON string with the stable avatar URL', async () => {
    const t = await makeTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    const res = await t.as(bob).get(`${API}/orgs/acme/avatar/`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(await res.json()).toBe(`${t.config.publicUrl}/avatars/acme`)
  })

  test('before any upload the stable URL serves a generated SVG', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice })
    const res = await t.request('GET', '/avatars/acme')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/svg+xml')
    expect(await res.text()).toStartWith('<svg')
  })

  test('the owner uploads a PNG → 200; the stable URL serves those bytes; delete → 200 and back to the SVG', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice })
    const res = await t.as(alice).send('POST', `${API}/orgs/acme/avatar/`, upload(PNG))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ avatar_url: `${t.config.publicUrl}/avatars/acme` })
    const served = await t.request('GET', '/avatars/acme')
    expect(served.headers.get('content-type')).toBe('image/png')
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(PNG)
    expect((await t.as(alice).send('POST', `${API}/orgs/acme/avatar/delete`)).status).toBe(200)
    expect((await t.request('GET', '/avatars/acme')).headers.get('content-type')).toBe('image/svg+xml')
  })

  test('a file that claims to be PNG but is not an image → 422 naming the rule; nothing changes', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice })
    const res = await t.as(alice).send('POST', `${API}/orgs/acme/avatar/`, upload('<svg onload="x"/>'))
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(AvatarMessages.avatarNotImage)
    expect((await t.request('GET', '/avatars/acme')).headers.get('content-type')).toBe('image/svg+xml')
  })

  test('an image over the size cap → 422; no file → 422', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    await makeOrg(t, 'acme', { owner: alice })
    const big = new Uint8Array(MAX_AVATAR_BYTES + 1)
    big.set(PNG)
    const res = await t.as(alice).send('POST', `${API}/orgs/acme/avatar/`, upload(big))
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(AvatarMessages.avatarTooLarge)
    expect((await t.as(alice).send('POST', `${API}/orgs/acme/avatar/`, new FormData())).status).toBe(422)
  })

  test('a plain member uploading or deleting → 403; an outsider reading → 403; anonymous → 401', async () => {
    const t = await makeTestApp()
    const [alice, bob, carol] = await t.users('alice', 'bob', 'carol')
    await makeOrg(t, 'acme', { owner: alice, members: [bob] })
    expect((await t.as(bob).send('POST', `${API}/orgs/acme/avatar/`, upload(PNG))).status).toBe(403)
    expect((await t.as(bob).send('POST', `${API}/orgs/acme/avatar/delete`)).status).toBe(403)
    expect((await t.as(carol).get(`${API}/orgs/acme/avatar/`)).status).toBe(403)
    expect((await t.request('GET', `${API}/orgs/acme/avatar/`)).status).toBe(401)
  })

  test('an unknown account at /avatars → 404', async () => {
    const t = await makeTestApp()
    expect((await t.request('GET', '/avatars/nobody')).status).toBe(404)
  })
})
