import createClient from 'openapi-fetch'
import type { paths } from './openapi'
import { signInPath } from './paths'

/** The `_csrf` cookie's value: the page sends it back as `X-Csrf-Token` on every change (docs/decisions.md §1). */
function csrfToken(): string | undefined {
  const entry = document.cookie.split('; ').find((c) => c.startsWith('_csrf='))
  return entry ? decodeURIComponent(entry.slice('_csrf='.length)) : undefined
}

/**
 * The console's one client of the public API, typed from the platform's OpenAPI document (openapi.d.ts). Same
 * origin, so the session cookie goes along; a 401 outside the sign-in page sends the browser to sign in and back.
 */
export const api = createClient<paths>({ baseUrl: location.origin })

api.use({
  onRequest({ request }) {
    const token = request.method === 'GET' ? undefined : csrfToken()
    if (token) request.headers.set('x-csrf-token', token)
    return request
  },
  onResponse({ response }) {
    if (response.status === 401 && location.pathname !== '/login') location.assign(signInPath(location.pathname + location.search))
    return response
  },
})

/** What an error answer of the API says: its message and the message of each field it names. */
export interface ApiProblem {
  message: string
  fields: Record<string, string>
}

/** What a section of a page tells the page's top: a problem in words, or none after a success. */
export type Report = (problem: ApiProblem | undefined) => void

/** The problem of an `error` from the client, read defensively: a proxy in between may answer anything. */
export function problemOf(error: unknown, status: number): ApiProblem {
  const body = (typeof error === 'object' && error !== null ? error : {}) as { message?: unknown; errors?: unknown }
  const fields: Record<string, string> = {}
  if (Array.isArray(body.errors))
    for (const item of body.errors as { field?: unknown; message?: unknown }[])
      if (typeof item.field === 'string' && typeof item.message === 'string') fields[item.field] = sentence(item.message)
  const message = typeof body.message === 'string' && body.message ? body.message : `The server answered ${status}.`
  return { message: sentence(message), fields }
}

/** The API's messages start in lower case; on a page they start a sentence. */
const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)
