/** kubectl and Helm meet a cluster the platform cannot dial as they meet an imported one: every verb through its agent. */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { tempDir } from '../support/app'
import { helmIn } from '../support/helm'
import { CP_TREE, cpRoundTrip, portForward } from '../support/kubectl-streams'
import { agentLab, startAgent, untilAgent } from './agent-lab'
import { runKubectl, spawnKubectl } from './kubectl-lab'

const lab = await agentLab()
startAgent(lab)
await untilAgent(lab, true)
const kubeconfig = await lab.kubeconfig()
const kubectl = (...args: string[]) => runKubectl(lab, kubeconfig, ...args)
const spawn = spawnKubectl(lab, kubeconfig)

async function podOf(app: string): Promise<string> {
  const { out } = await kubectl('get', 'pods', '-n', 'demo', '-l', `app=${app}`, '-o', 'jsonpath={.items[0].metadata.name}')
  return out
}

describe('kubectl through an agent (platform over TLS, member reachable only through the agent)', () => {
  test('apply then get → the object is in the member', async () => {
    const manifest = join(tempDir(), 'cm.yaml')
    await Bun.write(
      manifest,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: through-agent\n  namespace: demo\ndata:\n  hello: agent\n',
    )
    expect((await kubectl('apply', '-f', manifest)).code).toBe(0)
    expect((await kubectl('get', 'configmap', 'through-agent', '-n', 'demo', '-o', 'jsonpath={.data.hello}')).out).toBe('agent')
  })

  test('logs -f streams lines as they come', async () => {
    const child = spawn(['logs', '-f', '-n', 'demo', await podOf('api')])
    const reader = child.stdout.getReader()
    let text = ''
    while (text.split('\n').length < 3) text += new TextDecoder().decode((await reader.read()).value)
    child.kill()
    expect(text).toMatch(/level=\w+ pod=api-\S+ container=api seq=\d+/)
  })

  test('exec runs a command and returns its output and exit code', async () => {
    const pod = await podOf('api')
    expect(await kubectl('exec', '-n', 'demo', pod, '--', 'echo', 'through', 'the', 'agent')).toEqual({
      out: 'through the agent\n',
      err: '',
      code: 0,
    })
    expect((await kubectl('exec', '-n', 'demo', pod, '--', 'sh', '-c', 'exit 3')).code).toBe(3)
  })

  test('port-forward serves HTTP on the local port', async () => {
    const pod = await podOf('api')
    const forward = await portForward(spawn, `pod/${pod}`, 8080, ['-n', 'demo'])
    expect(await (await fetch(`http://127.0.0.1:${forward.port}/hello`)).text()).toContain(`pod ${pod} (namespace demo)`)
    await forward.stop()
  })

  test('cp a directory and a file in and back out', async () => {
    const copied = await cpRoundTrip((args) => kubectl(...args), `demo/${await podOf('api')}`, tempDir())
    expect(copied).toEqual({ codes: [0, 0, 0, 0], ...CP_TREE })
  })

  test('helm install --wait of a `helm create` chart → deployed', async () => {
    const home = tempDir()
    const run = helmIn({ ...process.env, HOME: home })
    const helm = (...args: string[]) => run('--kubeconfig', kubeconfig, ...args)
    expect((await helm('create', 'shop')).code).toBe(0)
    const installed = await helm('install', 'shop', './shop', '-n', 'demo', '--wait', '--timeout', '60s')
    expect({ code: installed.code, stderr: installed.stderr }).toEqual({ code: 0, stderr: '' })
    expect((await helm('status', 'shop', '-n', 'demo')).stdout).toContain('STATUS: deployed')
  }, 90_000)
})
