import { describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { avatarImages } from '../../db/schema'
import { Messages as AvatarMessages, importAvatarFiles, MAX_AVATAR_BYTES } from '../../src/identity/avatars/store'
import { Messages } from '../../src/identity/settings/service'
import { findUserById, updateUser } from '../../src/identity/store'
import { basic, PASSWORD, type TestApp } from '../support/app'
import { countingServer } from '../support/counting-server'
import { makeHttpTestApp } from './http'

const PNG = new Uint8Array([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0,
])
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0])
const GIF = new TextEncoder().encode('GIF89a\x01\x00\x01\x00')
const WEBP = new Uint8Array([...new TextEncoder().encode('RIFF'), 20, 0, 0, 0, ...new TextEncoder().encode('WEBPVP8 ')])

/** Names of the stored avatar images (every process sharing the database serves them). */
const storedAvatars = async (t: TestApp) => (await t.deps.db.read.select({ name: avatarImages.name }).from(avatarImages)).map((r) => r.name)

const form = (fields: Record<string, string | Blob>) => {
  const data = new FormData()
  for (const [key, value] of Object.entries(fields)) data.append(key, value)
  return data
}

async function signInCookie(t: TestApp, username: string, password = PASSWORD) {
  const res = await t.request('POST', '/api/v1/user/signin', { body: { username, password } })
  const values: Record<string, string> = {}
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';')
    values[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1)
  }
  return { cookie: `platform_session=${values.platform_session}; _csrf=${values._csrf}`, csrf: values._csrf }
}

describe('/api/v1/user/settings/profile', () => {
  test('get → the Profile', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).get('/api/v1/user/settings/profile')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      name: 'alice',
      full_name: '',
      email: 'alice@example.com',
      website: '',
      location: '',
      language: '',
      description: '',
      keep_email_private: false,
    })
  })

  test('update → 200 with the new values, visible on the public profile', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).send('POST', '/api/v1/user/settings/profile', {
      full_name: 'Alice A.',
      website: 'https://alice.test',
      location: 'Lyon',
      description: 'hi',
      language: 'fr-FR',
      keep_email_private: true,
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({
      full_name: 'Alice A.',
      website: 'https://alice.test',
      location: 'Lyon',
      keep_email_private: true,
    })
    expect(await (await t.request('GET', '/api/v1/users/alice')).json()).toMatchObject({ full_name: 'Alice A.', location: 'Lyon' })
  })

  test('is_admin, id, active and friends in the body change nothing', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).send('POST', '/api/v1/user/settings/profile', {
      full_name: 'A',
      is_admin: true,
      isAdmin: true,
      id: 999,
      prohibit_login: true,
      active: false,
      type: 1,
      allow_create_organization: false,
      visibility: 'private',
    })
    expect(res.status).toBe(200)
    const row = (await findUserById(t.deps.db.read, alice.user.id))!
    expect(row).toMatchObject({
      id: alice.user.id,
      isAdmin: false,
      prohibitLogin: false,
      isActive: true,
      type: 0,
      allowCreateOrganization: true,
      visibility: 0,
      fullName: 'A',
    })
  })

  test('rename → 200 and the user answers under the new name; a taken or reserved name → 422', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice', 'bob')
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/profile', { name: 'bob' })).status).toBe(422)
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/profile', { name: 'BOB' })).status).toBe(422)
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/profile', { name: 'api' })).status).toBe(422)
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/profile', { name: '-x' })).status).toBe(422)
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/profile', { name: 'alicia' })).status).toBe(200)
    expect((await t.request('GET', '/api/v1/users/alicia')).status).toBe(200)
    expect((await t.request('GET', '/api/v1/users/alice')).status).toBe(404)
  })

  test('a bad website or over-long field → 422 and nothing changes', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect(
      (await t.as(alice).send('POST', '/api/v1/user/settings/profile', { website: 'javascript:alert(1)', full_name: 'X' })).status,
    ).toBe(422)
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/profile', { location: 'x'.repeat(51) })).status).toBe(422)
    expect((await (await t.as(alice).get('/api/v1/user/settings/profile')).json()).full_name).toBe('')
  })

  test('email: one of my addresses → becomes primary; an address I do not own → 422', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice', 'bob')
    await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['alt@x.test'] })
    const taken = await t.as(alice).send('POST', '/api/v1/user/settings/profile', { email: 'bob@example.com' })
    expect(taken.status).toBe(422)
    expect((await taken.json()).message).toBe(Messages.emailNotOwned)
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/profile', { email: 'alt@x.test' })).status).toBe(200)
    const emails = await (await t.as(alice).get('/api/v1/user/emails')).json()
    expect(emails.filter((e: { primary: boolean }) => e.primary).map((e: { email: string }) => e.email)).toEqual(['alt@x.test'])
  })

  test('anonymous → 401', async () => {
    const t = await makeHttpTestApp()
    expect((await t.request('GET', '/api/v1/user/settings/profile')).status).toBe(401)
    expect((await t.request('POST', '/api/v1/user/settings/profile', { body: {} })).status).toBe(401)
  })
})

describe('/api/v1/user/settings/account/password', () => {
  test('right old password → 200; the new one works, the old one not; other sessions end, mine stays', async () => {
    const t = await makeHttpTestApp()
    await t.users('alice')
    const mine = await signInCookie(t, 'alice')
    const other = await signInCookie(t, 'alice')
    const res = await t.request('POST', '/api/v1/user/settings/account/password', {
      headers: { cookie: mine.cookie, 'x-csrf-token': mine.csrf },
      body: { old_password: PASSWORD, password: 'a brand new one', retype: 'a brand new one' },
    })
    expect(res.status).toBe(200)
    expect((await t.request('GET', '/api/v1/user', { headers: { cookie: mine.cookie } })).status).toBe(200)
    expect((await t.request('GET', '/api/v1/user', { headers: { cookie: other.cookie } })).status).toBe(401)
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice', 'a brand new one') } })).status).toBe(200)
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice', PASSWORD) } })).status).toBe(401)
  })

  test('changed with a token → every session ends', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const session = await signInCookie(t, 'alice')
    await t.as(alice).send('POST', '/api/v1/user/settings/account/password', {
      old_password: PASSWORD,
      password: 'another password',
      retype: 'another password',
    })
    expect((await t.request('GET', '/api/v1/user', { headers: { cookie: session.cookie } })).status).toBe(401)
  })

  test('wrong old password → 422; too short → 422; retype mismatch → 422; missing field → 422', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const send = (body: unknown) => t.as(alice).send('POST', '/api/v1/user/settings/account/password', body)
    const wrong = await send({ old_password: 'nope', password: 'long enough', retype: 'long enough' })
    expect(wrong.status).toBe(422)
    expect((await wrong.json()).message).toBe(Messages.oldPasswordWrong)
    expect((await (await send({ old_password: PASSWORD, password: 'short', retype: 'short' })).json()).message).toBe(
      Messages.passwordTooShort,
    )
    expect((await (await send({ old_password: PASSWORD, password: 'long enough', retype: 'different!' })).json()).message).toBe(
      Messages.retypeMismatch,
    )
    expect((await send({ old_password: PASSWORD })).status).toBe(422)
    expect((await t.request('GET', '/api/v1/user', { headers: { authorization: basic('alice', PASSWORD) } })).status).toBe(200)
  })

  test('anonymous → 401', async () => {
    const t = await makeHttpTestApp()
    expect((await t.request('POST', '/api/v1/user/settings/account/password', { body: {} })).status).toBe(401)
  })
})

describe('/api/v1/user/settings/account/delete', () => {
  /** Alice, following and followed by bob, with a second email and an avatar, deletes her account from a signed-in browser. */
  async function aliceDeletesHerAccount() {
    const t = await makeHttpTestApp()
    const [alice, bob] = await t.users('alice', 'bob')
    await t.as(alice).send('PUT', '/api/v1/user/following/bob')
    await t.as(bob).send('PUT', '/api/v1/user/following/alice')
    await t.as(alice).send('POST', '/api/v1/user/emails', { emails: ['alt@x.test'] })
    await t.as(alice).send('POST', '/api/v1/user/settings/avatar', form({ avatar: new Blob([PNG], { type: 'image/png' }) }))
    const session = await signInCookie(t, 'alice')
    const res = await t.request('POST', `/api/v1/user/settings/account/delete?password=${encodeURIComponent(PASSWORD)}`, {
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf },
    })
    return { t, alice: alice!, bob: bob!, session, res }
  }

  test('right password → 200 and the session cookie cleared', async () => {
    const { res } = await aliceDeletesHerAccount()
    expect(res.status).toBe(200)
    expect(res.headers.getSetCookie().join('\n')).toMatch(/platform_session=;.*Max-Age=0/)
  })

  test('the account is gone: its profile → 404, its token and its session → 401', async () => {
    const { t, alice, session } = await aliceDeletesHerAccount()
    expect((await t.request('GET', '/api/v1/users/alice')).status).toBe(404)
    expect((await t.as(alice).get('/api/v1/user')).status).toBe(401)
    expect((await t.request('GET', '/api/v1/user', { headers: { cookie: session.cookie } })).status).toBe(401)
  })

  test('what hung off it is gone: follows both ways, its emails (free to take again), its avatar image', async () => {
    const { t, bob } = await aliceDeletesHerAccount()
    expect(await (await t.as(bob).get('/api/v1/user/followers')).json()).toEqual([])
    expect(await (await t.as(bob).get('/api/v1/user/following')).json()).toEqual([])
    expect((await t.as(bob).send('POST', '/api/v1/user/emails', { emails: ['alt@x.test', 'alice@example.com'] })).status).toBe(201)
    expect(await storedAvatars(t)).toEqual([])
  })

  test('wrong or missing password → 403 and the account stays', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const res = await t.as(alice).send('POST', '/api/v1/user/settings/account/delete?password=nope')
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(Messages.accountPasswordWrong)
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/account/delete')).status).toBe(403)
    expect((await t.as(alice).get('/api/v1/user')).status).toBe(200)
  })

  test('the last site admin → 403', async () => {
    const t = await makeHttpTestApp()
    const admin = await t.admin()
    const res = await t.as(admin).send('POST', `/api/v1/user/settings/account/delete?password=${encodeURIComponent(PASSWORD)}`)
    expect(res.status).toBe(403)
    expect((await res.json()).message).toBe(Messages.lastAdmin)
  })

  test('anonymous → 401', async () => {
    const t = await makeHttpTestApp()
    expect((await t.request('POST', '/api/v1/user/settings/account/delete?password=x')).status).toBe(401)
  })
})

describe('/api/v1/user/settings/pagination', () => {
  test('default → 30; set 10 → 200 and read back', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect(await (await t.as(alice).get('/api/v1/user/settings/pagination')).json()).toEqual({ pageSize: 30 })
    const res = await t.as(alice).send('POST', '/api/v1/user/settings/pagination', { pageSize: 10 })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ pageSize: 10 })
    expect(await (await t.as(alice).get('/api/v1/user/settings/pagination')).json()).toEqual({ pageSize: 10 })
  })

  test.each([0, 51, -1, 'ten'])('pageSize %p → 422', async (pageSize) => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/pagination', { pageSize })).status).toBe(422)
  })
})

describe('avatars', () => {
  test.each([
    ['png', PNG, 'image/png'],
    ['jpeg', JPEG, 'image/jpeg'],
    ['gif', GIF, 'image/gif'],
    ['webp', WEBP, 'image/webp'],
  ] as const)('upload a %s → 200; /avatars/<name> serves it with its type and an ETag; If-None-Match → 304', async (_, bytes, type) => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    // The declared type is wrong on purpose: only the bytes count.
    const res = await t.as(alice).send('POST', '/api/v1/user/settings/avatar', form({ avatar: new Blob([bytes], { type: 'text/plain' }) }))
    expect(res.status).toBe(200)
    expect(await (await t.as(alice).get('/api/v1/user/settings/avatar')).json()).toEqual({
      source: 'local',
      avatar_link: '',
      federavatar: false,
    })
    const avatarUrl = new URL((await (await t.as(alice).get('/api/v1/user')).json()).avatar_url)
    const image = await t.request('GET', avatarUrl.pathname)
    expect(image.status).toBe(200)
    expect(image.headers.get('content-type')).toBe(type)
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(bytes)
    const etag = image.headers.get('etag')!
    expect((await t.request('GET', avatarUrl.pathname, { headers: { 'if-none-match': etag } })).status).toBe(304)
  })

  test('a file that is not an image (even named .png) → 422 and nothing stored', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const res = await t
      .as(alice)
      .send('POST', '/api/v1/user/settings/avatar', form({ avatar: new File(['<svg onload=alert(1)>'], 'x.png', { type: 'image/png' }) }))
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(AvatarMessages.avatarNotImage)
    expect(await storedAvatars(t)).toEqual([])
  })

  test('an image over 1 MiB → 422', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const big = new Uint8Array(MAX_AVATAR_BYTES + 1)
    big.set(PNG)
    const res = await t.as(alice).send('POST', '/api/v1/user/settings/avatar', form({ avatar: new Blob([big]) }))
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(AvatarMessages.avatarTooLarge)
  })

  test('an email avatar_link → Gravatar (the one host /avatars redirects to); junk → 422; nothing → 422', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/avatar', form({ avatar_link: 'alice@example.com' }))).status).toBe(200)
    expect((await t.request('GET', '/avatars/alice')).headers.get('location')).toStartWith('https://gravatar.com/avatar/')
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/avatar', form({ avatar_link: 'javascript:alert(1)' }))).status).toBe(422)
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/avatar', form({ source: 'local' }))).status).toBe(422)
  })

  describe('avatar_link URLs are fetched once and served by the platform, never redirected to (open redirect)', () => {
    const imageHost = (answer: () => Response) => {
      const server = countingServer(answer)
      return { ...server, url: `${server.origin}/me.png` }
    }

    test('an image URL → the platform serves its own copy with 200, and the host is asked once', async () => {
      const t = await makeHttpTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
      const [alice] = await t.users('alice')
      const host = imageHost(() => new Response(PNG, { headers: { 'content-type': 'image/png' } }))
      try {
        expect((await t.as(alice).send('POST', '/api/v1/user/settings/avatar', form({ avatar_link: host.url }))).status).toBe(200)
        for (let i = 0; i < 3; i++) {
          const res = await t.request('GET', '/avatars/alice')
          expect(res.status).toBe(200)
          expect(res.headers.get('location')).toBeNull()
          expect(new Uint8Array(await res.arrayBuffer())).toEqual(PNG)
        }
        expect(host.hits()).toBe(1)
        expect(await (await t.as(alice).get('/api/v1/user/settings/avatar')).json()).toEqual({
          source: 'lookup',
          avatar_link: host.url,
          federavatar: false,
        })
      } finally {
        host.stop()
      }
    })

    test('a URL that is not an image → 422, nothing changes', async () => {
      const t = await makeHttpTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
      const [alice] = await t.users('alice')
      const host = imageHost(() => new Response('<html>phish</html>', { headers: { 'content-type': 'text/html' } }))
      try {
        expect((await t.as(alice).send('POST', '/api/v1/user/settings/avatar', form({ avatar_link: host.url }))).status).toBe(422)
        expect((await t.request('GET', '/avatars/alice')).headers.get('content-type')).toBe('image/svg+xml')
      } finally {
        host.stop()
      }
    })

    test('a URL that redirects → 422 (the redirect is not followed)', async () => {
      const t = await makeHttpTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
      const [alice] = await t.users('alice')
      const host = imageHost(() => Response.redirect('https://evil.example/', 302))
      try {
        const res = await t.as(alice).send('POST', '/api/v1/user/settings/avatar', form({ avatar_link: host.url }))
        expect(res.status).toBe(422)
        expect((await res.json()).message).toContain('redirect')
      } finally {
        host.stop()
      }
    })

    test('a metadata address, or a loopback one under the default policy → 422 and no request', async () => {
      const t = await makeHttpTestApp()
      const [alice] = await t.users('alice')
      const host = imageHost(() => new Response(PNG))
      try {
        expect(
          (
            await t
              .as(alice)
              .send('POST', '/api/v1/user/settings/avatar', form({ avatar_link: 'http://169.254.169.254/latest/meta-data/' }))
          ).status,
        ).toBe(422)
        expect((await t.as(alice).send('POST', '/api/v1/user/settings/avatar', form({ avatar_link: host.url }))).status).toBe(422)
        expect(host.hits()).toBe(0)
      } finally {
        host.stop()
      }
    })

    test('a link stored before this rule (an arbitrary URL, no copy) is not redirected to: the identicon is served', async () => {
      const t = await makeHttpTestApp()
      const [alice] = await t.users('alice')
      await t.deps.db.write((tx) => updateUser(tx, alice.user.id, { avatarLink: 'https://evil.example/x' }))
      const res = await t.request('GET', '/avatars/alice')
      expect(res.status).toBe(200)
      expect(res.headers.get('location')).toBeNull()
    })
  })

  test('delete → 200; the stored image goes and the generated identicon is served', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    await t.as(alice).send('POST', '/api/v1/user/settings/avatar', form({ avatar: new Blob([PNG]) }))
    expect((await t.as(alice).send('POST', '/api/v1/user/settings/avatar/delete')).status).toBe(200)
    expect(await storedAvatars(t)).toEqual([])
    const image = await t.request('GET', '/avatars/alice')
    expect(image.status).toBe(200)
    expect(image.headers.get('content-type')).toBe('image/svg+xml')
    expect(await image.text()).toStartWith('<svg')
    expect(await (await t.as(alice).get('/api/v1/user/settings/avatar')).json()).toEqual({
      source: 'default',
      avatar_link: '',
      federavatar: false,
    })
  })

  test('a new upload replaces the old image', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    await t.as(alice).send('POST', '/api/v1/user/settings/avatar', form({ avatar: new Blob([PNG]) }))
    await t.as(alice).send('POST', '/api/v1/user/settings/avatar', form({ avatar: new Blob([GIF]) }))
    expect((await storedAvatars(t)).map((name) => name.split('.').pop())).toEqual(['gif'])
  })

  test('an avatar file an earlier version kept in the data dir → moved into the database at start and still served; the file gone', async () => {
    const t = await makeHttpTestApp()
    const [alice] = await t.users('alice')
    const name = `user-${alice.user.id}-0123456789abcdef.png`
    mkdirSync(join(t.config.dataDir, 'avatars'))
    writeFileSync(join(t.config.dataDir, 'avatars', name), PNG)
    await t.deps.db.write((tx) => updateUser(tx, alice.user.id, { avatar: name }))
    expect(await importAvatarFiles(t.deps.db, t.config.dataDir)).toBe(1)
    expect(existsSync(join(t.config.dataDir, 'avatars'))).toBe(false)
    const image = await t.request('GET', '/avatars/alice')
    expect(image.headers.get('content-type')).toBe('image/png')
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(PNG)
  })

  test('/avatars/<unknown> → 404; anonymous settings → 401', async () => {
    const t = await makeHttpTestApp()
    expect((await t.request('GET', '/avatars/nobody')).status).toBe(404)
    expect((await t.request('GET', '/api/v1/user/settings/avatar')).status).toBe(401)
    expect((await t.request('POST', '/api/v1/user/settings/avatar/delete')).status).toBe(401)
  })
})
