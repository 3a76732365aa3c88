import { describe, expect, test } from 'bun:test'
import { lastScheduledTime, parseSchedule } from '../../src/kube-emulator/cron'

const at = (iso: string) => Date.parse(iso)
const last = (schedule: string, after: string, now: string, tz?: string) => {
  const t = lastScheduledTime(parseSchedule(schedule), at(after), at(now), tz)
  return t === undefined ? undefined : new Date(t).toISOString()
}

describe('cron schedules', () => {
  test('steps, ranges, lists and names → the most recent matching minute', () => {
    expect(last('*/15 * * * *', '2026-11-24T03:00:00Z', '2026-11-24T03:40:10Z')).toBe('2026-11-24T03:30:00.000Z')
    expect(last('5,50 9-17 * JAN-DEC MON-FRI', '2026-11-20T00:00:00Z', '2026-11-23T08:00:00Z')).toBe('2026-11-20T17:50:00.000Z')
  })

  test('day of month and day of week both restricted → either matches, as in cron', () => {
    // 2026-11-24 is a Tuesday; the 1st of the month is further back.
    expect(last('0 0 1 * TUE', '2026-11-01T12:00:00Z', '2026-11-24T10:00:00Z')).toBe('2026-11-24T00:00:00.000Z')
  })

  test('macros and time zones: @daily at midnight in Europe/Berlin is 23:00 UTC in winter', () => {
    expect(last('@daily', '2026-11-23T12:00:00Z', '2026-11-24T10:00:00Z', 'Europe/Berlin')).toBe('2026-11-23T23:00:00.000Z')
  })

  test('nothing due in the window → undefined; the window start itself is excluded', () => {
    expect(last('0 3 * * *', '2026-11-24T03:00:00Z', '2026-11-24T04:00:00Z')).toBeUndefined()
  })

  test('malformed schedules → an error naming the problem', () => {
    expect(() => parseSchedule('61 * * * *')).toThrow('invalid value "61"')
    expect(() => parseSchedule('* * * *')).toThrow('expected exactly 5 fields, found 4')
    expect(() => parseSchedule('*/0 * * * *')).toThrow('invalid step')
  })
})
