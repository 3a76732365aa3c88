import { expect, test } from 'bun:test'
import { agentLab, edgeStatus, startAgent, untilAgent } from './agent-lab'
import { runKubectl } from './kubectl-lab'

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
