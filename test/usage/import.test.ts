import { describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { syntheticEvents } from './dataset'
import { billingWorld, coreMonths, expectedUsage } from './support'

const MAIN = resolve(import.meta.dir, '../../src/main.ts')

describe('bun src/main.ts usage import', () => {
  test('an NDJSON file with one bad line → its events ingested, the line reported by index, exit 1; the summary equals the oracle; again → all duplicates', async () => {
    const w = await billingWorld()
    const events = syntheticEvents()
    const lines = events.map((e) => JSON.stringify(e))
    lines.splice(5, 0, '{not json')
    const file = join(w.t.config.dataDir, 'events.ndjson')
    writeFileSync(file, `${lines.join('\n')}\n`)
    const env = { ...process.env, PLATFORM_DATA_DIR: w.t.config.dataDir, PLATFORM_SANDBOX_CLUSTER: 'false' }
    const first = Bun.spawnSync([process.execPath, MAIN, 'usage', 'import', '--org', 'acme', file], { env })
    expect(first.exitCode).toBe(1)
    expect(first.stdout.toString()).toContain(`${events.length} accepted, 0 duplicates, 1 rejected`)
    expect(first.stdout.toString()).toContain('line 5: the line is not valid JSON')
    const res = await w.t.as(w.admin).get('/api/v1/dashboard/monthly-summary/dbprod?org=acme&period_start=2025-10&period_end=2025-10')
    const oct = expectedUsage(events, 'dbprod').get('2025-10')!
    expect((await res.json()).months[0]).toMatchObject({
      cpuCoreMonth: coreMonths(oct.cpuMinutes),
      memoryGiBMonth: coreMonths(oct.memMinutes),
      instances: oct.instances,
    })
    const again = Bun.spawnSync([process.execPath, MAIN, 'usage', 'import', '--org', 'acme', file], { env })
    expect(again.stdout.toString()).toContain(`0 accepted, ${events.length} duplicates, 1 rejected`)
  })

  test('an unknown org → exit 1 naming it; no file argument → exit 2', async () => {
    const w = await billingWorld()
    const env = { ...process.env, PLATFORM_DATA_DIR: w.t.config.dataDir, PLATFORM_SANDBOX_CLUSTER: 'false' }
    const file = join(w.t.config.dataDir, 'empty.ndjson')
    writeFileSync(file, '')
    const unknown = Bun.spawnSync([process.execPath, MAIN, 'usage', 'import', '--org', 'nope', file], { env })
    expect(unknown.exitCode).toBe(1)
    expect(unknown.stderr.toString()).toContain('organization "nope" does not exist')
    expect(Bun.spawnSync([process.execPath, MAIN, 'usage', 'import', '--org', 'acme'], { env }).exitCode).toBe(2)
  })
})
