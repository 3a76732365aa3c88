/** The content type of the JSON answers the app builds itself, written as Elysia and Response.json write it. */
export const JSON_TYPE = 'application/json;charset=utf-8'

/**
 * A JSON answer from text serialised already (a cached body, or JSON.stringify of a value Elysia would not send as
 * JSON), with `status` and further headers (the content type is always this one).
 */
export const jsonAnswer = (text: string, init: { status?: number; headers?: Record<string, string> } = {}) =>
  new Response(text, { status: init.status, headers: { ...init.headers, 'content-type': JSON_TYPE } })
