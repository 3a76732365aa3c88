import { useEffect, useState } from 'preact/hooks'
import { type ApiProblem, api, problemOf } from './api'
import { Field, fieldValue } from './form'
import { ErrorNotice } from './layout'
import type { components } from './openapi'
import { PAGE_SIZE, Pager, totalOf } from './pager'

type User = components['schemas']['User']

const NO_PROBLEM: ApiProblem = { message: '', fields: {} }

/**
 * The users of `/admin` (docs/decisions.md §11): every account, paged (`GET /users/search`, where a site admin sees
 * them all with `prohibit_login`); "Create user" (`POST /admin/users`); "Disable" / "Enable" per user
 * (`PATCH /admin/users/{username}`), but not for the admin's own account, which the API keeps enabled.
 */
export function AdminUsers({ me }: { me: string }) {
  const [users, setUsers] = useState<User[]>()
  const [page, setPage] = useState(1)
  const [total, setTotal] = useState(0)
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)
  const [created, setCreated] = useState<string>()
  const [busy, setBusy] = useState(false)

  const load = async (at: number) => {
    const { data, error, response } = await api.GET('/api/v1/users/search', {
      params: { query: { page: String(at), limit: String(PAGE_SIZE) } },
    })
    if (!data) return setProblem(problemOf(error, response.status))
    setUsers(data.data)
    setTotal(totalOf(response))
    setPage(at)
  }
  useEffect(() => {
    load(1)
  }, [])

  const create = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    setBusy(true)
    setProblem(NO_PROBLEM)
    setCreated(undefined)
    const { data, error, response } = await api.POST('/api/v1/admin/users', {
      body: { username: fieldValue(form, 'username'), email: fieldValue(form, 'email'), password: fieldValue(form, 'password') },
    })
    setBusy(false)
    if (!data) return setProblem(problemOf(error, response.status))
    setCreated(data.login)
    form.reset()
    await load(page)
  }

  const setDisabled = async (user: User, disabled: boolean) => {
    setProblem(NO_PROBLEM)
    const { error, response } = await api.PATCH('/api/v1/admin/users/{username}', {
      params: { path: { username: user.login } },
      body: { prohibit_login: disabled },
    })
    if (error) setProblem(problemOf(error, response.status))
    await load(page)
  }

  const fieldProblem = problem.fields.username || problem.fields.email || problem.fields.password
  return (
    <section aria-labelledby="users-heading">
      <h2 id="users-heading">Users</h2>
      <ErrorNotice message={fieldProblem ? undefined : problem.message || undefined} />
      {users && (
        <table class="users wrap">
          <caption>Every account, by name</caption>
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Email</th>
              <th scope="col">Status</th>
              <th scope="col">Change</th>
            </tr>
          </thead>
          <tbody>
            {users.map((user) => (
              <tr key={user.id}>
                <td data-label="User">{user.login}</td>
                <td data-label="Email">{user.email}</td>
                <td data-label="Status">
                  {user.prohibit_login ? 'Disabled' : 'Enabled'}
                  {user.is_admin && ', site administrator'}
                </td>
                <td data-label="Change">
                  {user.login !== me && (
                    <button type="button" class="secondary" onClick={() => setDisabled(user, !user.prohibit_login)}>
                      {user.prohibit_login ? 'Enable' : 'Disable'}
                      <span class="visually-hidden"> {user.login}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {users && <Pager label="Users" page={page} total={total} go={load} />}
      <h3 id="create-user-heading">Create a user</h3>
      {created && <p role="status">User {created} created.</p>}
      <form aria-labelledby="create-user-heading" onSubmit={create}>
        <Field id="username" label="Username" autocomplete="off" error={problem.fields.username} />
        <Field id="email" label="Email" autocomplete="off" error={problem.fields.email} />
        <Field id="password" label="Password" type="password" autocomplete="new-password" error={problem.fields.password} />
        <button type="submit" disabled={busy}>
          Create user
        </button>
      </form>
    </section>
  )
}
