import { describe, expect, test } from 'bun:test'
import { generateKeyPairSync } from 'node:crypto'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { Messages } from '../../src/orgs/hosted-token/service'
import { makeOrg } from '../orgs/support'
import { makeTestApp } from '../support/app'

const API = '/api/v1'
const pem = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()

describe('GET /api/v1/user/hosted-token', () => {
  test('in hosted mode a user gets a 10-minute ES256 JWT naming them and their orgs, verifiable with the JWKS', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'hosted', PLATFORM_HOSTED_TOKEN_KEY: pem() })
    const [olga] = await t.users('olga')
    await makeOrg(t, 'acme', { owner: olga })
    const res = await t.as(olga).get(`${API}/user/hosted-token`)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const { hostedToken } = (await res.json()) as { hostedToken: string }
    const jwks = await (await t.request('GET', `${API}/hosted-token/jwks.json`)).json()
    const { payload, protectedHeader } = await jwtVerify(hostedToken, createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]), {
      algorithms: ['ES256'],
    })
    expect(protectedHeader.alg).toBe('ES256')
    expect(payload).toMatchObject({ sub: 'olga', uid: olga.user.id, orgs: ['acme'] })
    expect(payload.exp! - payload.iat!).toBe(600)
    expect(decodeProtectedHeader(hostedToken).kid).toBe((jwks as { keys: { kid: string }[] }).keys[0]!.kid)
    expect(JSON.stringify(jwks)).not.toContain('"d"')
  })

  test('a token signed by another key does not verify against the JWKS', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'hosted', PLATFORM_HOSTED_TOKEN_KEY: pem() })
    const other = await makeTestApp({ PLATFORM_MODES: 'hosted', PLATFORM_HOSTED_TOKEN_KEY: pem() })
    const [olga] = await other.users('olga')
    const { hostedToken } = (await (await other.as(olga).get(`${API}/user/hosted-token`)).json()) as { hostedToken: string }
    const jwks = await (await t.request('GET', `${API}/hosted-token/jwks.json`)).json()
    expect(jwtVerify(hostedToken, createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]))).rejects.toThrow()
  })

  test('anonymous → 401', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'hosted', PLATFORM_HOSTED_TOKEN_KEY: pem() })
    expect((await t.request('GET', `${API}/user/hosted-token`)).status).toBe(401)
  })

  test('hosted mode without PLATFORM_HOSTED_TOKEN_KEY → 503 naming it, on both routes', async () => {
    const t = await makeTestApp({ PLATFORM_MODES: 'hosted' })
    const [olga] = await t.users('olga')
    for (const res of [await t.as(olga).get(`${API}/user/hosted-token`), await t.request('GET', `${API}/hosted-token/jwks.json`)]) {
      expect(res.status).toBe(503)
      expect(((await res.json()) as { message: string }).message).toBe(Messages.notConfigured)
    }
  })

  test('outside hosted mode both routes are unknown → 404', async () => {
    const t = await makeTestApp({ PLATFORM_HOSTED_TOKEN_KEY: pem() })
    const [olga] = await t.users('olga')
    expect((await t.as(olga).get(`${API}/user/hosted-token`)).status).toBe(404)
    expect((await t.request('GET', `${API}/hosted-token/jwks.json`)).status).toBe(404)
  })

  test('a key that is not PKCS#8 PEM stops the configuration with a message naming the setting', async () => {
    const { loadConfig, ConfigError } = await import('../../src/config')
    expect(() => loadConfig({ PLATFORM_HOSTED_TOKEN_KEY: 'not a key' })).toThrow(ConfigError)
  })
})
