import { expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { t } from 'elysia'
import { rfc3339 } from '../../src/clock'
import { checkDateTimesAsRfc3339 } from '../../src/http/date-time-format'

// What the API's schemas accept as `format: 'date-time'` once the app is made: RFC 3339, the shape it writes.
checkDateTimesAsRfc3339()
const dateTime = t.String({ format: 'date-time' })

test('the times the API writes, and RFC 3339 with fractions and offsets, pass the date-time check', () => {
  for (const value of [rfc3339(Date.now()), rfc3339(0), '0001-01-01T00:00:00Z', '2026-11-28T21:00:00.123456+05:30', '2016-12-31t23:59:60z'])
    expect(Value.Check(dateTime, value)).toBe(true)
})

test('other date shapes and impossible fields fail it', () => {
  for (const value of [
    '2026-11-28',
    'Sat Nov 28 2026 21:00:00 GMT+0000',
    '2026-13-01T00:00:00Z',
    '2026-11-28T24:00:00Z',
    '2026-11-28T21:00:00',
    '2026-11-28 21:00:00Z',
  ])
    expect(Value.Check(dateTime, value)).toBe(false)
})
