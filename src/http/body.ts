import { Elysia } from 'elysia'
import { AppError } from './errors'

export const Messages = {
  textPlain: 'text/plain bodies are not accepted; send application/json',
  jsonOnly: 'this route reads application/json bodies only',
} as const

/** Deeper than any Kubernetes object or API body; shallow enough that nothing recurses into a crash. */
export const MAX_JSON_DEPTH = 128

/** Throws `invalid` when the JSON text nests deeper than `limit`; a linear scan, strings skipped. */
export function checkJsonDepth(text: string, limit = MAX_JSON_DEPTH): void {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > limit) throw new AppError('invalid', `JSON nesting deeper than ${limit} levels is not accepted`)
    } else if (c === 93 || c === 125) depth--
  }
}

/** Parses a JSON body under the depth cap; empty text is no body, bad JSON is `invalid`. */
export function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined
  checkJsonDepth(text)
  try {
    return JSON.parse(text)
  } catch {
    throw new AppError('invalid', 'The request body is not valid JSON')
  }
}

/**
 * A body that could not be read. Parsing runs before authentication in Elysia's lifecycle, so the
 * failure is kept here and thrown by the guard once the caller is known: a bad credential is 401
 * even when the body is bad too (decisions §1).
 */
export class UnreadableBody {
  constructor(readonly error: AppError) {}
}

/** Throws the parse failure kept in `body`, if any. */
export function rejectUnreadableBody(body: unknown): void {
  if (body instanceof UnreadableBody) throw body.error
}

const isJson = (contentType: string) => /^application\/([\w.+-]*\+)?json\b/i.test(contentType)

/**
 * Route parse hook for public routes that read JSON only (sign-in): a form or multipart body is
 * 415, so a cross-site HTML form cannot post to them (login CSRF). JSON itself is parsed above.
 */
export const jsonOnly = ({ contentType }: { contentType: string }) =>
  isJson(contentType) ? undefined : new UnreadableBody(new AppError('unsupportedMediaType', Messages.jsonOnly))

/**
 * JSON bodies are parsed here rather than by Elysia, to bound their size and depth (a 100k-deep
 * array would otherwise blow the stack in validation). No route reads text/plain: it is refused
 * (415) rather than handed to a JSON schema as a string, which is also what a cross-site form can
 * send. Other content types (forms, multipart) fall through to Elysia.
 */
export const jsonBody = (maxBytes: number) =>
  new Elysia({ name: 'json-body' }).onParse({ as: 'global' }, async ({ request, contentType }) => {
    if (/^text\/plain\b/i.test(contentType)) return new UnreadableBody(new AppError('unsupportedMediaType', Messages.textPlain))
    if (!isJson(contentType)) return
    const declared = Number(request.headers.get('content-length') ?? '0')
    if (declared > maxBytes) throw new AppError('payloadTooLarge', `request body larger than ${maxBytes} bytes`)
    const text = await request.text()
    if (text.length > maxBytes) throw new AppError('payloadTooLarge', `request body larger than ${maxBytes} bytes`)
    try {
      return parseJson(text)
    } catch (e) {
      if (e instanceof AppError) return new UnreadableBody(e)
      throw e
    }
  })
