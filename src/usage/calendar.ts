/** UTC calendar arithmetic for usage: months as YYYYMM integers, days as days since 1970-01-01. */

export const HOUR_MS = 3_600_000
export const DAY_MS = 86_400_000
/** The fixed month of the spec (docs/decisions.md §5): 730 hours, whatever the calendar month's length. */
export const MONTH_MINUTES = 43_800

const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const

/** A month as YYYYMM, e.g. 202510. */
export type MonthKey = number

export const monthKey = (year: number, month: number): MonthKey => year * 100 + month
export const yearOf = (key: MonthKey) => Math.floor(key / 100)
export const monthOf = (key: MonthKey) => key % 100
export const monthName = (key: MonthKey) => MONTH_NAMES[monthOf(key) - 1]!

/** Month of each day seen, so the hot loop of counting makes no Date objects. */
const monthOfDay = new Map<number, MonthKey>()

export function monthKeyAt(ms: number): MonthKey {
  const day = Math.floor(ms / DAY_MS)
  let key = monthOfDay.get(day)
  if (key === undefined) {
    const d = new Date(day * DAY_MS)
    key = monthKey(d.getUTCFullYear(), d.getUTCMonth() + 1)
    if (monthOfDay.size > 200_000) monthOfDay.clear()
    monthOfDay.set(day, key)
  }
  return key
}

export const monthStart = (key: MonthKey) => Date.UTC(yearOf(key), monthOf(key) - 1, 1)
export const monthEnd = (key: MonthKey) => Date.UTC(yearOf(key), monthOf(key), 1)
export const dayOf = (ms: number) => Math.floor(ms / DAY_MS)

/** The month `count` months after `key` (negative: before). */
export function addMonths(key: MonthKey, count: number): MonthKey {
  const index = yearOf(key) * 12 + monthOf(key) - 1 + count
  return monthKey(Math.floor(index / 12), (index % 12) + 1)
}

/** Months from `from` to `to`, both included. */
export const monthsBetween = (from: MonthKey, to: MonthKey) => yearOf(to) * 12 + monthOf(to) - (yearOf(from) * 12 + monthOf(from)) + 1

/** `2025-10` → 202510; undefined unless exactly YYYY-MM with a month 01-12. */
export function parseYearMonth(text: string): MonthKey | undefined {
  const match = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(text)
  return match ? monthKey(Number(match[1]), Number(match[2])) : undefined
}

/**
 * A path month (docs/decisions.md §5): 1..12 with or without a leading zero, an English month name or its
 * three-letter abbreviation, any case. Undefined otherwise.
 */
export function parseMonthWord(text: string): number | undefined {
  if (/^\d{1,2}$/.test(text)) {
    const n = Number(text)
    return n >= 1 && n <= 12 ? n : undefined
  }
  const lower = text.toLowerCase()
  const index = MONTH_NAMES.findIndex(
    (name) => name.toLowerCase() === lower || (lower.length === 3 && name.toLowerCase().startsWith(lower)),
  )
  return index >= 0 ? index + 1 : undefined
}

/** The first ms of each UTC day of a month, in order. */
export function daysOfMonth(key: MonthKey): number[] {
  const days: number[] = []
  for (let ms = monthStart(key); ms < monthEnd(key); ms += DAY_MS) days.push(dayOf(ms))
  return days
}

export const isoDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10)
