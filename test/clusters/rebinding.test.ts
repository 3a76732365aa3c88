import { afterAll, expect, test } from 'bun:test'
import { MemberMessages } from '../../src/clusters/member/failures'
import { startEmulator } from '../../src/kube-emulator'
import { IDLE_CLOSE_MS } from '../../src/net/http1/pool'
import { makeTestApp } from '../support/app'
import { type ClusterLab, clusterLab, importAs, importBody, LabNetwork } from './support'

// DNS rebinding through an imported cluster. The test answers for the name `rebind.test` itself
// (the app's deps.network) and re-points it after import. Everything dialled is loopback: the
// member on 127.0.0.1 (which the lab's policy lets stand in for a public address), and, on the
// same port of 127.0.0.2 (private, as the production classifier says), a listener that counts
// every connection it is offered: the platform must never connect there.

const seen: string[] = []
const member = await startEmulator({ tls: true, seed: true, certificateNames: ['rebind.test'], log: (line) => void seen.push(line) })
afterAll(() => member.stop())
const port = Number(new URL(member.url).port)

const privateDials: string[] = []
const privateListener = Bun.listen({
  hostname: '127.0.0.2',
  port,
  socket: {
    open: () => void privateDials.push('connection'),
    data() {},
  },
})
afterAll(() => privateListener.stop(true))

const SERVER = `https://rebind.test:${port}`

/** alice's cluster `dev` at https://rebind.test:port, imported through the API while the name pointed at the member. */
async function rebindLab(env: Record<string, string>): Promise<ClusterLab & { network: LabNetwork }> {
  const lab = await clusterLab(env)
  const network = new LabNetwork(['127.0.0.1']).install(lab.t)
  network.point('rebind.test', '127.0.0.1')
  expect((await importAs(lab.t, lab.alice, 'alice', importBody({ ...member, url: SERVER }, 'dev'))).status).toBe(201)
  return { ...lab, network }
}

const messageOf = async (res: Response) => ((await res.json()) as { message: string }).message

test('a name that re-resolves to a private address after import → every transport refuses it (private endpoints not allowed); that address never sees a connection', async () => {
  const { t, alice, network } = await rebindLab({})
  const version = await t.as(alice).get('/api/v1/clusters/alice/dev/k8s/version')
  expect(version.status).toBe(200)
  expect(((await version.json()) as { gitVersion: string }).gitVersion).toMatch(/^v1\./)

  network.point('rebind.test', '127.0.0.2')
  // The connection the pool kept to the checked address may still serve; a new one is what a rebinding needs.
  t.clock.advance(IDLE_CLOSE_MS)
  const finite = await t.as(alice).get('/api/v1/clusters/alice/dev/k8s/version')
  expect(finite.status).toBe(502)
  expect(await messageOf(finite)).toBe(MemberMessages.privateAddress('dev'))
  const watch = await t.as(alice).get('/api/v1/clusters/alice/dev/k8s/api/v1/namespaces/demo/configmaps?watch=true')
  expect(watch.status).toBe(502)
  expect(await messageOf(watch)).toBe(MemberMessages.privateAddress('dev'))

  const base = await t.listen()
  const exec = new WebSocket(
    `${base.replace('http', 'ws')}/api/v1/clusters/alice/dev/k8s/api/v1/namespaces/demo/pods/web-0/exec?command=true&stdout=true&access_token=${alice.token}`,
    ['v5.channel.k8s.io'],
  )
  const opened = await new Promise<boolean>((settle) => {
    exec.addEventListener('open', () => settle(true))
    exec.addEventListener('close', () => settle(false))
  })
  expect(opened).toBe(false)

  // The health probe too: past its cache, the cluster reads NotReady for the same reason.
  t.clock.advance(60_000)
  const info = await t.as(alice).get('/api/v1/clustersv2/alice/dev')
  expect(((await info.json()) as { status: { message?: string } }).status.message).toBe(MemberMessages.privateAddress('dev'))

  expect(privateDials).toEqual([])
})

test('a name re-pointed at a cloud metadata or pod-identity credential address → refused even while private endpoints are allowed', async () => {
  const { t, alice, network } = await rebindLab({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
  for (const answers of [['169.254.169.254'], ['169.254.170.2'], ['169.254.170.23'], ['fd00:ec2::23'], ['127.0.0.1', '169.254.170.2']]) {
    network.point('rebind.test', ...answers)
    t.clock.advance(IDLE_CLOSE_MS)
    const res = await t.as(alice).get('/api/v1/clusters/alice/dev/k8s/version')
    expect(res.status).toBe(502)
    expect(await messageOf(res)).toBe(MemberMessages.metadataAddress('dev'))
  }
  // Pointed back at the member, the cluster answers again: the refusals were the addresses'.
  network.point('rebind.test', '127.0.0.1')
  expect((await t.as(alice).get('/api/v1/clusters/alice/dev/k8s/version')).status).toBe(200)
})

test('a cluster registered while private endpoints were allowed → refused once the platform runs without them; the member sees no request', async () => {
  const first = await clusterLab({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
  expect((await importAs(first.t, first.alice, 'alice', importBody(member, 'dev'))).status).toBe(201)
  expect((await first.t.as(first.alice).get('/api/v1/clusters/alice/dev/k8s/version')).status).toBe(200)

  // The same data dir, started again with the setting off (its default).
  const restarted = await makeTestApp({ PLATFORM_DATA_DIR: first.t.config.dataDir })
  const before = seen.length
  const res = await restarted.as(first.alice).get('/api/v1/clusters/alice/dev/k8s/version')
  expect(res.status).toBe(502)
  expect(await messageOf(res)).toBe(MemberMessages.privateAddress('dev'))
  expect(seen.slice(before)).toEqual([])
})

test('the connection goes to the address, and TLS checks the host name: a certificate that names the address but not the host → refused at import', async () => {
  const other = await startEmulator({ tls: true, seed: true, port: 0 })
  try {
    const { t, alice } = await clusterLab({})
    const network = new LabNetwork(['127.0.0.1']).install(t)
    network.point('elsewhere.test', '127.0.0.1')
    const res = await importAs(
      t,
      alice,
      'alice',
      importBody({ ...other, url: `https://elsewhere.test:${new URL(other.url).port}` }, 'other'),
    )
    expect(res.status).toBe(422)
    expect(await messageOf(res)).toContain('TLS certificate for another name')
  } finally {
    await other.stop()
  }
})
