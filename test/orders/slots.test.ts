import { describe, expect, test } from 'bun:test'
import { AppError } from '../../src/errors'
import { FairSlots } from '../../src/orders/render/slots'

/** The Helm slots' shares, on their own: who starts, who waits, who is turned away. */

const shares = { total: 4, perCaller: 2, waitingTotal: 6, waitingPerCaller: 3 }

/** Acquires for `caller` and records when it starts. */
function start(slots: FairSlots, caller: string, started: string[]) {
  return slots.acquire(caller).then((release) => {
    started.push(caller)
    return release
  })
}

describe('FairSlots', () => {
  test('a caller at its share waits while another starts at once; a freed slot goes to the longest waiter under its share', async () => {
    const slots = new FairSlots(shares)
    const started: string[] = []
    const a = [start(slots, 'a', started), start(slots, 'a', started)]
    const aWaiting = start(slots, 'a', started)
    const b = [start(slots, 'b', started), start(slots, 'b', started)]
    const cWaiting = start(slots, 'c', started)
    await Promise.all([...a, ...b])
    expect(started).toEqual(['a', 'a', 'b', 'b'])
    // b frees a slot: a is still at its share, so c (who came later) starts.
    ;(await b[0]!)()
    await cWaiting
    expect(started).toEqual(['a', 'a', 'b', 'b', 'c'])
    ;(await a[0]!)()
    await aWaiting
    expect(started).toEqual(['a', 'a', 'b', 'b', 'c', 'a'])
  })

  test('a caller whose part of the line is full is turned away (unavailable, Retry-After); another caller still gets in line', async () => {
    const slots = new FairSlots(shares)
    for (let i = 0; i < 4; i++) await slots.acquire(i < 2 ? 'a' : 'b')
    for (let i = 0; i < 3; i++) void slots.acquire('a')
    const refused = await slots.acquire('a').catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(AppError)
    expect((refused as AppError).kind).toBe('unavailable')
    expect((refused as AppError).headers['retry-after']).toBe('1')
    void slots.acquire('b')
    void slots.acquire('c')
    void slots.acquire('c')
    expect(await slots.acquire('d').catch((error: unknown) => (error as AppError).kind)).toBe('unavailable')
  })
})
