import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { decode, type User } from '@nats-io/jwt'
import { closeMsgbus } from '../../src/msgbus/bus'
import { makeTestApp, PASSWORD, tempDir } from '../support/app'
import { natsServer } from '../support/nats'
import { freePort } from '../support/ports'

// Real nats-server processes and waits on the clock: room for a loaded machine.
setDefaultTimeout(20000)

/** The first protocol line nats-server answers a raw websocket CONNECT + PING with. */
async function websocketAnswer(port: number, cookie: string | undefined): Promise<string> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}`, { headers: cookie ? { Cookie: cookie } : {} } as unknown as string[])
  ws.binaryType = 'arraybuffer'
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      ws.close()
      reject(new Error('no answer'))
    }, 3000)
    ws.onmessage = (event) => {
      const text = typeof event.data === 'string' ? event.data : new TextDecoder().decode(event.data as ArrayBuffer)
      if (text.startsWith('INFO')) {
        ws.send('CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\nPING\r\n')
        return
      }
      clearTimeout(timer)
      ws.close()
      resolve(text.trim())
    }
    ws.onerror = () => {
      clearTimeout(timer)
      reject(new Error('websocket failed'))
    }
  })
}

/** `name=value` of the Set-Cookie header for `name`, and its attributes. */
function setCookie(res: Response, name: string): string | undefined {
  return res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))
}

// One app and nats-server for the file (cleaned up when it ends); each test signs in afresh.
const busLab = await (async () => {
  const port = freePort()
  const t = await makeTestApp({ MSGBUS_URLS: `nats://127.0.0.1:${port}` })
  afterAll(() => closeMsgbus(t.deps))
  const [ann] = await t.users('ann')
  const nats = natsServer(t.config.dataDir, tempDir('nats-'), { port })
  await nats.start()
  return { t, ann: ann!, websocketPort: nats.websocketPort }
})()

describe('the msgbus_jwt sign-in cookie with a message bus', () => {
  /** Ann's sign-in response and the JWT of its msgbus_jwt cookie. */
  async function signIn() {
    const res = await busLab.t.request('POST', '/api/v1/user/signin', { body: { username: 'ann', password: PASSWORD } })
    expect(res.status).toBe(200)
    const header = setCookie(res, 'msgbus_jwt')
    return { res, header, jwt: header && /^msgbus_jwt=([^;]+)/.exec(header)?.[1] }
  }

  test('sign-in sets msgbus_jwt, HttpOnly and SameSite=Lax', async () => {
    const { header } = await signIn()
    expect(header).toContain('HttpOnly')
    expect(header).toContain('SameSite=Lax')
  })

  test("the cookie is a bearer JWT of at most 15 minutes for the user's own subjects", async () => {
    const claims = decode<User>((await signIn()).jwt!)
    expect(claims.nats.bearer_token).toBe(true)
    expect(claims.exp! - claims.iat).toBeLessThanOrEqual(15 * 60)
    const uid = busLab.ann.user.id
    // The personal permissions: own subjects, own reply inbox, never the shared _INBOX.>.
    expect(claims.nats.sub?.allow).toEqual([`user.${uid}.>`, `_INBOX_${uid}.>`])
    expect(claims.nats.pub?.allow).toEqual([`user.${uid}.>`])
  })

  test('the cookie authenticates a websocket', async () => {
    const { jwt } = await signIn()
    expect(await websocketAnswer(busLab.websocketPort, `msgbus_jwt=${jwt}`)).toBe('PONG')
  })

  test('a websocket without the cookie is refused', async () => {
    expect(await websocketAnswer(busLab.websocketPort, undefined)).toMatch(/Authorization Violation/)
  })

  test('sign-out clears the cookie', async () => {
    const { res } = await signIn()
    const session = /^platform_session=([^;]+)/.exec(setCookie(res, 'platform_session')!)![1]!
    const out = await busLab.t.request('GET', '/api/v1/user/signout', { headers: { cookie: `platform_session=${session}` } })
    expect(out.status).toBe(200)
    expect(setCookie(out, 'msgbus_jwt')).toMatch(/^msgbus_jwt=;.*Max-Age=0/)
  })
})

describe('the msgbus_jwt sign-in cookie', () => {
  test('without MSGBUS_URLS sign-in sets no message-bus cookie', async () => {
    const t = await makeTestApp()
    await t.users('ann')
    const res = await t.request('POST', '/api/v1/user/signin', { body: { username: 'ann', password: PASSWORD } })
    expect(res.status).toBe(200)
    expect(setCookie(res, 'msgbus_jwt')).toBeUndefined()
  })

  test('a password change clears the cookie', async () => {
    const t = await makeTestApp()
    const [ann] = await t.users('ann')
    const res = await t.as(ann).send('POST', '/api/v1/user/settings/account/password', {
      old_password: PASSWORD,
      password: 'another horse battery',
      retype: 'another horse battery',
    })
    expect(res.status).toBe(200)
    expect(setCookie(res, 'msgbus_jwt')).toMatch(/^msgbus_jwt=;.*Max-Age=0/)
  })
})
