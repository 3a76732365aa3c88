import { type PublicKeyCredentialRequestOptionsJSON, startAuthentication } from '@simplewebauthn/browser'
import { useEffect, useState } from 'preact/hooks'
import { type ApiProblem, api, problemOf } from './api'
import { Field, fieldValue } from './form'
import { ErrorNotice, useTitle } from './layout'
import type { components } from './openapi'
import { pathOnThisSite } from './paths'

/** The start of the 405 a password sign-in answers when the account has a second factor (identity's sign-in service). */
const SECOND_FACTOR_NEEDED = 'This account uses two-factor authentication'

type Step = 'password' | 'second-factor'

const NO_PROBLEM: ApiProblem = { message: '', fields: {} }

/**
 * `/login` (docs/decisions.md §11): the password, then (when the account has one) a TOTP code or a security key;
 * afterwards to `redirect_to` when it is a path on this site, else `/`.
 */
export function LoginPage() {
  useTitle('Sign in')
  const query = new URLSearchParams(location.search)
  const next = pathOnThisSite(query.get('redirect_to'), location.origin)
  const org = query.get('org')
  const [ssoStart, setSsoStart] = useState<string>()
  const [step, setStep] = useState<Step>('password')
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  const [busy, setBusy] = useState(false)

  // `/login?org=<org>`: the org's single sign-on, when it has a source (its start path, under /api/v1).
  useEffect(() => {
    if (org)
      api.GET('/api/v1/user/login-method', { params: { query: { orgname: org } } }).then(({ data }) => {
        if (data?.method === 'sso' && data.oauthCallbackPath)
          setSsoStart(`/api/v1${data.oauthCallbackPath}?redirect_to=${encodeURIComponent(next)}`)
      })
  }, [])

  const attempt = async (call: () => Promise<ApiProblem | undefined>) => {
    setBusy(true)
    setProblem(NO_PROBLEM)
    const found = await call().catch((error: unknown) => ({ message: error instanceof Error ? error.message : String(error), fields: {} }))
    setBusy(false)
    if (found) setProblem(found)
    else location.assign(next)
  }

  const signIn = (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const body = { username: fieldValue(form, 'username'), password: fieldValue(form, 'password') }
    return attempt(async () => {
      const { error, response } = await api.POST('/api/v1/user/signin', { body })
      if (!error) return undefined
      const found = problemOf(error, response.status)
      if (response.status === 405 && found.message.startsWith(SECOND_FACTOR_NEEDED)) {
        setStep('second-factor')
        return NO_PROBLEM
      }
      return found
    })
  }

  const verifyCode = (event: Event) => {
    event.preventDefault()
    const passcode = fieldValue(event.currentTarget as HTMLFormElement, 'passcode').replace(/\s/g, '')
    return attempt(async () => {
      const { error, response } = await api.POST('/api/v1/user/signin/two-factor', { body: { passcode } })
      return error ? problemOf(error, response.status) : undefined
    })
  }

  const useSecurityKey = () =>
    attempt(async () => {
      const options = await api.POST('/api/v1/user/signin/webauthn/options')
      if (options.error) return problemOf(options.error, options.response.status)
      // The options are the server's PublicKeyCredentialRequestOptionsJSON, and the assertion is what the next call reads.
      const optionsJSON = options.data.publicKey as unknown as PublicKeyCredentialRequestOptionsJSON
      const assertion = (await startAuthentication({ optionsJSON })) as unknown as components['schemas']['PostUserSigninWebauthnBody']
      const { error, response } = await api.POST('/api/v1/user/signin/webauthn', { body: assertion })
      return error ? problemOf(error, response.status) : undefined
    })

  return (
    <main class="narrow">
      <h1>Sign in</h1>
      <ErrorNotice message={problem.message && Object.keys(problem.fields).length === 0 ? problem.message : undefined} />
      {step === 'password' ? (
        <form onSubmit={signIn}>
          <Field id="username" label="Username or email" autocomplete="username" error={problem.fields.username} />
          <Field id="password" label="Password" type="password" autocomplete="current-password" error={problem.fields.password} />
          <button type="submit" disabled={busy}>
            Sign in
          </button>
          {ssoStart && (
            <button type="button" class="secondary" onClick={() => location.assign(ssoStart)}>
              Sign in with {org}
            </button>
          )}
        </form>
      ) : (
        <>
          <p>This account has a second factor. Enter a code from your authenticator app, or use your security key.</p>
          <form onSubmit={verifyCode}>
            <Field
              id="passcode"
              label="Authentication code"
              autocomplete="one-time-code"
              inputMode="numeric"
              error={problem.fields.passcode}
            />
            <button type="submit" disabled={busy}>
              Verify code
            </button>
          </form>
          <button type="button" class="secondary" disabled={busy} onClick={useSecurityKey}>
            Use a security key
          </button>
        </>
      )}
    </main>
  )
}
