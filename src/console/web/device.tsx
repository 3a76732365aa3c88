import { useState } from 'preact/hooks'
import { api, problemOf } from './api'
import { Field, fieldValue } from './form'
import { ErrorNotice, ScopesToAuthorize, useMe, useTitle } from './layout'
import type { operations } from './openapi'

type DeviceRequest = operations['getUserDevice']['responses'][200]['content']['application/json']

/**
 * `/login/device` (docs/decisions.md §11, §12): the code a terminal shows (prefilled from `?user_code=`), then
 * what asks and for which scopes, and "Authorize" or "Cancel"; the terminal polling the token endpoint gets the
 * answer. The API's words for an unknown, expired, answered or malformed code are shown beside the field.
 */
export function DevicePage() {
  useTitle('Device sign-in')
  // Asked only for its 401: a signed-out visitor goes to sign in and comes back here with the code (api.ts).
  useMe()
  const [request, setRequest] = useState<DeviceRequest>()
  const [codeProblem, setCodeProblem] = useState<string>()
  const [problem, setProblem] = useState<string>()
  const [answered, setAnswered] = useState<boolean>()
  const [busy, setBusy] = useState(false)

  const lookUp = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setCodeProblem(undefined)
    const userCode = fieldValue(event.currentTarget as HTMLFormElement, 'user_code')
    const { data, error, response } = await api.GET('/api/v1/user/device', { params: { query: { user_code: userCode } } })
    setBusy(false)
    if (data) setRequest(data)
    else if (response.status !== 401) setCodeProblem(problemOf(error, response.status).message)
  }

  const answer = async (approve: boolean) => {
    if (!request) return
    setBusy(true)
    setProblem(undefined)
    const { data, error, response } = await api.POST('/api/v1/user/device', { body: { user_code: request.user_code, approve } })
    setBusy(false)
    if (data) setAnswered(data.approved ?? approve)
    else setProblem(problemOf(error, response.status).message)
  }

  return (
    <main class="narrow">
      <h1>Device sign-in</h1>
      {answered === undefined && !request && (
        <form onSubmit={lookUp}>
          <p>Enter the code your terminal or device shows.</p>
          <Field
            id="user_code"
            label="Code"
            autocomplete="one-time-code"
            error={codeProblem}
            initial={new URLSearchParams(location.search).get('user_code') ?? ''}
          />
          <button type="submit" disabled={busy}>
            Continue
          </button>
        </form>
      )}
      {answered === undefined && request && (
        <>
          <ErrorNotice message={problem} />
          <p>
            <strong>{request.client}</strong> asks to sign in as you with the code <code>{request.user_code}</code>.
          </p>
          <ScopesToAuthorize scopes={request.scopes} busy={busy} answer={answer} />
        </>
      )}
      {answered !== undefined && (
        <p role="status">
          {answered ? 'Authorized: the terminal is signed in. You can close this page.' : 'Denied: the terminal is not signed in.'}
        </p>
      )}
    </main>
  )
}
