import { type PublicKeyCredentialCreationOptionsJSON, startRegistration } from '@simplewebauthn/browser'
import { useEffect, useState } from 'preact/hooks'
import { type ApiProblem, api, problemOf, type Report } from './api'
import { Field, fieldValue } from './form'
import { ErrorNotice, SignedInLayout, useMe } from './layout'
import type { components } from './openapi'

type Status = components['schemas']['TwoFAStatus']
type Enrollment = components['schemas']['Security']
type Key = components['schemas']['WebAuthnSecurityKeys']
type Session = components['schemas']['SessionInfoAPIForm']
type Link = components['schemas']['AccountLink']

const SECURITY = '/api/v1/user/settings/security'
const NO_PROBLEM: ApiProblem = { message: '', fields: {} }
const when = (timestamp: string) => timestamp.replace('T', ' ').replace(/:\d\dZ$/, ' UTC')

/** TOTP: "Enable two-factor authentication", then the QR code and the secret, a code to confirm, the scratch code once. */
function TwoFactor({ status, report, reload }: { status: Status | undefined; report: Report; reload: () => void }) {
  const [enrollment, setEnrollment] = useState<Enrollment>()
  const [scratch, setScratch] = useState<string>()
  const [codeError, setCodeError] = useState<string>()
  const start = async () => {
    const { data, error, response } = await api.GET(`${SECURITY}/twofa/enroll`)
    report(data ? undefined : problemOf(error, response.status))
    setEnrollment(data)
  }
  const confirm = async (event: Event) => {
    event.preventDefault()
    const passcode = fieldValue(event.currentTarget as HTMLFormElement, 'passcode').replace(/\s/g, '')
    const { data, error, response } = await api.POST(`${SECURITY}/twofa/enroll`, { body: { passcode } })
    if (data === undefined) return setCodeError(problemOf(error, response.status).message)
    setEnrollment(undefined)
    setScratch(data)
    reload()
  }
  if (scratch)
    return (
      <section class="notice" aria-labelledby="scratch-heading">
        <h3 id="scratch-heading">Two-factor authentication is on</h3>
        <p>Keep this recovery code somewhere safe: it signs you in once if you lose your authenticator. It is not shown again.</p>
        <p class="secret">
          <code>{scratch}</code>
        </p>
      </section>
    )
  if (status?.twofaEnrolled) return <p>Two-factor authentication is on.</p>
  if (!enrollment)
    return (
      <button type="button" onClick={start}>
        Enable two-factor authentication
      </button>
    )
  return (
    <>
      <p>Scan the code with your authenticator app, or type the secret into it; then enter the code it shows.</p>
      {/* The server's own SVG (no script, no style attribute): an <img> of a data: URL would break the policy. */}
      <div class="qr" role="img" aria-label="QR code of the new secret" dangerouslySetInnerHTML={{ __html: enrollment.qrSvg }} />
      <p>
        Secret: <code>{enrollment.secret}</code>
      </p>
      <form onSubmit={confirm}>
        <Field id="passcode" label="Authentication code" autocomplete="one-time-code" inputMode="numeric" error={codeError} />
        <button type="submit">Confirm</button>
      </form>
    </>
  )
}

/** Security keys: the caller's keys, each with "Delete", and "Add security key" under a name. */
function SecurityKeys({ report }: { report: Report }) {
  const [keys, setKeys] = useState<Key[]>([])
  const load = () => api.GET(`${SECURITY}/webauthn/keys`).then(({ data }) => data && setKeys(data))
  useEffect(() => {
    load()
  }, [])
  const add = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const options = await api.POST(`${SECURITY}/webauthn/request_register`, { body: { name: fieldValue(form, 'key-name') } })
    if (!options.data) return report(problemOf(options.error, options.response.status))
    const optionsJSON = options.data.publicKey as unknown as PublicKeyCredentialCreationOptionsJSON
    const created = await startRegistration({ optionsJSON }).catch((error: unknown) => error as Error)
    if (created instanceof Error) return report({ message: `The security key did not answer: ${created.message}`, fields: {} })
    const body = created as unknown as components['schemas']['PostUserSettingsSecurityWebauthnRegisterBody']
    const { error, response } = await api.POST(`${SECURITY}/webauthn/register`, { body })
    report(error ? problemOf(error, response.status) : undefined)
    form.reset()
    await load()
  }
  const remove = async (key: Key) => {
    const { error, response } = await api.DELETE(`${SECURITY}/webauthn/keys/{id}`, { params: { path: { id: key.id } } })
    report(error ? problemOf(error, response.status) : undefined)
    await load()
  }
  return (
    <>
      <ul class="tokens">
        {keys.map((key) => (
          <li key={key.id}>
            <span>
              <strong>{key.name}</strong> · added {when(key.createdAt)}
            </span>
            <button type="button" class="secondary" onClick={() => remove(key)}>
              Delete<span class="visually-hidden"> {key.name}</span>
            </button>
          </li>
        ))}
      </ul>
      <form onSubmit={add}>
        <Field id="key-name" label="Key name" autocomplete="off" />
        <button type="submit">Add security key</button>
      </form>
    </>
  )
}

/** Sessions: where the caller is signed in, each with "Sign out". */
function Sessions({ report }: { report: Report }) {
  const [sessions, setSessions] = useState<Session[]>([])
  useEffect(() => {
    api.GET(`${SECURITY}/sessions/`).then(({ data }) => data && setSessions(data))
  }, [])
  const signOut = async (session: Session) => {
    const { data, error, response } = await api.DELETE(`${SECURITY}/sessions/{sid}/revoke`, { params: { path: { sid: session.sid } } })
    report(data ? undefined : problemOf(error, response.status))
    if (session.current) location.assign('/login')
    else if (data) setSessions(data)
  }
  return (
    <ul class="tokens sessions">
      {sessions.map((session) => (
        <li key={session.sid}>
          <span>
            {session.current ? <strong>This browser</strong> : session.userAgent || 'Unknown browser'} · from {session.ip || 'unknown'} ·
            last seen {when(session.lastSeenAt)}
          </span>
          <button type="button" class="secondary" onClick={() => signOut(session)}>
            Sign out<span class="visually-hidden"> the session last seen {when(session.lastSeenAt)}</span>
          </button>
        </li>
      ))}
    </ul>
  )
}

/**
 * `/user/settings/security` (docs/decisions.md §11): two-factor authentication, security keys, sessions and
 * linked accounts.
 */
export function SecurityPage() {
  const me = useMe()
  const [status, setStatus] = useState<Status>()
  const [links, setLinks] = useState<Link[]>([])
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  const report: Report = (found) => setProblem(found ?? NO_PROBLEM)
  const reload = () => api.GET(`${SECURITY}/`).then(({ data }) => data && setStatus(data))
  useEffect(() => {
    reload()
    api.GET(`${SECURITY}/account_link`).then(({ data }) => data && setLinks(data))
  }, [])
  return (
    <SignedInLayout title="Security" me={me}>
      <ErrorNotice message={problem.message || undefined} />
      <h2>Two-factor authentication</h2>
      <TwoFactor status={status} report={report} reload={reload} />
      <h2>Security keys</h2>
      <SecurityKeys report={report} />
      <h2>Sessions</h2>
      <Sessions report={report} />
      <h2>Linked accounts</h2>
      {links.length === 0 ? (
        <p>No linked accounts.</p>
      ) : (
        <ul>
          {links.map((link) => (
            <li key={link.id}>
              {link.name} ({link.provider}): {link.externalID}
            </li>
          ))}
        </ul>
      )}
    </SignedInLayout>
  )
}
