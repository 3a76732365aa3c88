/**
 * A cluster the platform cannot dial, reached through its agent: the platform serves TLS on a real
 * port with private endpoints refused (the default), an emulator listens on loopback, alice
 * connects it as `edge`, and agents run as separate processes (`bun src/main.ts agent`) with the
 * emulator's kubeconfig, as beside a k3s machine.
 */
import { afterAll } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Emulator, startEmulator } from '../../src/kube-emulator'
import { generateServerTls } from '../../src/kube-emulator/tls'
import { makeTestApp, type TestApp, type TestUser, tempDir } from '../support/app'
import { stopChild, stopWithScope } from '../support/children'
import { freePort } from '../support/ports'
import { MAIN } from '../support/process'
import { eventually } from '../support/wait'

export interface AgentLab {
  t: TestApp
  alice: TestUser
  bob: TestUser
  /** The platform's https origin, its CA and its CA file. */
  base: string
  caPem: string
  caFile: string
  dataDir: string
  member: Emulator
  /** The emulator's kubeconfig, as the agent beside it reads it. */
  memberKubeconfig: string
  /** `edge`'s agent token (from connect; a test that rotates it sets the new one). */
  token: string
  /** alice's kubeconfig for `edge` through the platform. */
  kubeconfig: () => Promise<string>
  /** Stops the platform's listener (every connection cut) and listens again on the same port. */
  restart(): Promise<void>
  /** Stops every agent started for this lab. */
  stopAgents(): Promise<void>
  agents: AgentProcess[]
}

export type AgentProcess = Bun.Subprocess<'ignore', 'pipe', 'pipe'>

/** Starts the platform and the member; alice connects `edge`. Everything stops with the test file. */
export async function agentLab(env: Record<string, string> = {}): Promise<AgentLab> {
  const dataDir = tempDir()
  const port = freePort()
  const tls = await generateServerTls(['127.0.0.1'])
  const caFile = join(dataDir, 'ca.crt')
  writeFileSync(join(dataDir, 'tls.crt'), tls.certPem)
  writeFileSync(join(dataDir, 'tls.key'), tls.keyPem)
  writeFileSync(caFile, tls.caCertPem)
  const t = await makeTestApp({
    PLATFORM_PUBLIC_URL: `https://127.0.0.1:${port}`,
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_TLS_CERT_FILE: join(dataDir, 'tls.crt'),
    PLATFORM_TLS_KEY_FILE: join(dataDir, 'tls.key'),
    PLATFORM_TLS_CA_FILE: caFile,
    ...env,
  })
  const server = t.app.listen({
    port,
    hostname: '127.0.0.1',
    reusePort: false,
    idleTimeout: 60,
    tls: { cert: tls.certPem, key: tls.keyPem },
  })
  const member = await startEmulator({ tls: true })
  afterAll(async () => {
    await server.stop(true)
    await member.stop()
  })
  const [alice, bob] = await t.users('alice', 'bob')
  const connected = await t.as(alice!).send('POST', '/api/v1/clustersv2/alice/connect', { name: 'edge' })
  if (connected.status !== 201) throw new Error(`connect answered ${connected.status}: ${await connected.text()}`)
  const { token } = (await connected.json()) as { token: string }
  const memberKubeconfig = join(dataDir, 'member.kubeconfig')
  writeFileSync(memberKubeconfig, member.kubeconfig())
  const agents: AgentProcess[] = []
  return {
    t,
    alice: alice!,
    bob: bob!,
    base: `https://127.0.0.1:${port}`,
    caPem: tls.caCertPem,
    caFile,
    dataDir,
    member,
    memberKubeconfig,
    token,
    kubeconfig: async () => {
      const path = join(dataDir, `alice-${crypto.randomUUID()}.kubeconfig`)
      writeFileSync(path, await (await t.as(alice!).get('/api/v1/clustersv2/alice/edge/kubeconfig')).text())
      return path
    },
    restart: async () => {
      await t.app.server?.stop(true)
      await Bun.sleep(200)
      t.app.listen({ port, hostname: '127.0.0.1', reusePort: false, idleTimeout: 60, tls: { cert: tls.certPem, key: tls.keyPem } })
    },
    agents,
    stopAgents: async () => {
      await Promise.all(agents.splice(0).map((agent) => stopChild(agent)))
    },
  }
}

/** Starts an agent process for `lab` (its token unless `token`, the member's kubeconfig unless `kubeconfig`); stopped with the test file. */
export function startAgent(lab: AgentLab, options: { token?: string; kubeconfig?: string; server?: string } = {}): AgentProcess {
  const agent = stopWithScope(
    Bun.spawn(
      [
        process.execPath,
        MAIN,
        'agent',
        '--server',
        options.server ?? lab.base,
        '--kubeconfig',
        options.kubeconfig ?? lab.memberKubeconfig,
        '--ca-file',
        lab.caFile,
      ],
      {
        env: { ...process.env, PLATFORM_AGENT_TOKEN: options.token ?? lab.token },
        stdin: 'ignore',
        stdout: 'pipe',
        stderr: 'pipe',
      },
    ),
  )
  lab.agents.push(agent)
  return agent
}

/** `edge`'s ClusterInfo.status as alice sees it. */
export async function edgeStatus(lab: AgentLab): Promise<{
  phase: string
  message?: string
  agent?: { connected: boolean; since?: string; lastSeen?: string; version?: string; address?: string }
}> {
  const res = await lab.t.as(lab.alice).get('/api/v1/clustersv2/alice/edge')
  return ((await res.json()) as { status: never }).status
}

/** Waits until `edge` has an agent connected (or none, with `connected` false). */
export const untilAgent = (lab: AgentLab, connected: boolean, timeoutMs = 15_000) =>
  eventually(async () => (await edgeStatus(lab)).agent?.connected === connected, timeoutMs)

export const stopAgent = (agent: AgentProcess) => stopChild(agent)
