import { describe, expect, test } from 'bun:test'
import { makeTestApp } from '../support/app'

const TOKENS = '/api/v1/user/settings/tokens/access-tokens/'

describe('int64 edges in bodies (T27)', () => {
  for (const expDate of ['1e300', '99999999999999999999', '9007199254740993']) {
    test(`a user creates a token with expDate ${expDate} → 422, nothing created`, async () => {
      const t = await makeTestApp()
      const [alice] = await t.users('alice')
      const res = await t.as(alice).send('POST', TOKENS, `{"name":"far","expDate":${expDate}}`, { 'content-type': 'application/json' })
      expect(res.status).toBe(422)
      expect((await (await t.as(alice).get(TOKENS)).json()).map((x: { name: string }) => x.name)).toEqual(['test'])
    })
  }

  test('a user creates a token expiring on 9999-12-31 → 201; the list shows that integer', async () => {
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).send('POST', TOKENS, { name: 'far', expDate: 253402300799 })
    expect(res.status).toBe(201)
    const listed = await (await t.as(alice).get(TOKENS)).text()
    expect(listed).toContain('"expDate":253402300799')
  })
})
