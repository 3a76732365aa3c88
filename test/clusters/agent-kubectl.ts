import type { AgentLab } from './agent-lab'

/** Starts kubectl with `kubeconfig`, its output piped. */
export const spawnKubectlWith = (lab: AgentLab, kubeconfig: string) => (args: string[]) =>
  Bun.spawn([lab.t.config.kubectlPath, '--kubeconfig', kubeconfig, ...args], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })

/** Runs kubectl with `kubeconfig` to its end: its output and exit code. */
export async function runKubectlWith(
  lab: AgentLab,
  kubeconfig: string,
  ...args: string[]
): Promise<{ out: string; err: string; code: number }> {
  const child = spawnKubectlWith(lab, kubeconfig)(args)
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { out, err, code }
}
