import { describe, expect, test } from 'bun:test'
import { closeDeps } from '../../src/app'
import { holdAsSingleton, LEASE_MS, RENEW_EVERY_MS, runAsSingleton } from '../../src/singletons/service'
import { twoApps } from './support'

const MINUTE = 60_000

describe('runAsSingleton: a periodic job', () => {
  test('two processes schedule one job → each period runs once, on one of them', async () => {
    const [a, b] = await twoApps()
    const runs: string[] = []
    const jobA = runAsSingleton(a.deps, 'sweep', 10 * MINUTE, async () => void runs.push('a'))
    const jobB = runAsSingleton(b.deps, 'sweep', 10 * MINUTE, async () => void runs.push('b'))
    const first = [await jobA.runIfDue(), await jobB.runIfDue()]
    expect(first).toEqual([true, false])
    expect(runs).toEqual(['a'])
    a.clock.advance(10 * MINUTE)
    b.clock.advance(10 * MINUTE)
    expect([await jobB.runIfDue(), await jobA.runIfDue()]).toEqual([true, false])
    expect(runs).toEqual(['a', 'b'])
  })

  test('the process that ran a period is gone → the next period runs on the other', async () => {
    const [a, b] = await twoApps()
    const runs: string[] = []
    const jobA = runAsSingleton(a.deps, 'sweep', 10 * MINUTE, async () => void runs.push('a'))
    expect(await jobA.runIfDue()).toBe(true)
    await closeDeps(a.deps)
    const jobB = runAsSingleton(b.deps, 'sweep', 10 * MINUTE, async () => void runs.push('b'))
    expect(await jobB.runIfDue()).toBe(false)
    b.clock.advance(10 * MINUTE)
    expect(await jobB.runIfDue()).toBe(true)
    expect(runs).toEqual(['a', 'b'])
  })

  test('a failing run is logged with the job name and the next period runs again', async () => {
    const [a] = await twoApps()
    let calls = 0
    const job = runAsSingleton(a.deps, 'flaky', MINUTE, async () => {
      calls++
      if (calls === 1) throw new Error('disk on fire')
    })
    await job.runIfDue()
    expect(a.logs.some((l) => l.includes('"singleton job failed"') && l.includes('"flaky"') && l.includes('disk on fire'))).toBe(true)
    a.clock.advance(MINUTE)
    expect(await job.runIfDue()).toBe(true)
    expect(calls).toBe(2)
  })
})

describe('holdAsSingleton: a long-running service', () => {
  const counter = () => {
    const running = new Set<string>()
    const service = (who: string) => async () => {
      running.add(who)
      return async () => void running.delete(who)
    }
    return { running, service }
  }

  test('two processes hold one service → it runs on one of them only', async () => {
    const [a, b] = await twoApps()
    const { running, service } = counter()
    const onA = holdAsSingleton(a.deps, 'svc', service('a'))
    const onB = holdAsSingleton(b.deps, 'svc', service('b'))
    expect([await onA.check(), await onB.check(), await onA.check(), await onB.check()]).toEqual([true, false, true, false])
    expect([...running]).toEqual(['a'])
  })

  test('its holder stops (SIGTERM) → the lease is given up and the other process starts it at its next check', async () => {
    const [a, b] = await twoApps()
    const { running, service } = counter()
    expect(await holdAsSingleton(a.deps, 'svc', service('a')).check()).toBe(true)
    const onB = holdAsSingleton(b.deps, 'svc', service('b'))
    expect(await onB.check()).toBe(false)
    await closeDeps(a.deps)
    expect(running.has('a')).toBe(false)
    expect(await onB.check()).toBe(true)
    expect([...running]).toEqual(['b'])
  })

  test('its holder stops renewing (hung, or dead on another machine) → the other takes over once the lease ran out, and the old holder stops its copy', async () => {
    const [a, b] = await twoApps()
    const { running, service } = counter()
    const onA = holdAsSingleton(a.deps, 'svc', service('a'))
    expect(await onA.check()).toBe(true)
    const onB = holdAsSingleton(b.deps, 'svc', service('b'))
    b.clock.advance(LEASE_MS - RENEW_EVERY_MS)
    expect(await onB.check()).toBe(false)
    // Past any renewal A's timer may have made meanwhile.
    b.clock.advance(2 * RENEW_EVERY_MS + 1)
    b.clock.advance(LEASE_MS)
    expect(await onB.check()).toBe(true)
    expect(await onA.check()).toBe(false)
    expect([...running]).toEqual(['b'])
  })

  test('a service that fails to start → logged, the lease given up for another process to try', async () => {
    const [a, b] = await twoApps()
    const failing = holdAsSingleton(a.deps, 'svc', async () => {
      throw new Error('no site admin')
    })
    expect(await failing.check()).toBe(false)
    expect(a.logs.some((l) => l.includes('"singleton start failed"') && l.includes('no site admin'))).toBe(true)
    const { running, service } = counter()
    expect(await holdAsSingleton(b.deps, 'svc', service('b')).check()).toBe(true)
    expect([...running]).toEqual(['b'])
  })
})
