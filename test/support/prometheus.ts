import { afterAll } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from './app'
import { freePort } from './ports'

/**
 * A real Prometheus (Debian's) scraping `target` (host:port) every second with the bearer `token`,
 * stopped after the file; `query` asks its query API and answers every series' value ([] before the
 * first scrape or while it starts).
 */
export function startPrometheus(target: string, token: string): { query(q: string): Promise<number[]> } {
  const dir = tempDir('platform-prometheus-')
  mkdirSync(join(dir, 'data'))
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: platform
    metrics_path: /metrics
    authorization: { type: Bearer, credentials: ${token} }
    static_configs: [{ targets: ['${target}'] }]
`,
  )
  const port = freePort()
  const prometheus = Bun.spawn(
    [
      'prometheus',
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdout: 'ignore', stderr: 'ignore' },
  )
  afterAll(async () => {
    prometheus.kill()
    await prometheus.exited
  })
  return {
    async query(q) {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`).catch(() => undefined)
      if (!res?.ok) return []
      const body = (await res.json()) as { data: { result: { value: [number, string] }[] } }
      return body.data.result.map((r) => Number(r.value[1]))
    },
  }
}
