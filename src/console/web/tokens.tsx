import { useEffect, useState } from 'preact/hooks'
import { TOKEN_SCOPES } from '../../authz/actor'
import { type ApiProblem, api, problemOf } from './api'
import { CopyButton } from './form'
import { ErrorNotice, SignedInLayout, useMe } from './layout'
import type { components } from './openapi'

type Token = components['schemas']['SettingsAccessToken']

const NO_PROBLEM: ApiProblem = { message: '', fields: {} }
const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10)

/**
 * `/user/settings/tokens` (docs/decisions.md §11): "Token name", the scopes, "Generate token" (the value shown
 * once, with a copy button), and the caller's tokens with a delete button each.
 */
export function TokensPage() {
  const me = useMe()
  const [tokens, setTokens] = useState<Token[]>([])
  const [created, setCreated] = useState<Token>()
  const [problem, setProblem] = useState<ApiProblem>(NO_PROBLEM)

  const load = () =>
    api
      .GET('/api/v1/user/settings/tokens/access-tokens/', { params: { query: { limit: '50' } } })
      .then(({ data }) => data && setTokens(data))
  useEffect(() => {
    load()
  }, [])

  const generate = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const name = (form.elements.namedItem('name') as HTMLInputElement).value
    const scopes = [...form.querySelectorAll<HTMLInputElement>('input[name="scope"]:checked')].map((box) => box.value)
    setProblem(NO_PROBLEM)
    const { data, error, response } = await api.POST('/api/v1/user/settings/tokens/access-tokens/', {
      // No scope chosen: the API's default, all.
      body: scopes.length > 0 ? { name, scopes } : { name },
    })
    if (!data) return setProblem(problemOf(error, response.status))
    setCreated(data)
    form.reset()
    await load()
  }

  const remove = async (token: Token) => {
    setProblem(NO_PROBLEM)
    const { error, response } = await api.DELETE('/api/v1/user/settings/tokens/access-tokens/{id}', { params: { path: { id: token.id } } })
    if (error) setProblem(problemOf(error, response.status))
    if (created?.id === token.id) setCreated(undefined)
    await load()
  }

  return (
    <SignedInLayout title="Access tokens" me={me}>
      <ErrorNotice message={problem.message && !problem.fields.name ? problem.message : undefined} />
      {created && (
        <section class="notice" aria-labelledby="new-token">
          <h2 id="new-token">Token {created.name} generated</h2>
          <p>Copy it now: it is not shown again.</p>
          <p class="secret">
            <code>{created.token}</code>
          </p>
          <CopyButton key={created.id} text={created.token} label="Copy token" />
        </section>
      )}
      <form onSubmit={generate}>
        <div class="field">
          <label for="name">Token name</label>
          <input
            id="name"
            name="name"
            type="text"
            required
            aria-invalid={problem.fields.name ? 'true' : undefined}
            aria-describedby={problem.fields.name ? 'name-error' : undefined}
          />
          {problem.fields.name && (
            <p id="name-error" class="field-error">
              {problem.fields.name}
            </p>
          )}
        </div>
        <fieldset>
          <legend>Scopes (none chosen: all)</legend>
          {TOKEN_SCOPES.filter((scope) => scope !== 'all').map((scope) => (
            <label key={scope} class="check">
              <input type="checkbox" name="scope" value={scope} /> {scope}
            </label>
          ))}
        </fieldset>
        <button type="submit">Generate token</button>
      </form>
      <h2>Your tokens</h2>
      {tokens.length === 0 ? (
        <p>No tokens yet.</p>
      ) : (
        <ul class="tokens">
          {tokens.map((token) => (
            <li key={token.id}>
              <span>
                <strong>{token.name}</strong> · {token.scopes.join(', ')} · …{token.tokenLastEight} · created {day(Number(token.createdAt))}
              </span>
              <button type="button" class="secondary" onClick={() => remove(token)}>
                Delete<span class="visually-hidden"> {token.name}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </SignedInLayout>
  )
}
