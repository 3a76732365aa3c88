/** The real Helm of the checkout (.tools/bin/helm), run as the tests run it. */
import { join } from 'node:path'

const HELM = join(import.meta.dir, '../../.tools/bin/helm')

/** Runs helm in the kubectl scratch directory (its HOME), with caches and config kept there too. */
export const helmIn =
  (env: Record<string, string | undefined>) =>
  async (...args: string[]) => {
    const dir = env.HOME!
    const p = Bun.spawn([HELM, ...args], {
      cwd: dir,
      env: {
        ...env,
        HELM_CACHE_HOME: join(dir, 'helm-cache'),
        HELM_CONFIG_HOME: join(dir, 'helm-config'),
        HELM_DATA_HOME: join(dir, 'helm-data'),
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
    return { code, stdout, stderr }
  }
