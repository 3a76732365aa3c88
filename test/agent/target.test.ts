import { expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { inClusterTarget, TargetError } from '../../src/agent/target'
import { tempDir } from '../support/app'
import { MAIN } from '../support/process'

test('in a pod → the API server from KUBERNETES_SERVICE_HOST/_PORT, the service account token and CA from their files', () => {
  const dir = tempDir()
  writeFileSync(join(dir, 'token'), 'service-account-token\n')
  writeFileSync(join(dir, 'ca.crt'), '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')
  expect(inClusterTarget({ KUBERNETES_SERVICE_HOST: '10.43.0.1', KUBERNETES_SERVICE_PORT: '443' }, dir)).toEqual({
    server: 'https://10.43.0.1:443',
    caData: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
    tlsServerName: '',
    insecureSkipTlsVerify: false,
    credential: { token: 'service-account-token' },
  })
  expect(inClusterTarget({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' }, dir).server).toBe(
    'https://[fd00::1]:6443',
  )
})

test('in a pod without a mounted service account → a TargetError naming the file and the likely cause', () => {
  expect(() => inClusterTarget({ KUBERNETES_SERVICE_HOST: '10.43.0.1' }, tempDir())).toThrow(TargetError)
  expect(() => inClusterTarget({ KUBERNETES_SERVICE_HOST: '10.43.0.1' }, tempDir())).toThrow(/automountServiceAccountToken/)
})

test('platform-api agent outside a pod without --kubeconfig → one line saying to use --kubeconfig, exit 2', () => {
  const env: Record<string, string> = { ...process.env, PLATFORM_AGENT_TOKEN: `agt_${'0'.repeat(48)}` } as Record<string, string>
  delete env.KUBERNETES_SERVICE_HOST
  const run = Bun.spawnSync([process.execPath, MAIN, 'agent', '--server', 'https://platform.example.com'], { env })
  expect(run.exitCode).toBe(2)
  expect(run.stderr.toString()).toContain('run the agent with --kubeconfig beside the cluster')
  expect(run.stderr.toString()).not.toContain(env.PLATFORM_AGENT_TOKEN!)
})
