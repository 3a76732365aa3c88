import { expect } from 'bun:test'
import type { Socket } from 'bun'
import type { ClusterConnection } from '../../src/clusters/connection'
import * as store from '../../src/clusters/store'
import type { UserRow } from '../../src/identity/store'
import { generateServerTls } from '../../src/kube-emulator/tls'
import type { Network } from '../../src/net/egress'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'

/**
 * Registers a cluster without asking it anything (a fixture: import connects and would refuse a
 * dead one). The uid is random unless given.
 */
export async function registrationFixture(
  t: TestApp,
  owner: UserRow,
  name: string,
  connection: ClusterConnection,
  uid: string = crypto.randomUUID(),
): Promise<store.ClusterRow> {
  const sealedCredential = await t.deps.secrets.seal(JSON.stringify(connection.credential))
  return t.deps.db.write((tx) =>
    store.insertCluster(tx, {
      uid,
      ownerId: owner.id,
      name,
      lowerName: name.toLowerCase(),
      server: connection.server,
      caData: connection.caData,
      tlsServerName: connection.tlsServerName,
      insecureSkipTlsVerify: connection.insecureSkipTlsVerify,
      sealedCredential,
    }),
  )
}

/** What a test member cluster offers an importer: an emulator (`startEmulator`) is one. */
export interface MemberServer {
  url: string
  caCertPem?: string
  token: string
}

export interface ClusterLab {
  t: TestApp
  alice: TestUser
  bob: TestUser
}

/** Test members listen on loopback: private endpoints allowed. */
const LOOPBACK_MEMBERS = { PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' }

/** An app (private endpoints allowed unless `env` says otherwise) with users alice and bob. */
export async function clusterLab(env: Record<string, string> = LOOPBACK_MEMBERS): Promise<ClusterLab> {
  const t = await makeTestApp(env)
  const [alice, bob] = await t.users('alice', 'bob')
  return { t, alice: alice!, bob: bob! }
}

/**
 * A clusterLab (with `env` added) where alice imported `member` as her cluster `dev` through the
 * API, as a user would: the import connects to the member and must succeed.
 */
export async function importedCluster(member: MemberServer, env: Record<string, string> = {}): Promise<ClusterLab> {
  const lab = await clusterLab({ ...LOOPBACK_MEMBERS, ...env })
  expect((await importAs(lab.t, lab.alice, 'alice', importBody(member, 'dev'))).status).toBe(201)
  return lab
}

/** The import body naming `member` as `name`: its address, its CA (base64) when it has one, its bearer token. */
export const importBody = (member: MemberServer, name: string) => ({
  name,
  server: member.url,
  ...(member.caCertPem ? { caData: Buffer.from(member.caCertPem).toString('base64') } : {}),
  token: member.token,
})

/** `who` imports a cluster for `owner` (a user or an org) through the API. */
export const importAs = (t: TestApp, who: TestUser, owner: string, body: unknown) =>
  t.as(who).send('POST', `/api/v1/clustersv2/${owner}/import`, body)

/**
 * The network an app sees in a test (installed as its `deps.network`): the test answers for its own
 * host names and re-points them at will, and names the loopback addresses that stand in for the
 * public internet. Every other address is classified as in production: another loopback address is
 * private, a metadata address is refused whatever this says.
 */
export class LabNetwork implements Network {
  private readonly names = new Map<string, string[]>()
  readonly publicAddresses: ReadonlySet<string>

  constructor(publicAddresses: string[] = []) {
    this.publicAddresses = new Set(publicAddresses)
  }

  /** From now on `name` resolves to `addresses`. */
  point(name: string, ...addresses: string[]): void {
    this.names.set(name, addresses)
  }

  readonly resolve = async (host: string): Promise<string[]> => {
    const addresses = this.names.get(host)
    if (!addresses) throw Object.assign(new Error(`${host} does not resolve`), { code: 'ENOTFOUND' })
    return addresses
  }

  /** Makes `t` resolve through this network. */
  install(t: TestApp): this {
    t.deps.network = this
    return this
  }
}

/** A cluster registered at an address where nothing listens: for routes that check the registration and never reach it. */
export const deadRegistrationFixture = (t: TestApp, owner: UserRow, name: string) =>
  registrationFixture(t, owner, name, {
    server: 'https://127.0.0.1:9',
    caData: '',
    tlsServerName: '',
    insecureSkipTlsVerify: false,
    credential: { token: 'never-used' },
  })

/** The headers of a valid WebSocket opening handshake (RFC 6455 §4.1) asking for Kubernetes' v5 stream protocol. */
export const WEBSOCKET_UPGRADE: Readonly<Record<string, string>> = {
  upgrade: 'websocket',
  connection: 'Upgrade',
  'sec-websocket-version': '13',
  'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
  'sec-websocket-protocol': 'v5.channel.k8s.io',
}

/** What the hostile server saw: connections opened, the request heads in order, connections the client closed. */
export interface Hostile {
  url: string
  connections: number
  requests: string[]
  closed: number[]
  connection: ClusterConnection
  stop(): void
}

/**
 * A TLS server that reads request heads (and Content-Length bodies) and answers each with
 * `answer(path, connectionNumber, socket)`: raw writes, as many and as split as the test wants.
 */
export async function hostile(
  answer: (path: string, connection: number, socket: Socket<{ id: number; buffered: string }>) => void | Promise<void>,
): Promise<Hostile> {
  const tls = await generateServerTls(['127.0.0.1'])
  const state = { connections: 0, requests: [] as string[], closed: [] as number[] }
  const server = Bun.listen<{ id: number; buffered: string }>({
    hostname: '127.0.0.1',
    port: 0,
    tls: { cert: tls.certPem, key: tls.keyPem },
    socket: {
      open(socket) {
        socket.data = { id: ++state.connections, buffered: '' }
      },
      close(socket) {
        state.closed.push(socket.data.id)
      },
      async data(socket, data) {
        socket.data.buffered += new TextDecoder().decode(data)
        for (;;) {
          const end = socket.data.buffered.indexOf('\r\n\r\n')
          if (end < 0) return
          const head = socket.data.buffered.slice(0, end)
          const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0)
          if (socket.data.buffered.length < end + 4 + length) return
          socket.data.buffered = socket.data.buffered.slice(end + 4 + length)
          state.requests.push(head)
          await answer(head.split(' ')[1]!, socket.data.id, socket)
        }
      },
    },
  })
  const url = `https://127.0.0.1:${server.port}`
  const result: Hostile = {
    url,
    requests: state.requests,
    closed: state.closed,
    get connections() {
      return state.connections
    },
    connection: {
      server: url,
      caData: tls.caCertPem,
      tlsServerName: '',
      insecureSkipTlsVerify: false,
      credential: { token: 'member-token' },
    },
    stop: () => server.stop(true),
  }
  return result
}
