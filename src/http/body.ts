import { Elysia } from 'elysia'
import { AppError } from './errors'

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
 * JSON bodies are parsed here rather than by Elysia, to bound their size and depth (a 100k-deep
 * array would otherwise blow the stack in validation). Other content types fall through.
 */
export const jsonBody = (maxBytes: number) =>
  new Elysia({ name: 'json-body' }).onParse({ as: 'global' }, async ({ request, contentType }) => {
    if (!/^application\/([\w.+-]*\+)?json\b/i.test(contentType)) return
    const declared = Number(request.headers.get('content-length') ?? '0')
    if (declared > maxBytes) throw new AppError('payloadTooLarge', `request body larger than ${maxBytes} bytes`)
    const text = await request.text()
    if (text.length > maxBytes) throw new AppError('payloadTooLarge', `request body larger than ${maxBytes} bytes`)
    return parseJson(text)
  })
