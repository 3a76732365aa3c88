import { useEffect, useState } from 'preact/hooks'
import { api, problemOf } from './api'
import { ErrorNotice, ScopesToAuthorize, useTitle } from './layout'
import type { operations } from './openapi'

type Authorize = operations['getLoginOauthAuthorize']
type AuthorizeQuery = Authorize['parameters']['query']
type Consent = Authorize['responses'][200]['content']['application/json']

/**
 * `/login/oauth/authorize` in a browser (docs/decisions.md §11): what the application asks, named with its
 * redirect host, and "Authorize" or "Cancel"; either answer sends the browser on to the application.
 */
export function ConsentPage() {
  useTitle('Authorize application')
  const query = Object.fromEntries(new URLSearchParams(location.search)) as AuthorizeQuery
  const [consent, setConsent] = useState<Consent>()
  const [problem, setProblem] = useState<string>()
  const [busy, setBusy] = useState(false)

  useEffect(() => {
    api
      .GET('/login/oauth/authorize', { params: { query } })
      .then(({ data, error, response }) => (data ? setConsent(data) : setProblem(problemOf(error, response.status).message)))
  }, [])

  const answer = async (granted: boolean) => {
    setBusy(true)
    const { data, error, response } = await api.POST('/login/oauth/grant', {
      body: { ...query, granted },
      headers: { accept: 'application/json' },
    })
    if (data) location.assign(data.location)
    else {
      setBusy(false)
      setProblem(problemOf(error, response.status).message)
    }
  }

  return (
    <main class="narrow">
      <h1>{consent ? `Authorize ${consent.application}` : 'Authorize application'}</h1>
      <ErrorNotice message={problem} />
      {consent && (
        <>
          <p>
            <strong>{consent.application}</strong> wants to act on your account. Afterwards it sends you to{' '}
            <strong>{new URL(consent.redirect_uri).host}</strong>.
          </p>
          <ScopesToAuthorize scopes={consent.scopes} busy={busy} answer={answer} />
        </>
      )}
    </main>
  )
}
