/**
 * Cron schedules as CronJobs write them: five fields (minute hour day-of-month month day-of-week)
 * with `*`, lists, ranges, steps and month/day names, or a macro (`@hourly`, `@daily`, …); day of
 * month and day of week are ORed when both are restricted, as in cron. Times are read in the
 * CronJob's `timeZone` (UTC when unset).
 */

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
}
const NAMES: Record<string, number> = {
  JAN: 1,
  FEB: 2,
  MAR: 3,
  APR: 4,
  MAY: 5,
  JUN: 6,
  JUL: 7,
  AUG: 8,
  SEP: 9,
  OCT: 10,
  NOV: 11,
  DEC: 12,
  SUN: 0,
  MON: 1,
  TUE: 2,
  WED: 3,
  THU: 4,
  FRI: 5,
  SAT: 6,
}
const BOUNDS: [number, number][] = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
]

export interface Schedule {
  fields: Set<number>[]
  domAny: boolean
  dowAny: boolean
}

function parseValue(text: string, field: number): number {
  const n = NAMES[text.toUpperCase()] ?? (/^\d+$/.test(text) ? Number(text) : NaN)
  const [lo, hi] = BOUNDS[field]
  if (!Number.isInteger(n) || n < lo || n > hi) throw new Error(`invalid value ${JSON.stringify(text)}`)
  return n
}

function parseField(text: string, field: number): Set<number> {
  const [lo, hi] = BOUNDS[field]
  const out = new Set<number>()
  for (const part of text.split(',')) {
    const [range, stepText] = part.split('/')
    const step = stepText === undefined ? 1 : Number(stepText)
    if (!Number.isInteger(step) || step < 1) throw new Error(`invalid step in ${JSON.stringify(part)}`)
    let [from, to] = [lo, hi]
    if (range !== '*' && range !== '?') {
      const [a, b] = range.split('-')
      from = parseValue(a, field)
      to = b === undefined ? (stepText === undefined ? from : hi) : parseValue(b, field)
    }
    if (from > to) throw new Error(`invalid range ${JSON.stringify(part)}`)
    for (let v = from; v <= to; v += step) out.add(field === 4 && v === 7 ? 0 : v)
  }
  return out
}

/** Parses a schedule; throws an Error naming what is wrong. */
export function parseSchedule(text: string): Schedule {
  const parts = (MACROS[text.trim()] ?? text).trim().split(/\s+/)
  if (parts.length !== 5) throw new Error(`expected exactly 5 fields, found ${parts.length}: ${text}`)
  return { fields: parts.map(parseField), domAny: parts[2] === '*' || parts[2] === '?', dowAny: parts[4] === '*' || parts[4] === '?' }
}

/** Minute, hour, day of month, month and weekday of `ms` in `timeZone`. */
function fieldsAt(ms: number, timeZone: string): number[] {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    minute: 'numeric',
    hour: 'numeric',
    day: 'numeric',
    month: 'numeric',
    weekday: 'short',
  }).formatToParts(new Date(ms))
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? ''
  return [Number(get('minute')), Number(get('hour')), Number(get('day')), Number(get('month')), NAMES[get('weekday').toUpperCase()]]
}

function matches(s: Schedule, ms: number, timeZone: string): boolean {
  const [minute, hour, dom, month, dow] = fieldsAt(ms, timeZone)
  if (!s.fields[0].has(minute) || !s.fields[1].has(hour) || !s.fields[3].has(month)) return false
  const domOk = s.fields[2].has(dom)
  const dowOk = s.fields[4].has(dow)
  return s.domAny || s.dowAny ? domOk && dowOk : domOk || dowOk
}

/** How far back a missed schedule is still started (the controller starts only the most recent one). */
const LOOKBACK_MINUTES = 7 * 24 * 60

/** The most recent scheduled minute in (`after`, `now`], or undefined. */
export function lastScheduledTime(s: Schedule, after: number, now: number, timeZone = 'UTC'): number | undefined {
  const floor = Math.max(after, now - LOOKBACK_MINUTES * 60_000)
  for (let t = Math.floor(now / 60_000) * 60_000; t > floor; t -= 60_000) if (matches(s, t, timeZone)) return t
  return undefined
}

/** Whether `timeZone` is one Intl knows. */
export function validTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone })
    return true
  } catch {
    return false
  }
}
