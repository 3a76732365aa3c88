import { AppError } from '../errors'
import { UnreadableBody } from '../http/body'

const BodyMessages = {
  notEvents: 'the body must be a JSON array of events, or NDJSON (application/x-ndjson) with one event per line',
  notEventsMessage: 'the message must be one event object, a JSON array of events, or NDJSON with one event per line',
  tooLarge: (max: number) => `request body larger than ${max} bytes`,
} as const

/** NDJSON as read: each non-empty line's value, or the reason it is not JSON. */
export class NdjsonLines {
  constructor(readonly values: unknown[]) {}
}

/** A line of NDJSON that is not JSON: rejected alone, like an event with a bad field. */
export class BadLine {
  constructor(readonly message: string) {}
}

/** Splits NDJSON text into values; a bad line becomes a BadLine; no good line at all is `invalid`. */
function parseNdjson(text: string): NdjsonLines {
  const values: unknown[] = []
  let good = 0
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    try {
      values.push(JSON.parse(line))
      good++
    } catch {
      values.push(new BadLine('the line is not valid JSON'))
    }
  }
  if (good === 0) throw new AppError('invalid', BodyMessages.notEvents)
  return new NdjsonLines(values)
}

/** Route parse hook: reads `application/x-ndjson` bodies (JSON ones are read by http/body.ts). */
export const readNdjsonBody =
  (maxBytes: number) =>
  async ({ request, contentType }: { request: Request; contentType: string }) => {
    if (!/^application\/(x-)?ndjson\b/i.test(contentType)) return undefined
    if (Number(request.headers.get('content-length') ?? '0') > maxBytes)
      return new UnreadableBody(new AppError('payloadTooLarge', BodyMessages.tooLarge(maxBytes)))
    const text = await request.text()
    if (text.length > maxBytes) return new UnreadableBody(new AppError('payloadTooLarge', BodyMessages.tooLarge(maxBytes)))
    try {
      return parseNdjson(text)
    } catch (error) {
      if (error instanceof AppError) return new UnreadableBody(error)
      throw error
    }
  }

/** The events of a request body: a JSON array, or NDJSON lines. Throws invalid for anything else. */
export function eventsOfBody(body: unknown): unknown[] {
  if (body instanceof NdjsonLines) return body.values
  if (Array.isArray(body)) return body
  throw new AppError('invalid', BodyMessages.notEvents)
}

/**
 * The events of a message-bus payload: one event object, a JSON array, or NDJSON (a single
 * object is also one line of NDJSON). Throws invalid for anything else.
 */
export function eventsOfMessage(text: string): unknown[] {
  let whole: unknown
  try {
    whole = JSON.parse(text)
  } catch {
    try {
      return parseNdjson(text).values
    } catch {
      throw new AppError('invalid', BodyMessages.notEventsMessage)
    }
  }
  if (Array.isArray(whole)) return whole
  if (typeof whole === 'object' && whole !== null) return [whole]
  throw new AppError('invalid', BodyMessages.notEventsMessage)
}
