import { X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { connect, type DetailedPeerCertificate } from 'node:tls'
import { parseArgs } from 'node:util'
import { messageOf } from '../errors'
import { type Command, CommandFailed, PROGRAM, parse, parseCommandArgs, print, UsageError } from './command'
import { apiGet, forgetSignIn, platformFetch, saveSignIn } from './platform-client'

const CLI_CLIENT_ID = 'platform-cli'
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

const pemOf = (der: Buffer) =>
  `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE-----\n`

/** The SHA-256 fingerprint of a PEM certificate, as the server prints its CA's at start (AB:CD:…). */
export const fingerprintOf = (pem: string) => new X509Certificate(pem).fingerprint256

/** The root of the certificate chain `url`'s server presents (verification off: it is only looked at, then confirmed by the user). */
function presentedRoot(url: URL): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      {
        host: url.hostname.replace(/^\[|\]$/g, ''),
        port: Number(url.port || 443),
        rejectUnauthorized: false,
        ...(isIP(url.hostname) ? {} : { servername: url.hostname }),
      },
      () => {
        let cert = socket.getPeerCertificate(true) as DetailedPeerCertificate
        for (let depth = 0; depth < 10 && cert.issuerCertificate && cert.issuerCertificate !== cert; depth++) cert = cert.issuerCertificate
        socket.end()
        resolve(pemOf(cert.raw))
      },
    )
    socket.on('error', (error) => reject(new CommandFailed(`cannot reach ${url.origin}: ${messageOf(error)}`)))
  })
}

/**
 * The CA to trust `server` by: `--ca-file`'s; none when the system's trust store verifies it;
 * else the root it presents, once the user confirmed its fingerprint (as ssh asks on a first connection).
 */
async function trustedCa(server: string, caFile: string | undefined): Promise<string | undefined> {
  if (caFile) {
    try {
      return readFileSync(caFile, 'utf8')
    } catch (error) {
      throw new CommandFailed(`cannot read ${caFile}: ${messageOf(error)}`)
    }
  }
  if (!server.startsWith('https://')) return undefined
  const verified = await fetch(`${server}/api/v1/version`).then(
    () => true,
    () => false,
  )
  if (verified) return undefined
  const root = await presentedRoot(new URL(server))
  console.log(`The certificate authority of ${server} is not one this machine trusts.`)
  console.log(`Its SHA-256 fingerprint is ${fingerprintOf(root)}`)
  console.log(`Compare it with the one the server printed when it started (or "${PROGRAM} status" on the server).`)
  const answer = prompt('Trust it and continue? (yes/no)')
  if (!/^y(es)?$/i.test(answer?.trim() ?? '')) throw new CommandFailed('not signed in: the certificate authority was not confirmed')
  return root
}

interface DeviceStart {
  device_code: string
  user_code: string
  verification_uri_complete: string
  interval: number
}

/** Posts a form to the platform's OAuth endpoint `path` and reads its JSON answer. */
async function postForm(server: string, path: string, fields: Record<string, string>, ca: string | undefined) {
  const res = await platformFetch(server, path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    ca,
  })
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> }
}

/** Polls the token endpoint as RFC 8628 §3.5 asks until the user answers; resolves to the access token. */
async function awaitApproval(server: string, start: DeviceStart, ca: string | undefined): Promise<string> {
  let interval = start.interval || 5
  for (;;) {
    await Bun.sleep(interval * 1000)
    const { body } = await postForm(
      server,
      '/login/oauth/access_token',
      { grant_type: DEVICE_GRANT, device_code: start.device_code, client_id: CLI_CLIENT_ID },
      ca,
    )
    if (typeof body.access_token === 'string') return body.access_token
    if (body.error === 'authorization_pending') continue
    if (body.error === 'slow_down') {
      interval += 5
      continue
    }
    if (body.error === 'access_denied') throw new CommandFailed('the sign-in was denied')
    if (body.error === 'expired_token') throw new CommandFailed(`the code expired before it was approved: run ${PROGRAM} login again`)
    throw new CommandFailed(`the platform refused the sign-in: ${String(body.error_description ?? body.error ?? 'no reason given')}`)
  }
}

export const login: Command = {
  summary: 'sign in to a platform from this terminal (prints a code to approve in a browser)',
  usage: `Usage: ${PROGRAM} login <url> [--ca-file FILE]

Signs in to the platform at <url> with the device authorization grant: prints a one-time code and
the page where a signed-in browser approves it (nothing is opened by itself), then keeps the token
in $XDG_CONFIG_HOME/platform-api/config.json (mode 0600). The server's TLS certificate is verified:
by the system's trust store, by --ca-file, or, for a certificate authority of its own (the
default of "serve"), by the fingerprint you confirm, which is kept beside the token.`,
  async run(args) {
    const { values, positionals } = parseCommandArgs(() =>
      parseArgs({ args, options: { 'ca-file': { type: 'string' } }, strict: true, allowPositionals: true }),
    )
    if (positionals.length !== 1) throw new UsageError(`give the platform's URL: ${PROGRAM} login https://platform.example.com`)
    let url: URL
    try {
      url = new URL(positionals[0]!)
    } catch {
      throw new UsageError(`"${positionals[0]}" is not a URL`)
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new UsageError('the URL must be https:// (or http:// behind a TLS proxy you trust)')
    const server = url.origin
    const ca = await trustedCa(server, values['ca-file'])
    const started = await postForm(server, '/login/oauth/device_authorization', { client_id: CLI_CLIENT_ID }, ca)
    if (started.status !== 200)
      throw new CommandFailed(`the platform refused to start a sign-in: ${String(started.body.error_description ?? started.status)}`)
    const start = started.body as unknown as DeviceStart
    console.log(`! First copy your one-time code: ${start.user_code}`)
    console.log(`Open this URL in a browser where you are signed in, and approve the code: ${start.verification_uri_complete}`)
    const token = await awaitApproval(server, start, ca)
    const me = (await (await apiGet({ server, token, login: '', ...(ca ? { ca } : {}) }, '/api/v1/user')).json()) as { login: string }
    const file = saveSignIn({ server, login: me.login, token, ...(ca ? { ca } : {}) })
    return print(`✓ Logged in to ${server} as ${me.login} (kept in ${file})`)
  },
}

export const logout: Command = {
  summary: 'forget the sign-in of this terminal',
  usage: `Usage: ${PROGRAM} logout

Removes the sign-in kept by "login". Its token (platform-cli-<n> in your token list) stays valid
until revoked there.`,
  async run(args) {
    parse(args, {})
    return print(forgetSignIn() ? 'Logged out: this terminal forgot its sign-in.' : 'Not signed in.')
  },
}
