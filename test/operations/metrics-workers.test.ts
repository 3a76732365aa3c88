import { describe, expect, test } from 'bun:test'
import { tempDir } from '../support/app'
import { freePort } from '../support/ports'
import { startServer } from '../support/process'
import { startPrometheus } from '../support/prometheus'
import { eventually } from '../support/wait'

/**
 * `serve --workers 2` and GET /metrics (docs/operations.md, "Metrics"): whichever worker a scrape
 * reaches, it describes the whole process group, so a Prometheus that keeps one connection counts
 * every request.
 */

const TOKEN = 'metrics-reader-token-0123456789'
const HEALTHZ = 'platform_http_requests_total{method="GET",route="/healthz",status="200"}'
const SENT = 24

/** The value of the sample line `series` in an exposition; 0 when absent. */
const sampleValue = (text: string, series: string) =>
  Number(
    text
      .split('\n')
      .find((line) => line.startsWith(`${series} `))
      ?.split(' ')[1] ?? 0,
  )

describe('metrics of serve --workers 2', () => {
  test('every scrape, on a new connection each, counts the requests both workers answered; a real Prometheus sees them all', async () => {
    const server = await startServer(tempDir(), { PLATFORM_METRICS_TOKEN: TOKEN, PLATFORM_WORKERS: '2' }, { port: freePort() })
    // A connection each: the kernel spreads them over the two workers.
    for (let i = 0; i < SENT; i++) expect((await fetch(`${server.base}/healthz`, { headers: { connection: 'close' } })).status).toBe(200)
    for (let scrape = 0; scrape < 4; scrape++) {
      const res = await fetch(`${server.base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}`, connection: 'close' } })
      expect(res.status).toBe(200)
      expect(sampleValue(await res.text(), HEALTHZ)).toBe(SENT)
    }

    const { query } = startPrometheus(new URL(server.base).host, TOKEN)
    // Several scrapes over Prometheus's one connection, each the group's count.
    const seen = await eventually(async () => {
      const samples = await query(`count_over_time(${HEALTHZ}[1m])`)
      return (samples[0] ?? 0) >= 3 ? samples : undefined
    }, 30_000)
    expect(seen).toHaveLength(1)
    expect(await query(`min_over_time(${HEALTHZ}[1m])`)).toEqual([SENT])
    expect(await query(`max_over_time(${HEALTHZ}[1m])`)).toEqual([SENT])
  }, 90_000)
})
