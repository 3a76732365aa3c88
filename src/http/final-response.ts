/** What Elysia's handlers see of the answer being built: the headers and status hooks have set. */
interface AnswerSet {
  headers: Record<string, string | number | string[] | undefined>
  status?: number | string
  cookie?: unknown
}

/**
 * Moves the headers hooks have set (request id, nosniff...) onto a Response a handler built itself,
 * so Elysia hands that Response to Bun as it is. Otherwise Elysia copies it into a new Response
 * whose body is the old one's stream: for a relayed member answer that costs more than the relay.
 * The Response's own headers win, as in Elysia's merge. Left to Elysia when a status or cookie is set.
 */
export function finalResponse(set: AnswerSet, response: Response): Response {
  if ((set.status !== undefined && set.status !== 200) || set.cookie) return response
  for (const name in set.headers) {
    const value = set.headers[name]
    if (value === undefined) continue
    if (name === 'set-cookie') for (const cookie of Array.isArray(value) ? value : [String(value)]) response.headers.append(name, cookie)
    else if (!response.headers.has(name)) response.headers.set(name, Array.isArray(value) ? value.join(', ') : String(value))
  }
  for (const name in set.headers) delete set.headers[name]
  return response
}
