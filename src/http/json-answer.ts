/** The content type of the JSON answers the app builds itself, written as Elysia and Response.json write it. */
export const JSON_TYPE = 'application/json;charset=utf-8'

/** A JSON answer from text serialised already (a cached body, or JSON.stringify of a value Elysia would not send as JSON). */
export const jsonAnswer = (text: string) => new Response(text, { headers: { 'content-type': JSON_TYPE } })
