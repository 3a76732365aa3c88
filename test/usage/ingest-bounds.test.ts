import { describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { MAIN } from '../support/process'
import { billingWorld, event, requests, send, type UsageWorld } from './support'

const spec = { uid: 'o1', cluster: { uid: 'c1', name: 'one' } }
const good = (at: number) => event(spec, at, 'heartbeat', requests('1', '1Gi'))
const OCTOBER = Date.UTC(2025, 9, 1)

const post = (w: UsageWorld, body: string | Uint8Array, contentType: string) =>
  w.t.as(w.owner).send('POST', '/api/v1/usage/events?org=acme', body, { 'content-type': contentType })

/** How many events of org acme the monthly summary of October 2025 counts as objects. */
async function octoberInstances(w: UsageWorld): Promise<number | undefined> {
  const res = await w.t.as(w.admin).get('/api/v1/dashboard/monthly-summary/dbprod?org=acme&period_start=2025-10&period_end=2025-10')
  return ((await res.json()) as { months: { instances: number }[] }).months[0]?.instances
}

describe('an ingestion answer stays small whatever the body (docs/decisions.md §5a)', () => {
  for (const [kind, contentType, body] of [
    ['NDJSON', 'application/x-ndjson', `${'{}\n'.repeat(1_000_000)}${JSON.stringify(good(OCTOBER))}\n`],
    ['a JSON array', 'application/json', `[${'{},'.repeat(1_000_000)}${JSON.stringify(good(OCTOBER))}]`],
  ] as const)
    test(`a million bad events and a good one as ${kind} → 200 listing the first 100 rejections and counting all, the good one kept`, async () => {
      const w = await billingWorld()
      const res = await post(w, body, contentType)
      expect(res.status).toBe(200)
      const text = await res.text()
      expect(text.length).toBeLessThan(16 * 1024)
      const answer = JSON.parse(text) as { accepted: number; rejected: { index: number }[]; rejectedCount: number }
      expect(answer.accepted).toBe(1)
      expect(answer.rejectedCount).toBe(1_000_000)
      expect(answer.rejected.map((r) => r.index)).toEqual([...Array(100).keys()])
      expect(await octoberInstances(w)).toBe(1)
    }, 60_000)

  test('rejections found while storing (a product change) are listed by index among the others', async () => {
    const w = await billingWorld()
    const events: unknown[] = [good(OCTOBER), { ...good(OCTOBER + 3_600_000), product: 'backupprod' }]
    for (let i = 0; i < 150; i++) events.push({})
    const { body } = await send(w, events)
    expect(body.rejectedCount).toBe(151)
    expect(body.rejected.map((r) => r.index)).toEqual([...Array(100).keys()].map((i) => i + 1))
    expect(body.rejected[0]!.message).toContain('keeps its product')
  })
})

describe('event times are real instants between 2000-01-01 and a day ahead', () => {
  test('impossible dates, year 0000, times before 2000 and more than a day ahead → rejected alone; the rest accepted', async () => {
    const w = await billingWorld()
    const at = (time: string) => ({ ...good(OCTOBER), time })
    const now = Date.now()
    const { status, body } = await send(w, [
      at('2025-02-30T00:00:00Z'),
      at('2025-04-31T12:00:00Z'),
      at('2023-02-29T00:00:00Z'),
      at('2025-10-01T24:00:00Z'),
      at('2025-10-01T23:60:00Z'),
      at('2025-10-01T23:59:60Z'),
      at('2025-10-01T12:00:00+24:00'),
      at('0000-01-01T00:00:00Z'),
      at('1999-12-31T23:59:59Z'),
      at(new Date(now + 25 * 3_600_000).toISOString()),
      at('2024-02-29T00:00:00Z'),
      at('2025-10-01T05:30:00+05:30'),
      at(new Date(now + 23 * 3_600_000).toISOString()),
    ])
    expect(status).toBe(200)
    expect(body.rejected.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(body.rejected.slice(0, 7).every((r) => r.message === 'time is not a real calendar date-time')).toBe(true)
    expect(body.rejected[7]!.message).toBe('time is before 2000-01-01')
    expect(body.rejected[8]!.message).toBe('time is before 2000-01-01')
    expect(body.rejected[9]!.message).toBe('time is more than a day in the future')
    expect(body.accepted).toBe(3)
  })

  test('a time with an offset is the instant it names: 05:30+05:30 is midnight UTC, the same event as 00:00Z', async () => {
    const w = await billingWorld()
    expect((await send(w, [{ ...good(OCTOBER), time: '2025-10-01T05:30:00+05:30' }])).body.accepted).toBe(1)
    expect((await send(w, [{ ...good(OCTOBER), time: '2025-10-01T00:00:00Z' }])).body).toMatchObject({ accepted: 0, duplicates: 1 })
  })
})

describe('bodies that are not UTF-8 text', () => {
  for (const contentType of ['application/json', 'application/x-ndjson'])
    test(`${contentType} with a byte sequence that is not UTF-8 → 422 naming it; nothing stored`, async () => {
      const w = await billingWorld()
      const text = JSON.stringify([good(OCTOBER)])
      const line = contentType === 'application/json' ? text : JSON.stringify(good(OCTOBER))
      const quote = line.indexOf('name-o1')
      const bytes = Buffer.concat([Buffer.from(line.slice(0, quote)), Buffer.from([0xc3, 0x28]), Buffer.from(line.slice(quote))])
      const res = await post(w, new Uint8Array(bytes), contentType)
      expect(res.status).toBe(422)
      expect(((await res.json()) as { message: string }).message).toBe('the request body is not valid UTF-8 text')
      expect(await octoberInstances(w)).toBeUndefined()
    })
})

describe('usage import of a file of bad lines', () => {
  test('200,000 bad lines, one not UTF-8, and a good one → the good one kept, 20 listed, all counted, exit 1', async () => {
    const w = await billingWorld()
    const file = join(w.t.config.dataDir, 'bad.ndjson')
    const bad = Buffer.from('{}\n'.repeat(199_999))
    writeFileSync(file, Buffer.concat([Buffer.from([0xff, 0x7b, 0x7d, 0x0a]), bad, Buffer.from(`${JSON.stringify(good(OCTOBER))}\n`)]))
    const env = { ...process.env, PLATFORM_DATA_DIR: w.t.config.dataDir, PLATFORM_SANDBOX_CLUSTER: 'false' }
    const run = Bun.spawnSync([process.execPath, MAIN, 'usage', 'import', '--org', 'acme', file], { env })
    expect(run.exitCode).toBe(1)
    const out = run.stdout.toString()
    expect(out).toContain('1 accepted, 0 duplicates, 200000 rejected')
    expect(out).toContain('line 0: the line is not valid UTF-8 text')
    expect(out).toContain('… and 199980 more')
    expect(out.split('\n').length).toBeLessThan(30)
    expect(await octoberInstances(w)).toBe(1)
  }, 60_000)
})
