import { FormatRegistry } from '@sinclair/typebox'

/**
 * An RFC 3339 date-time (section 5.6), the only shape the API writes (clock.ts rfc3339) and the one
 * its schemas name. Elysia's own `date-time` check also takes other date shapes and builds a Date
 * for every value: 6.5 µs of each token-authenticated `GET /api/v1/user` (docs/benchmarks.md).
 */
const RFC3339_DATE_TIME =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/

/** Makes `format: 'date-time'` mean RFC 3339 in every schema check, replacing the check Elysia registered. */
export function checkDateTimesAsRfc3339(): void {
  FormatRegistry.Delete('date-time')
  FormatRegistry.Set('date-time', (value) => RFC3339_DATE_TIME.test(value))
}
