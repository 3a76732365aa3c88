import { useEffect, useState } from 'preact/hooks'
import { type ApiProblem, api, problemOf } from './api'
import { Field, fieldValue } from './form'
import { ErrorNotice, SignedInLayout, useMe } from './layout'
import type { components } from './openapi'

type Profile = components['schemas']['Profile']
type Email = components['schemas']['EmailAddress']

const NO_PROBLEM: ApiProblem = { message: '', fields: {} }
/** The form-wide message when no field names the problem (a field's own message stands beside it). */
const topMessage = (problem: ApiProblem, fields: readonly string[]) =>
  fields.some((field) => problem.fields[field]) ? undefined : problem.message || undefined

/** What came of a form that worked, read out when it appears. */
function Outcome({ text }: { text: string }) {
  return (
    <p role="status" class="outcome">
      {text}
    </p>
  )
}

const PROFILE_FIELDS = ['full_name', 'website', 'location', 'description'] as const

/** The profile: the fields others see, and whether they see the caller's email address. */
function ProfileForm() {
  const [profile, setProfile] = useState<Profile>()
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  const [saved, setSaved] = useState('')
  useEffect(() => {
    api.GET('/api/v1/user/settings/profile').then(({ data }) => data && setProfile(data))
  }, [])
  const save = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    setProblem(NO_PROBLEM)
    setSaved('')
    const keepPrivate = (form.elements.namedItem('keep_email_private') as HTMLInputElement).checked
    const { data, error, response } = await api.POST('/api/v1/user/settings/profile', {
      body: {
        full_name: fieldValue(form, 'full_name'),
        website: fieldValue(form, 'website'),
        location: fieldValue(form, 'location'),
        description: fieldValue(form, 'description'),
        keep_email_private: keepPrivate,
      },
    })
    if (!data) return setProblem(problemOf(error, response.status))
    setProfile(data)
    setSaved('Profile saved.')
  }
  if (!profile) return null
  return (
    <form onSubmit={save} aria-labelledby="profile-heading">
      <ErrorNotice message={topMessage(problem, PROFILE_FIELDS)} />
      <Field id="full_name" label="Full name" autocomplete="name" optional initial={profile.full_name} error={problem.fields.full_name} />
      <Field id="website" label="Website" autocomplete="url" optional initial={profile.website} error={problem.fields.website} />
      <Field id="location" label="Location" autocomplete="off" optional initial={profile.location} error={problem.fields.location} />
      <Field
        id="description"
        label="About you"
        autocomplete="off"
        optional
        initial={profile.description}
        error={problem.fields.description}
      />
      <label class="check">
        <input type="checkbox" name="keep_email_private" defaultChecked={profile.keep_email_private} /> Keep my email address private
      </label>
      <button type="submit">Save profile</button>
      <Outcome text={saved} />
    </form>
  )
}

/** The caller's addresses: add one, make an address primary, delete any but the primary. */
function Emails() {
  const [emails, setEmails] = useState<Email[]>([])
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  const load = () => api.GET('/api/v1/user/settings/account/email').then(({ data }) => data && setEmails(data))
  useEffect(() => {
    load()
  }, [])
  const add = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    setProblem(NO_PROBLEM)
    const { error, response } = await api.POST('/api/v1/user/emails', { body: { emails: [fieldValue(form, 'new-email')] } })
    if (error) return setProblem(problemOf(error, response.status))
    form.reset()
    await load()
  }
  /** Make primary (`primary`) or delete one address; what the API refuses is told at the top of the list. */
  const change = async (email: Email, primary: boolean) => {
    setProblem(NO_PROBLEM)
    const query = { id: email.id }
    const { error, response } = primary
      ? await api.POST('/api/v1/user/settings/account/email', { params: { query: { ...query, _method: 'PRIMARY' } } })
      : await api.POST('/api/v1/user/settings/account/email/delete', { params: { query } })
    if (error) setProblem(problemOf(error, response.status))
    await load()
  }
  return (
    <>
      <ErrorNotice message={problem.fields.emails ? undefined : problem.message || undefined} />
      <ul class="tokens" aria-label="Your email addresses">
        {emails.map((email) => (
          <li key={email.id}>
            <span>
              <strong>{email.email}</strong>
              {email.is_primary ? ' · primary' : ''}
              {email.is_activated ? '' : ' · not activated'}
            </span>
            {!email.is_primary && (
              <span class="actions">
                {email.is_activated && (
                  <button type="button" class="secondary" onClick={() => change(email, true)}>
                    Make primary<span class="visually-hidden"> {email.email}</span>
                  </button>
                )}
                <button type="button" class="secondary" onClick={() => change(email, false)}>
                  Delete<span class="visually-hidden"> {email.email}</span>
                </button>
              </span>
            )}
          </li>
        ))}
      </ul>
      <form onSubmit={add}>
        <Field id="new-email" label="Email address" autocomplete="email" error={problem.fields.emails} />
        <button type="submit">Add email address</button>
      </form>
    </>
  )
}

const PASSWORD_FIELDS = ['old_password', 'password', 'retype'] as const

/** The password change: the current password, then the new one twice; every other session ends (docs/api/identity.md). */
function PasswordForm() {
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  const [changed, setChanged] = useState('')
  const change = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    setProblem(NO_PROBLEM)
    setChanged('')
    const body = {
      old_password: fieldValue(form, 'old_password'),
      password: fieldValue(form, 'password'),
      retype: fieldValue(form, 'retype'),
    }
    const { error, response } = await api.POST('/api/v1/user/settings/account/password', { body })
    if (error) return setProblem(problemOf(error, response.status))
    form.reset()
    setChanged('Password changed. Your other sessions have been signed out.')
  }
  return (
    <form onSubmit={change} aria-labelledby="password-heading">
      <ErrorNotice message={topMessage(problem, PASSWORD_FIELDS)} />
      <Field
        id="old_password"
        label="Current password"
        type="password"
        autocomplete="current-password"
        error={problem.fields.old_password}
      />
      <Field id="password" label="New password" type="password" autocomplete="new-password" error={problem.fields.password} />
      <Field id="retype" label="New password again" type="password" autocomplete="new-password" error={problem.fields.retype} />
      <button type="submit">Change password</button>
      <Outcome text={changed} />
    </form>
  )
}

/** `/user/settings` (docs/decisions.md §11): the caller's profile, email addresses and password. */
export function SettingsPage() {
  const me = useMe()
  return (
    <SignedInLayout title="Settings" me={me}>
      <p>
        Also: <a href="/user/settings/applications">OAuth2 applications</a>, <a href="/user/settings/tokens">access tokens</a>,{' '}
        <a href="/user/settings/security">security</a>.
      </p>
      <h2 id="profile-heading">Profile</h2>
      <ProfileForm />
      <h2>Email addresses</h2>
      <Emails />
      <h2 id="password-heading">Password</h2>
      <PasswordForm />
    </SignedInLayout>
  )
}
