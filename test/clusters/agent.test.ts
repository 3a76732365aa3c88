import { expect, test } from 'bun:test'
import { agentTunnels } from '../../db/schema/clusters'
import { eventually } from '../support/wait'
import { agentLab, edgeStatus, startAgent, untilAgent } from './agent-lab'
import { runKubectl } from './kubectl-lab'
import { WEBSOCKET_UPGRADE } from './support'

const lab = await agentLab()

test('a cluster the platform cannot dial → its agent dials out and kubectl reaches it through the platform', async () => {
  // The member is on loopback and private endpoints are refused: importing it directly is refused.
  const direct = await lab.t.as(lab.alice).send('POST', '/api/v1/clustersv2/alice/import', {
    name: 'direct',
    server: lab.member.url,
    caData: Buffer.from(lab.member.caCertPem!).toString('base64'),
    token: lab.member.token,
  })
  expect(direct.status).toBe(422)
  expect((await edgeStatus(lab)).agent?.connected).toBe(false)
  startAgent(lab)
  await untilAgent(lab, true)
  const status = await edgeStatus(lab)
  expect(status.agent?.version).toBeString()
  const kubeconfig = await lab.kubeconfig()
  const { out, code, err } = await runKubectl(lab, kubeconfig, 'get', 'namespaces', '-o', 'name')
  expect(err).toBe('')
  expect(code).toBe(0)
  expect(out).toContain('namespace/kube-system')
})

test('an agent cluster removed → its agent is cut off and its token refused from then on', async () => {
  const removed = await lab.t.as(lab.alice).send('DELETE', '/api/v1/clustersv2/alice/edge')
  expect(removed.status).toBe(204)
  await eventually(async () => (await lab.t.deps.db.read.select().from(agentTunnels).all()).length === 0, 10_000)
  const retry = await fetch(`${lab.base}/api/v1/agent/connect`, {
    headers: { authorization: `Bearer ${lab.token}`, ...WEBSOCKET_UPGRADE },
    tls: { ca: lab.caPem },
  } as RequestInit)
  expect(retry.status).toBe(401)
})
