import { afterAll } from 'bun:test'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider from 'oidc-provider'

export interface OidcAccount {
  sub: string
  email?: string
  email_verified?: boolean
  preferred_username?: string
  name?: string
}

export interface OidcProviderHandle {
  issuer: string
  clientId: string
  clientSecret: string
  /** Who signs in at the provider's login step next (the test plays the person at the keyboard). */
  signInAs(account: OidcAccount): void
}

/**
 * A real OpenID provider (`oidc-provider`) on loopback: PKCE (S256) required, client_secret_post,
 * claims in the ID token, consent implied. Its login step signs in whichever account the test chose.
 */
export async function startOidcProvider(redirectUris: string[]): Promise<OidcProviderHandle> {
  const accounts = new Map<string, OidcAccount>()
  let next: OidcAccount | undefined
  const clientId = `platform-${crypto.randomUUID().slice(0, 8)}`
  const clientSecret = crypto.randomUUID()
  const server = createServer()
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const provider = new Provider(issuer, {
    clients: [
      { client_id: clientId, client_secret: clientSecret, redirect_uris: redirectUris, token_endpoint_auth_method: 'client_secret_post' },
    ],
    pkce: { required: () => true },
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username', 'name'] },
    findAccount: (_ctx, id) => {
      const account = accounts.get(id)
      return account ? { accountId: id, claims: () => ({ ...account }) } : undefined
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async loadExistingGrant(ctx) {
      const accountId = ctx.oidc.session?.accountId
      if (!accountId) return undefined
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId })
      grant.addOIDCScope('openid email profile')
      await grant.save()
      return grant
    },
  })
  const callback = provider.callback()
  server.on('request', (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return void callback(req, res)
    void (async () => {
      const account = next
      if (!account) throw new Error('the test chose no account to sign in')
      accounts.set(account.sub, account)
      await provider.interactionFinished(req, res, { login: { accountId: account.sub } }, { mergeWithLastSubmission: false })
    })().catch((error: unknown) => {
      res.statusCode = 500
      res.end(String(error))
    })
  })
  afterAll(() => {
    server.closeAllConnections()
    server.close()
  })
  return {
    issuer,
    clientId,
    clientSecret,
    signInAs: (account) => {
      next = account
    },
  }
}

/** A browser's cookie jar for one origin: what Set-Cookie gave, sent back as Cookie. */
export class CookieJar {
  private readonly values = new Map<string, string>()
  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === ''
      if (expired) this.values.delete(name)
      else this.values.set(name, value)
    }
  }
  get(name: string): string | undefined {
    return this.values.get(name)
  }
  set(name: string, value: string): void {
    this.values.set(name, value)
  }
  header(): string {
    return [...this.values].map(([name, value]) => `${name}=${value}`).join('; ')
  }
}

/** Follows the provider's redirects (login, resume) with its own cookies until they lead back to `redirectPrefix`. */
export async function throughProvider(authorizationUrl: string, redirectPrefix: string): Promise<string> {
  const jar = new CookieJar()
  let url = authorizationUrl
  for (let hop = 0; hop < 10; hop++) {
    if (url.startsWith(redirectPrefix)) return url
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } })
    jar.store(res)
    const location = res.headers.get('location')
    if (!location) throw new Error(`the provider stopped at ${url}: ${res.status} ${await res.text()}`)
    url = new URL(location, url).href
  }
  throw new Error('too many redirects at the provider')
}
