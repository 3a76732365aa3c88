/** What wrk measured for one target: throughput and latency percentiles (ms). */
export interface Figures {
  rps: number
  p50: number
  p99: number
  requests: number
}

/**
 * Runs wrk (`-t2 --latency`) against `url` as a child process (asynchronously: servers under test
 * may live in the calling process), with a Lua `script` when given (another method, a body).
 * Throws when wrk fails, measures nothing, or sees non-2xx answers.
 */
export async function wrk(
  url: string,
  headers: Record<string, string>,
  load: { connections: string | number; duration: string | number; script?: string },
): Promise<Figures> {
  const args = [
    'wrk',
    '-t2',
    `-c${load.connections}`,
    `-d${load.duration}s`,
    '--latency',
    ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    ...(load.script ? ['-s', load.script] : []),
    url,
  ]
  const child = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  if (code !== 0) throw new Error(`wrk failed: ${err}`)
  const ms = (label: string) => {
    const m = new RegExp(`${label}\\s+([\\d.]+)(us|ms|s)`).exec(out)
    if (!m) throw new Error(`no ${label} in wrk output:\n${out}`)
    return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1)
  }
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1])
  if (!(rps > 0)) throw new Error(`no throughput in wrk output:\n${out}`)
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out)
  if (errors) throw new Error(`${errors[1]} non-2xx responses from ${url}`)
  const requests = Number(/(\d+) requests in/.exec(out)?.[1])
  return { rps, p50: ms('50%'), p99: ms('99%'), requests }
}
