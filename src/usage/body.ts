import { AppError } from '../errors'
import { BodyText, MAX_JSON_DEPTH } from '../http/body'

/**
 * The events of a body or message, read one at a time (docs/decisions.md §5a): a JSON array is
 * split into its elements and each parsed alone, NDJSON line by line, so reading a body never
 * holds more than its text and the event at hand (a million one-byte bad lines made a million
 * objects before).
 */

const BodyMessages = {
  notEvents: 'the body must be a JSON array of events, or NDJSON (application/x-ndjson) with one event per line',
  notEventsMessage: 'the message must be one event object, a JSON array of events, or NDJSON with one event per line',
  tooDeep: `JSON nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`,
} as const

/** A line of NDJSON that is not JSON: rejected alone, like an event with a bad field. */
export class BadLine {
  constructor(readonly message: string) {}
}

export const BAD_JSON_LINE = 'the line is not valid JSON'

const isBlank = (c: number) => c === 32 || c === 9 || c === 10 || c === 13

function skipBlanks(text: string, from: number): number {
  let i = from
  while (i < text.length && isBlank(text.charCodeAt(i))) i++
  return i
}

/**
 * Each non-empty line's value, or a BadLine for a line that is not JSON. Throws `invalid` with
 * `noneMessage` at the end when not one line was JSON (nothing is stored before the end).
 */
function* ndjsonValues(text: string, noneMessage: string = BodyMessages.notEvents): Generator<unknown> {
  let good = 0
  for (let start = 0; start < text.length; ) {
    const newline = text.indexOf('\n', start)
    const end = newline === -1 ? text.length : newline
    const line = text.slice(start, end)
    start = end + 1
    if (line.trim() === '') continue
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      yield new BadLine(BAD_JSON_LINE)
      continue
    }
    good++
    yield value
  }
  if (good === 0) throw new AppError('invalid', noneMessage)
}

/**
 * Where the JSON value starting at `from` ends: at the comma or closing bracket that follows it at
 * the top level of the array, or at the end of the text. Strings are skipped; nesting is bounded.
 */
function endOfElement(text: string, from: number): number {
  let depth = 0
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      // A string: to its closing quote, escaped characters skipped.
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92) i++
    } else if (c === 91 || c === 123) {
      if (++depth > MAX_JSON_DEPTH) throw new AppError('invalid', BodyMessages.tooDeep)
    } else if (c === 93 || c === 125) {
      if (depth === 0) return i
      depth--
    } else if (c === 44 && depth === 0) return i
  }
  return text.length
}

/**
 * The elements of a JSON array, each parsed on its own when reached. Throws `invalid` when the text
 * is not one JSON array (found as far as reading has got: nothing is stored before the end).
 */
function* jsonArrayValues(text: string, notArray: string = BodyMessages.notEvents): Generator<unknown> {
  const invalid = () => new AppError('invalid', notArray)
  let i = skipBlanks(text, 0)
  if (text.charCodeAt(i) !== 91) throw invalid()
  i = skipBlanks(text, i + 1)
  if (text.charCodeAt(i) === 93) {
    if (skipBlanks(text, i + 1) !== text.length) throw invalid()
    return
  }
  for (;;) {
    const end = endOfElement(text, i)
    let value: unknown
    try {
      value = JSON.parse(text.slice(i, end))
    } catch {
      throw invalid()
    }
    yield value
    if (text.charCodeAt(end) === 93) {
      if (skipBlanks(text, end + 1) !== text.length) throw invalid()
      return
    }
    if (end === text.length) throw invalid()
    i = end + 1
  }
}

const isNdjson = (contentType: string) => /^application\/(x-)?ndjson\b/i.test(contentType)
const isJson = (contentType: string) => /^application\/([\w.+-]*\+)?json\b/i.test(contentType)

/** The events of a request body: a JSON array, or NDJSON lines. Throws invalid for anything else. */
export function eventsOfBody(body: unknown): Iterable<unknown> {
  if (body instanceof BodyText) {
    if (isNdjson(body.contentType)) return ndjsonValues(body.text)
    if (isJson(body.contentType)) return jsonArrayValues(body.text)
  }
  throw new AppError('invalid', BodyMessages.notEvents)
}

/**
 * The events of a message-bus payload: one event object, a JSON array, or NDJSON (a single
 * object is also one line of NDJSON). Throws invalid for anything else.
 */
export function eventsOfMessage(text: string): Iterable<unknown> {
  if (text.charCodeAt(skipBlanks(text, 0)) === 91) return jsonArrayValues(text, BodyMessages.notEventsMessage)
  let whole: unknown
  try {
    // NDJSON of several lines fails here at the end of its first line: cheap.
    whole = JSON.parse(text)
  } catch {
    return ndjsonValues(text, BodyMessages.notEventsMessage)
  }
  if (typeof whole === 'object' && whole !== null) return [whole]
  throw new AppError('invalid', BodyMessages.notEventsMessage)
}
