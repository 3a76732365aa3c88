import { afterAll, expect } from 'bun:test'
import { type ClaimsData, decode, type User } from '@nats-io/jwt'
import type { ConnectionOptions, NatsConnection } from '@nats-io/transport-node'
import { closeMsgbus } from '../../src/msgbus/bus'
import { makeTestApp, type TestApp, type TestUser, tempDir } from '../support/app'
import { connectWithCredentials, type NatsServer, natsServer } from '../support/nats'
import { freePort } from '../support/ports'

export interface Credentials {
  msgbusEndpoints: string[]
  credentials: string
}

/** An app with MSGBUS_URLS pointing at a real nats-server configured by `msgbus nats-config`. */
export async function lab(env: Record<string, string> = {}): Promise<{ t: TestApp; nats: NatsServer }> {
  const port = freePort()
  const t = await makeTestApp({ MSGBUS_URLS: `nats://127.0.0.1:${port}`, ...env })
  afterAll(() => closeMsgbus(t.deps))
  const nats = natsServer(t.config.dataDir, tempDir('nats-'), { port })
  await nats.start()
  return { t, nats }
}

export async function credentialsOf(t: TestApp, who: TestUser): Promise<Credentials> {
  const res = await t.as(who).get('/api/v1/user/msgbus/credentials')
  expect(res.status).toBe(200)
  return res.json() as Promise<Credentials>
}

/** A client connection with `creds`, closed after the test (or file) that made it. */
export async function connected(creds: Credentials, options: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
  const nc = await connectWithCredentials(creds.msgbusEndpoints[0]!, creds.credentials, options)
  afterAll(async () => {
    if (!nc.isClosed()) await nc.close()
  })
  return nc
}

export const userJwtOf = (creds: Credentials): ClaimsData<User> =>
  decode<User>(/-----BEGIN NATS USER JWT-----\n(.+)\n/.exec(Buffer.from(creds.credentials, 'base64').toString())![1]!)

export async function tokensOf(
  t: TestApp,
  who: TestUser,
  path = '/api/v1/user/settings/tokens/msgbus-tokens/',
): Promise<{ id: number; msgbusPubKey: string; revoked: boolean }[]> {
  const res = await t.as(who).get(path)
  expect(res.status).toBe(200)
  return res.json() as Promise<{ id: number; msgbusPubKey: string; revoked: boolean }[]>
}
