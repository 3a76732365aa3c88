/** An agent cluster's liveness: agents that die, hang, come back; a platform that restarts; rotated tokens; a token copied to another cluster. */
import { describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { agentTunnels, clusters } from '../../db/schema/clusters'
import { ConnectMessages, MAX_REFUSALS_PER_MINUTE } from '../../src/clusters/agent/connect'
import { AgentServiceMessages } from '../../src/clusters/agent/service'
import { sha256Hex } from '../../src/identity/tokens/secrets'
import { startEmulator } from '../../src/kube-emulator'
import { eventually } from '../support/wait'
import { agentLab, edgeStatus, startAgent, stopAgent, untilAgent } from './agent-lab'
import { WEBSOCKET_UPGRADE } from './support'

const lab = await agentLab()
const namespaces = () => lab.t.as(lab.alice).get('/api/v1/clusters/alice/edge/k8s/api/v1/namespaces')
const agentEvents = async () =>
  (await (await lab.t.as(await lab.t.admin()).get('/api/v1/admin/audit?kind=agent&limit=50')).json()) as {
    verb: string
    cluster?: string
    outcome: { status: number }
  }[]

describe('an agent cluster whose agent goes away and comes back', () => {
  test('no agent yet → 503 naming that none connected; status NotReady, connected false', async () => {
    const res = await namespaces()
    expect(res.status).toBe(503)
    // On the kubectl endpoint the answer is a Kubernetes Status, which kubectl prints.
    const body = (await res.json()) as { kind: string; reason: string; code: number; message: string }
    expect({ kind: body.kind, reason: body.reason, code: body.code }).toEqual({ kind: 'Status', reason: 'ServiceUnavailable', code: 503 })
    expect(body.message).toContain('has no agent connected (no agent has connected yet)')
    const status = await edgeStatus(lab)
    expect(status.phase).toBe('NotReady')
    expect(status.agent).toEqual({ connected: false })
  })

  test('agent killed (-9) → 503 naming when it was last seen, connected false; started again → answers', async () => {
    const agent = startAgent(lab)
    await untilAgent(lab, true)
    expect((await namespaces()).status).toBe(200)
    agent.kill('SIGKILL')
    await untilAgent(lab, false)
    const refused = await namespaces()
    expect(refused.status).toBe(503)
    expect(((await refused.json()) as { message: string }).message).toMatch(/has no agent connected \(last seen \d{4}-\d\d-\d\dT/)
    expect((await edgeStatus(lab)).agent?.lastSeen).toBeString()
    startAgent(lab)
    await eventually(async () => (await namespaces()).status === 200, 15_000)
    const status = await edgeStatus(lab)
    expect(status.phase).toBe('Active')
    expect(status.agent?.connected).toBe(true)
    expect(status.agent?.address).toBe('127.0.0.1')
    // Each tunnel is an `agent` event when it opens and when it ends, naming the cluster.
    const events = (await agentEvents()).filter((e) => e.cluster === 'alice/edge').map((e) => e.verb)
    expect(events.slice(0, 3)).toEqual(['connected', 'disconnected', 'connected'])
  }, 40_000)

  test('agent frozen (SIGSTOP: the connection stays open, nothing answers) → noticed within 15 s', async () => {
    await stopAllAgentsAndWait()
    const agent = startAgent(lab)
    await untilAgent(lab, true)
    agent.kill('SIGSTOP')
    const frozenAt = Date.now()
    await untilAgent(lab, false, 25_000)
    // 15 s of silence, then the next tick and the status read.
    expect(Date.now() - frozenAt).toBeLessThan(20_000)
    expect((await namespaces()).status).toBe(503)
    agent.kill('SIGCONT')
    await stopAgent(agent)
  }, 40_000)

  test('the platform restarts → the agent reconnects by itself', async () => {
    await stopAllAgentsAndWait()
    startAgent(lab)
    await untilAgent(lab, true)
    await lab.restart()
    await untilAgent(lab, false)
    await eventually(async () => (await namespaces()).status === 200, 20_000)
  }, 40_000)
})

describe('agent tokens', () => {
  test('connect again rotates the token: the old agent is cut off and refused; the new token connects', async () => {
    await stopAllAgentsAndWait()
    const old = startAgent(lab)
    await untilAgent(lab, true)
    const again = await lab.t.as(lab.alice).send('POST', '/api/v1/clustersv2/alice/connect', { name: 'edge' })
    expect(again.status).toBe(201)
    const { token } = (await again.json()) as { token: string }
    expect(token).not.toBe(lab.token)
    await untilAgent(lab, false)
    // The old agent keeps trying with its token and is refused each time.
    await eventually(async () => (await agentEvents()).some((e) => e.verb === 'refused' && e.outcome.status === 401), 10_000)
    await stopAgent(old)
    startAgent(lab, { token })
    await untilAgent(lab, true)
    expect((await namespaces()).status).toBe(200)
    lab.token = token
  }, 40_000)

  test("another cluster's agent holding this cluster's token → refused (403), and the platform keeps reaching the first", async () => {
    await stopAllAgentsAndWait()
    startAgent(lab)
    await untilAgent(lab, true)
    const seenByOther: string[] = []
    const other = await startEmulator({ tls: true, log: (line) => void seenByOther.push(line) })
    const otherKubeconfig = join(lab.dataDir, 'other.kubeconfig')
    writeFileSync(otherKubeconfig, other.kubeconfig())
    const copied = startAgent(lab, { kubeconfig: otherKubeconfig })
    await eventually(async () => (await agentEvents()).some((e) => e.verb === 'refused' && e.outcome.status === 403), 15_000)
    // Only the first agent's tunnel serves: what the platform reads is the first member's.
    const uid = (
      (await (await lab.t.as(lab.alice).get('/api/v1/clusters/alice/edge/k8s/api/v1/namespaces/kube-system')).json()) as {
        metadata: { uid: string }
      }
    ).metadata.uid
    const firstUid = JSON.parse(
      await (
        await fetch(`${lab.member.url}/api/v1/namespaces/kube-system`, {
          headers: { authorization: `Bearer ${lab.member.token}` },
          tls: { ca: lab.member.caCertPem },
        } as RequestInit)
      ).text(),
    ) as { metadata: { uid: string } }
    expect(uid).toBe(firstUid.metadata.uid)
    // The second member saw its own agent read its facts for the hello, and nothing else.
    const helloReads = /^GET \/(version|api\/v1\/namespaces\/kube-system|api\/v1\/nodes) /
    expect(seenByOther.length).toBeGreaterThan(0)
    expect(seenByOther.filter((line) => !helloReads.test(line))).toEqual([])
    await stopAgent(copied)
    // The copied agent was told why, in the close reason it logs.
    expect(await new Response(copied.stderr).text()).toContain(AgentServiceMessages.otherCluster.slice(0, 100))
    await other.stop()
  }, 40_000)

  test('an agent token is no user credential: 401 on the API, and agent.yaml takes no access token', async () => {
    for (const authorization of [`Bearer ${lab.token}`, `token ${lab.token}`]) {
      const res = await fetch(`${lab.base}/api/v1/user`, { headers: { authorization }, tls: { ca: lab.caPem } } as RequestInit)
      expect(res.status).toBe(401)
    }
    const withAccessToken = await fetch(`${lab.base}/api/v1/clustersv2/alice/edge/agent.yaml`, {
      headers: { authorization: `Bearer ${lab.alice.token}` },
      tls: { ca: lab.caPem },
    } as RequestInit)
    expect(withAccessToken.status).toBe(401)
    const manifest = await fetch(`${lab.base}/api/v1/clustersv2/alice/edge/agent.yaml`, {
      headers: { authorization: `Bearer ${lab.token}` },
      tls: { ca: lab.caPem },
    } as RequestInit)
    expect(manifest.status).toBe(200)
    expect(manifest.headers.get('content-type')).toStartWith('text/yaml')
    expect(await manifest.text()).toContain('kind: Deployment')
  })
})

/** Stops every agent this file started and waits until the platform sees none. */
async function stopAllAgentsAndWait(): Promise<void> {
  await lab.stopAgents()
  await untilAgent(lab, false, 20_000)
}

describe('several agents of one cluster', () => {
  test('two agents connected → the platform uses either; one killed → the other serves on', async () => {
    await stopAllAgentsAndWait()
    const first = startAgent(lab)
    startAgent(lab)
    await eventually(async () => (await lab.t.deps.db.read.select().from(agentTunnels).all()).length === 2, 15_000)
    for (let i = 0; i < 10; i++) expect((await namespaces()).status).toBe(200)
    first.kill('SIGKILL')
    await eventually(async () => (await lab.t.deps.db.read.select().from(agentTunnels).all()).length === 1, 15_000)
    for (let i = 0; i < 10; i++) expect((await namespaces()).status).toBe(200)
    expect((await edgeStatus(lab)).agent?.connected).toBe(true)
  }, 40_000)

  test('the agent token is stored as its SHA-256 only', async () => {
    const [row] = await lab.t.deps.db.read.select().from(clusters).where(eq(clusters.name, 'edge')).all()
    expect(row!.agentTokenHash).toBe(sha256Hex(lab.token))
    expect(JSON.stringify(row)).not.toContain(lab.token)
  })
})

describe('connect floods', () => {
  test('refused tokens from one address → 429 after the limit, and only agent events are written', async () => {
    const attempt = () =>
      fetch(`${lab.base}/api/v1/agent/connect`, {
        headers: { authorization: `Bearer agt_${'0'.repeat(48)}`, ...WEBSOCKET_UPGRADE },
        tls: { ca: lab.caPem },
      } as RequestInit)
    const statuses: number[] = []
    for (let i = 0; i < MAX_REFUSALS_PER_MINUTE + 2; i++) statuses.push((await attempt()).status)
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(MAX_REFUSALS_PER_MINUTE)
    expect(statuses.at(-1)).toBe(429)
    const limited = await attempt()
    expect(((await limited.json()) as { message: string }).message).toBe(ConnectMessages.tooManyFailures)
    const events = (await (await lab.t.as(await lab.t.admin()).get('/api/v1/admin/audit?limit=100')).json()) as {
      kind: string
      route?: string
    }[]
    expect(events.filter((e) => e.route === '/api/v1/agent/connect')).toEqual([])
  })
})
