/**
 * The platform as kubectl meets it: the app serving TLS on a real port (kubectl sends tokens over
 * HTTPS only), a member cluster imported by alice as `dev`, and her kubeconfigs from the registry,
 * a write one and a `?readonly=true` one.
 */
import { afterAll } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { generateServerTls } from '../../src/kube-emulator/tls'
import { tempDir } from '../support/app'
import { freePort } from '../support/ports'
import { type ClusterLab, importedCluster, type MemberServer } from './support'

export interface KubectlLab extends ClusterLab {
  /** The platform's https origin. */
  base: string
  /** The platform's CA, which the kubeconfigs carry. */
  caPem: string
  /** alice's kubeconfig (a write:cluster token). */
  kubeconfig: string
  /** alice's read-only kubeconfig (a read:cluster token). */
  readonlyKubeconfig: string
}

/** Starts the lab against `member` (the app's environment with `env` added); its server stops with the test file. */
export async function kubectlLab(member: MemberServer, env: Record<string, string> = {}): Promise<KubectlLab> {
  const dataDir = tempDir()
  const port = freePort()
  const tls = await generateServerTls(['127.0.0.1'])
  writeFileSync(join(dataDir, 'tls.crt'), tls.certPem)
  writeFileSync(join(dataDir, 'tls.key'), tls.keyPem)
  writeFileSync(join(dataDir, 'ca.crt'), tls.caCertPem)
  const lab = await importedCluster(member, {
    PLATFORM_PUBLIC_URL: `https://127.0.0.1:${port}`,
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_TLS_CERT_FILE: join(dataDir, 'tls.crt'),
    PLATFORM_TLS_KEY_FILE: join(dataDir, 'tls.key'),
    PLATFORM_TLS_CA_FILE: join(dataDir, 'ca.crt'),
    ...env,
  })
  const server = lab.t.app.listen({
    port,
    hostname: '127.0.0.1',
    reusePort: false,
    idleTimeout: 60,
    // The chain, as `serve` presents it: `platform-api login` learns the CA from it.
    tls: { cert: tls.certPem + tls.caCertPem, key: tls.keyPem },
  })
  afterAll(() => server.stop())
  const kubeconfigFile = async (name: string, query: string) => {
    const path = join(dataDir, name)
    writeFileSync(path, await (await lab.t.as(lab.alice).get(`/api/v1/clustersv2/alice/dev/kubeconfig${query}`)).text())
    return path
  }
  return {
    ...lab,
    base: `https://127.0.0.1:${port}`,
    caPem: tls.caCertPem,
    kubeconfig: await kubeconfigFile('alice.kubeconfig', ''),
    readonlyKubeconfig: await kubeconfigFile('alice-readonly.kubeconfig', '?readonly=true'),
  }
}

/** What running kubectl needs of a lab: the app whose configuration names the kubectl binary. */
type WithKubectl = Pick<ClusterLab, 't'>

/** Starts kubectl with `kubeconfig` (and `env` added to the environment), its output piped, and its input when asked. */
export const spawnKubectl =
  (l: WithKubectl, kubeconfig: string, env: Record<string, string> = {}, stdin: 'ignore' | 'pipe' = 'ignore') =>
  (args: string[]) =>
    Bun.spawn([l.t.config.kubectlPath, '--kubeconfig', kubeconfig, ...args], {
      stdin,
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, ...env },
    })

/** Runs kubectl to its end: its output and exit code. */
export async function runKubectl(
  l: WithKubectl,
  kubeconfig: string,
  ...args: string[]
): Promise<{ out: string; err: string; code: number }> {
  const child = spawnKubectl(l, kubeconfig)(args)
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { out, err, code }
}
