import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api } from './api'

/** The signed-in user as the header shows them. */
export interface Me {
  login: string
  isAdmin: boolean
}

/** Sets the document's title: the page's own name, then the product's. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · platform-api`
  }, [title])
}

/** The signed-in caller, undefined while asked; a 401 has already sent the browser to sign in (api.ts). */
export function useMe(): Me | undefined {
  const [me, setMe] = useState<Me>()
  useEffect(() => {
    api.GET('/api/v1/user').then(({ data }) => data && setMe({ login: data.login, isAdmin: data.is_admin }))
  }, [])
  return me
}

async function signOut(): Promise<void> {
  await api.GET('/api/v1/user/signout')
  location.assign('/login')
}

/** A signed-in page: the site's header with its navigation and the caller, then the page's own content. */
export function SignedInLayout({ title, me, children }: { title: string; me: Me | undefined; children: ComponentChildren }) {
  useTitle(title)
  return (
    <>
      <header class="site-header">
        <a class="brand" href="/">
          platform-api
        </a>
        <nav aria-label="Main">
          <a href="/">Clusters</a>
          <a href="/orgs">Organizations</a>
          <a href="/user/settings/tokens">Tokens</a>
          <a href="/user/settings/security">Security</a>
          <a href="/user/settings">Settings</a>
          <a href="/usage">Usage</a>
          {me?.isAdmin && <a href="/admin">Admin</a>}
        </nav>
        {me && (
          <div class="account">
            <span>{me.login}</span>
            <button type="button" class="link-button" onClick={signOut}>
              Sign out
            </button>
          </div>
        )}
      </header>
      <main>
        <h1>{title}</h1>
        {children}
      </main>
    </>
  )
}

/** A message at the top of a form or page, read out when it appears. */
export function ErrorNotice({ message }: { message: string | undefined }) {
  return (
    <div role="alert" class={message ? 'error-notice' : 'error-notice empty'}>
      {message}
    </div>
  )
}

/** What an application or a terminal asks for, and the two answers (the consent and device pages). */
export function ScopesToAuthorize({ scopes, busy, answer }: { scopes: string[]; busy: boolean; answer: (approve: boolean) => void }) {
  return (
    <>
      <p id="scopes-heading">It asks for:</p>
      <ul aria-labelledby="scopes-heading">
        {scopes.map((scope) => (
          <li key={scope}>
            <code>{scope}</code>
          </li>
        ))}
      </ul>
      <div class="actions">
        <button type="button" disabled={busy} onClick={() => answer(true)}>
          Authorize
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={() => answer(false)}>
          Cancel
        </button>
      </div>
    </>
  )
}

/** Any path the console does not know. */
export function NotFoundPage() {
  useTitle('Page not found')
  return (
    <main>
      <h1>Page not found</h1>
      <p>
        There is nothing at this address. <a href="/">Go to your clusters</a>.
      </p>
    </main>
  )
}
