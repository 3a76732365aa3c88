import { afterAll, describe, expect, test } from 'bun:test'
import { tempDir } from '../support/app'
import { createTokenOnCommandLine, MAIN } from '../support/process'
import { eventually } from '../support/wait'

// Real processes (each start applies migrations and imports the app) on a machine that may be busy:
// the generous waits only bound a failure; a passing test never waits them out.

/** A port free right now: the supervisor needs a fixed one to share among its workers. */
function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

interface Supervisor {
  child: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  base: string
  /** Every JSON line the supervisor and its workers wrote to stdout or stderr so far. */
  lines: Record<string, unknown>[]
  waitFor(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>
}

const running: Supervisor[] = []
afterAll(async () => {
  for (const s of running) {
    s.child.kill('SIGKILL')
    await s.child.exited
  }
})

/** Starts `serve --workers N` on a free port over `dataDir`; resolves once every worker listens. */
async function startWorkers(n: number, dataDir: string, env: Record<string, string> = {}): Promise<Supervisor> {
  const port = freePort()
  const child = Bun.spawn(
    [process.execPath, MAIN, 'serve', '--workers', String(n), '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir],
    {
      env: {
        ...process.env,
        PLATFORM_SANDBOX_CLUSTER: 'false',
        PLATFORM_REQUEST_LOG: 'false',
        PLATFORM_ADMIN_PASSWORD: 'admin-password-1',
        ...env,
      },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    },
  )
  const lines: Record<string, unknown>[] = []
  for (const stream of [child.stdout, child.stderr])
    void (async () => {
      let rest = ''
      const reader = stream.getReader()
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        rest += new TextDecoder().decode(read.value)
        const parts = rest.split('\n')
        rest = parts.pop()!
        for (const part of parts) if (part.startsWith('{')) lines.push(JSON.parse(part))
      }
    })()
  const supervisor: Supervisor = {
    child,
    base: `http://127.0.0.1:${port}`,
    lines,
    waitFor: (match, timeoutMs = 45_000) => eventually(() => lines.find(match), timeoutMs),
  }
  running.push(supervisor)
  await supervisor.waitFor((l) => l.event === 'listening' && l.workers === n)
  return supervisor
}

const isWorkerListening = (l: Record<string, unknown>) => l.event === 'listening' && typeof l.worker === 'number'
const workerPids = (s: Supervisor) =>
  Bun.spawnSync(['pgrep', '-P', String(s.child.pid)])
    .stdout.toString()
    .trim()
    .split('\n')
    .filter(Boolean)
    .map(Number)

describe('serve --workers N', () => {
  test('2 workers on one port → both listen, the port answers, the supervisor serves nothing itself', async () => {
    const s = await startWorkers(2, tempDir())
    expect(s.lines.filter(isWorkerListening).map((l) => l.worker)).toEqual(expect.arrayContaining([1, 2]))
    expect(workerPids(s)).toHaveLength(2)
    const replies = await Promise.all(Array.from({ length: 20 }, () => fetch(`${s.base}/healthz`)))
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(200))
  }, 90_000)

  test('a worker killed with SIGKILL → another is started within a few seconds and the port keeps answering', async () => {
    const s = await startWorkers(2, tempDir())
    const [victim] = workerPids(s)
    process.kill(victim!, 'SIGKILL')
    await s.waitFor((l) => l.event === 'worker exited, starting another')
    await eventually(() => {
      const pids = workerPids(s)
      return pids.length === 2 && !pids.includes(victim!)
    }, 10_000)
    await eventually(() => s.lines.filter(isWorkerListening).length === 3, 10_000)
    expect((await fetch(`${s.base}/healthz`)).status).toBe(200)
  }, 90_000)

  test('SIGTERM → every worker drains and exits, then the supervisor exits 0', async () => {
    const s = await startWorkers(2, tempDir())
    const pids = workerPids(s)
    s.child.kill('SIGTERM')
    expect(await s.child.exited).toBe(0)
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow()
    expect(s.lines.filter((l) => l.event === 'stopped')).toHaveLength(3)
  }, 90_000)

  test('the supervisor is killed with SIGKILL → its workers stop too instead of serving unsupervised', async () => {
    const s = await startWorkers(2, tempDir())
    const pids = workerPids(s)
    s.child.kill('SIGKILL')
    await s.child.exited
    await eventually(() => pids.every((pid) => !isAlive(pid)), 10_000)
  }, 90_000)

  test('the first site admin is created once, by the supervisor, before the workers start', async () => {
    const s = await startWorkers(2, tempDir())
    expect(s.lines.filter((l) => l.event === 'first site admin created')).toHaveLength(1)
  }, 90_000)

  test('the sandbox runs on one worker; that worker killed → another worker starts it within a few seconds', async () => {
    const s = await startWorkers(2, tempDir(), { PLATFORM_SANDBOX_CLUSTER: 'true' })
    const first = await s.waitFor((l) => l.event === 'singleton started' && l.singleton === 'sandbox-cluster')
    expect(s.lines.filter((l) => l.event === 'sandbox cluster ready')).toHaveLength(1)
    const holderPid = Number(String(first.holder).split(':')[1])
    expect(workerPids(s)).toContain(holderPid)
    process.kill(holderPid, 'SIGKILL')
    const second = await s.waitFor((l) => l.event === 'singleton started' && l.singleton === 'sandbox-cluster' && l !== first)
    expect(Number(String(second.holder).split(':')[1])).not.toBe(holderPid)
  }, 90_000)

  test('the sandbox runs on one worker → every worker proxies to it (each request on a new connection)', async () => {
    const dataDir = tempDir()
    const s = await startWorkers(2, dataDir, { PLATFORM_SANDBOX_CLUSTER: 'true' })
    await s.waitFor((l) => l.event === 'sandbox cluster ready')
    const token = createTokenOnCommandLine(dataDir, 'admin')
    const statuses = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const res = await fetch(`${s.base}/api/v1/clusters/admin/sandbox/k8s/version`, {
          headers: { authorization: `token ${token}`, connection: 'close' },
        })
        await res.arrayBuffer()
        return res.status
      }),
    )
    expect(statuses).toEqual(Array(16).fill(200))
  }, 90_000)
})

describe('serve --workers refused', () => {
  const runServe = async (args: string[]) => {
    const child = Bun.spawn([process.execPath, MAIN, 'serve', ...args], {
      env: { ...process.env, PLATFORM_SANDBOX_CLUSTER: 'false', PLATFORM_ADMIN_PASSWORD: 'admin-password-1' },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const code = await child.exited
    return { code, stderr: await new Response(child.stderr).text() }
  }

  test('--workers 2 without a fixed port → exit 2 naming the setting', async () => {
    const { code, stderr } = await runServe(['--workers', '2', '--port', '0', '--data-dir', tempDir()])
    expect(code).toBe(2)
    expect(stderr).toContain('--port')
  })

  test('--workers many → exit 2 saying what is accepted', async () => {
    const { code, stderr } = await runServe(['--workers', 'many', '--data-dir', tempDir()])
    expect(code).toBe(2)
    expect(stderr).toContain('auto')
  })

  test('--workers 2 on a port another server holds → one line saying it is in use, exit 2, no worker started', async () => {
    const other = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('other') })
    try {
      const { code, stderr } = await runServe([
        '--workers',
        '2',
        '--port',
        String(other.port),
        '--host',
        '127.0.0.1',
        '--data-dir',
        tempDir(),
      ])
      expect(code).toBe(2)
      expect(stderr.trim().split('\n')).toEqual([expect.stringContaining('in use')])
      expect(await (await fetch(`http://127.0.0.1:${other.port}/`)).text()).toBe('other')
    } finally {
      other.stop(true)
    }
  })
})

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
