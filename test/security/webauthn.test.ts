import { describe, expect, test } from 'bun:test'
import { CHALLENGE_TTL_SECONDS, Messages } from '../../src/identity/security/webauthn/service'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'
import { softRegistration } from './soft-authenticator'

const BASE = '/api/v1/user/settings/security/webauthn'
const ORIGIN = 'https://platform.example.com'

async function requestOptions(t: TestApp, who: TestUser, name = 'yubikey') {
  const res = await t.as(who).send('POST', `${BASE}/request_register`, { name })
  expect(res.status).toBe(200)
  return (await res.json()).publicKey as Record<string, unknown>
}

const keysOf = async (t: TestApp, who: TestUser) => (await t.as(who).get(`${BASE}/keys`)).json()

describe('WebAuthn registration (software key)', () => {
  test("request_register → creation options for the public URL's RP id with a fresh challenge", async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    const options = await requestOptions(t, alice)
    expect(options.rp).toMatchObject({ id: 'platform.example.com' })
    expect(options.user).toMatchObject({ name: 'alice' })
    expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{20,}$/)
    expect(options.attestation).toBe('none')
    expect((await requestOptions(t, alice)).challenge).not.toBe(options.challenge)
  })

  test('register a valid attestation → 201 key; listed; status webauthnEnrolled; delete → 200 and gone', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    const response = await softRegistration(await requestOptions(t, alice, 'desk key'), { origin: ORIGIN })
    const res = await t.as(alice).send('POST', `${BASE}/register`, response)
    expect(res.status).toBe(201)
    const key = await res.json()
    expect(key).toMatchObject({ name: 'desk key' })
    expect(key.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(await keysOf(t, alice)).toEqual([key])
    expect((await (await t.as(alice).get('/api/v1/user/settings/security/')).json()).webauthnEnrolled).toBe(true)
    const del = await t.as(alice).delete(`${BASE}/keys/${key.id}`)
    expect(del.status).toBe(200)
    expect(await del.text()).toBe('')
    expect(await keysOf(t, alice)).toEqual([])
  })

  test('the same response replayed → 400, one key stored', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    const response = await softRegistration(await requestOptions(t, alice), { origin: ORIGIN })
    expect((await t.as(alice).send('POST', `${BASE}/register`, response)).status).toBe(201)
    const again = await t.as(alice).send('POST', `${BASE}/register`, response)
    expect(again.status).toBe(400)
    expect((await again.json()).message).toBe(Messages.noChallenge)
    expect(await keysOf(t, alice)).toHaveLength(1)
  })

  test('register without request_register → 400, nothing stored', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice, bob] = await t.users('alice', 'bob')
    const response = await softRegistration(await requestOptions(t, bob), { origin: ORIGIN })
    expect((await t.as(alice).send('POST', `${BASE}/register`, response)).status).toBe(400)
    expect(await keysOf(t, alice)).toEqual([])
  })

  test('an expired challenge → 400, nothing stored', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    const response = await softRegistration(await requestOptions(t, alice), { origin: ORIGIN })
    t.clock.advance((CHALLENGE_TTL_SECONDS + 1) * 1000)
    const res = await t.as(alice).send('POST', `${BASE}/register`, response)
    expect(res.status).toBe(400)
    expect((await res.json()).message).toBe(Messages.noChallenge)
    expect(await keysOf(t, alice)).toEqual([])
  })

  test('a response from the wrong origin → 400, nothing stored, challenge spent', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    const options = await requestOptions(t, alice)
    const res = await t.as(alice).send('POST', `${BASE}/register`, await softRegistration(options, { origin: 'https://evil.example.com' }))
    expect(res.status).toBe(400)
    expect((await res.json()).message).toStartWith(Messages.rejected)
    expect(await keysOf(t, alice)).toEqual([])
    const honest = await softRegistration(options, { origin: ORIGIN })
    expect((await t.as(alice).send('POST', `${BASE}/register`, honest)).status).toBe(400)
  })

  test('an attestation for another RP id → 400, nothing stored', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    const response = await softRegistration(await requestOptions(t, alice), { origin: ORIGIN, rpId: 'evil.example.com' })
    expect((await t.as(alice).send('POST', `${BASE}/register`, response)).status).toBe(400)
    expect(await keysOf(t, alice)).toEqual([])
  })

  test.each([
    ['the RP id hash altered', 0, 0x01],
    ['the user-present flag cleared', 32, 0x01],
  ])('an attestation with %s → 400, nothing stored', async (_what, offset, mask) => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    const response = await softRegistration(await requestOptions(t, alice), { origin: ORIGIN })
    const bytes = Buffer.from(response.response.attestationObject, 'base64url')
    const rpIdHash = new Bun.CryptoHasher('sha256').update('platform.example.com').digest()
    const authDataAt = bytes.indexOf(rpIdHash)
    expect(authDataAt).toBeGreaterThan(0)
    bytes[authDataAt + offset] ^= mask
    const tampered = { ...response, response: { ...response.response, attestationObject: bytes.toString('base64url') } }
    const res = await t.as(alice).send('POST', `${BASE}/register`, tampered)
    expect(res.status).toBe(400)
    expect((await res.json()).message).toStartWith(Messages.rejected)
    expect(await keysOf(t, alice)).toEqual([])
  })

  test('an attestation whose credential id differs from the response id → 400, nothing stored', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    const response = await softRegistration(await requestOptions(t, alice), { origin: ORIGIN })
    const other = Buffer.alloc(16, 7).toString('base64url')
    const res = await t.as(alice).send('POST', `${BASE}/register`, { ...response, id: other, rawId: other })
    expect(res.status).toBe(400)
    expect(await keysOf(t, alice)).toEqual([])
  })

  test('client data with a different challenge → 400, nothing stored', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    const options = await requestOptions(t, alice)
    const response = await softRegistration({ ...options, challenge: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, { origin: ORIGIN })
    expect((await t.as(alice).send('POST', `${BASE}/register`, response)).status).toBe(400)
    expect(await keysOf(t, alice)).toEqual([])
  })

  test('a body that is not a credential → 422', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    await requestOptions(t, alice)
    expect((await t.as(alice).send('POST', `${BASE}/register`, { hello: 'world' })).status).toBe(422)
  })

  test('request_register with a name already used → 422; empty name → 422', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    const response = await softRegistration(await requestOptions(t, alice, 'mine'), { origin: ORIGIN })
    expect((await t.as(alice).send('POST', `${BASE}/register`, response)).status).toBe(201)
    const dup = await t.as(alice).send('POST', `${BASE}/request_register`, { name: 'mine' })
    expect(dup.status).toBe(422)
    expect((await dup.json()).message).toBe(Messages.nameTaken)
    expect((await t.as(alice).send('POST', `${BASE}/request_register`, { name: '' })).status).toBe(422)
    expect((await t.as(alice).send('POST', `${BASE}/request_register`, {})).status).toBe(422)
  })

  test('a second key excludes the first in its options', async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice] = await t.users('alice')
    const response = await softRegistration(await requestOptions(t, alice, 'one'), { origin: ORIGIN })
    await t.as(alice).send('POST', `${BASE}/register`, response)
    const options = await requestOptions(t, alice, 'two')
    expect((options.excludeCredentials as { id: string }[]).map((c) => c.id)).toEqual([response.id])
  })

  test("deleting another user's key or an unknown id → 404, key kept", async () => {
    const t = await makeTestApp({ PLATFORM_PUBLIC_URL: ORIGIN })
    const [alice, bob] = await t.users('alice', 'bob')
    const response = await softRegistration(await requestOptions(t, bob), { origin: ORIGIN })
    const key = await (await t.as(bob).send('POST', `${BASE}/register`, response)).json()
    const res = await t.as(alice).delete(`${BASE}/keys/${key.id}`)
    expect(res.status).toBe(404)
    expect((await res.json()).message).toBe(Messages.keyNotFound)
    expect((await t.as(alice).delete(`${BASE}/keys/999`)).status).toBe(404)
    expect(await keysOf(t, bob)).toHaveLength(1)
  })

  test.each([
    ['GET', `${BASE}/keys`],
    ['POST', `${BASE}/request_register`],
    ['POST', `${BASE}/register`],
    ['DELETE', `${BASE}/keys/1`],
  ])('anonymous %s %s → 401', async (method, path) => {
    const t = await makeTestApp()
    expect((await t.request(method, path, { body: method === 'POST' ? { name: 'x' } : undefined })).status).toBe(401)
  })
})
