import { describe, expect, test } from 'bun:test'
import { mintToken } from '../../src/identity/tokens/service'
import { makeOrg } from '../orgs/support'
import { makeTestApp } from '../support/app'

/** Routes where a token's scope does not apply, and why. */
const SCOPE_EXEMPT: Record<string, string> = {
  'GET /api/v1/version': 'says which build answers; reveals nothing of any account',
  'GET /api/v1/users/{username}/tokens': 'Basic with the real password only: tokens cannot call it',
  'POST /api/v1/users/{username}/tokens': 'Basic with the real password only: tokens cannot call it',
  'DELETE /api/v1/users/{username}/tokens/{token}': 'Basic with the real password only: tokens cannot call it',
  'GET /api/v1/user/signout': "ends the caller's own session; a token caller only gets cookies cleared",
  'GET /login/oauth/authorize': 'the OAuth consent page of a signed-in person',
  'POST /login/oauth/grant': 'the OAuth consent page of a signed-in person',
  'GET /api/v1/user/device': "a person's approval of a terminal sign-in: a browser session or the Basic password only, tokens refused",
  'POST /api/v1/user/device': "a person's approval of a terminal sign-in: a browser session or the Basic password only, tokens refused",
}

describe('token scopes', () => {
  test('every route that needs a caller declares the token scope it touches (or is a listed exemption)', async () => {
    const t = await makeTestApp()
    const doc = (await (await t.request('GET', '/api/v1/swagger.json')).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>
    }
    const undeclared: string[] = []
    for (const [path, operations] of Object.entries(doc.paths))
      for (const [method, operation] of Object.entries(operations)) {
        const route = `${method.toUpperCase()} ${path}`
        if (operation['x-permission'] !== 'public' && !operation['x-token-scope'] && !(route in SCOPE_EXEMPT)) undeclared.push(route)
      }
    expect(undeclared).toEqual([])
  })

  test('a read:user token cannot read an organization (its profile, members): 403; read:organization can', async () => {
    const t = await makeTestApp()
    const [olga, mia] = await t.users('olga', 'mia')
    await makeOrg(t, 'secret', { owner: olga!, members: [mia!], visibility: 'private' })
    const userOnly = (await mintToken(t.deps.db, mia!.user.id, { name: 'u', scopes: ['read:user'] })).plaintext
    const orgRead = (await mintToken(t.deps.db, mia!.user.id, { name: 'o', scopes: ['read:organization'] })).plaintext
    for (const path of [
      '/api/v1/orgs/secret',
      '/api/v1/orgs/secret/members',
      '/api/v1/orgs/secret/members/olga',
      '/api/v1/orgs/secret/public_members',
    ]) {
      expect(`${path} ${(await t.request('GET', path, { token: userOnly })).status}`).toBe(`${path} 403`)
      expect([200, 204]).toContain((await t.request('GET', path, { token: orgRead })).status)
    }
  })
})
