import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { clientFiles } from '../config'
import { messageOf } from '../errors'
import { CommandFailed, PROGRAM } from './command'

/** What `login` keeps (mode 0600): the server, who signed in, their token, and the CA the server was trusted by. */
export interface SignedIn {
  server: string
  login: string
  token: string
  /** PEM of the CA confirmed at login (or given with --ca-file); none when the system's trust store verified the server. */
  ca?: string
}

/** Writes `text` to `file` with mode 0600 (its folder 0700 when made), through a temporary file renamed over it. */
export function writePrivateFile(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, text, { mode: 0o600 })
  chmodSync(temporary, 0o600)
  renameSync(temporary, file)
}

export function saveSignIn(signedIn: SignedIn): string {
  const { configFile } = clientFiles()
  writePrivateFile(configFile, `${JSON.stringify(signedIn, null, 2)}\n`)
  return configFile
}

/** Forgets the sign-in; false when there was none. */
export function forgetSignIn(): boolean {
  const { configFile } = clientFiles()
  try {
    readFileSync(configFile)
  } catch {
    return false
  }
  rmSync(configFile)
  return true
}

export function savedSignIn(): SignedIn {
  const { configFile } = clientFiles()
  let text: string
  try {
    text = readFileSync(configFile, 'utf8')
  } catch {
    throw new CommandFailed(`not signed in: run ${PROGRAM} login <url>`)
  }
  const parsed = JSON.parse(text) as Partial<SignedIn>
  if (typeof parsed.server !== 'string' || typeof parsed.token !== 'string' || typeof parsed.login !== 'string')
    throw new CommandFailed(`${configFile} is not a sign-in of ${PROGRAM}: run ${PROGRAM} login <url> again`)
  return { server: parsed.server, login: parsed.login, token: parsed.token, ...(parsed.ca ? { ca: parsed.ca } : {}) }
}

/** fetch to the platform at `server`, trusting `ca` when given; a connection that fails is a CommandFailed naming why. */
export async function platformFetch(server: string, path: string, init: RequestInit & { ca?: string } = {}): Promise<Response> {
  const { ca, ...rest } = init
  try {
    return await fetch(`${server}${path}`, { ...rest, ...(ca ? { tls: { ca } } : {}) } as RequestInit)
  } catch (error) {
    throw new CommandFailed(`cannot reach ${server}: ${messageOf(error)}`)
  }
}

/** A GET of the API as the signed-in user; an answer that is not 2xx is a CommandFailed with the platform's message. */
export async function apiGet(signedIn: SignedIn, path: string): Promise<Response> {
  const res = await platformFetch(signedIn.server, path, { headers: { authorization: `Bearer ${signedIn.token}` }, ca: signedIn.ca })
  if (res.status === 401) throw new CommandFailed(`the platform no longer accepts your sign-in: run ${PROGRAM} login ${signedIn.server}`)
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as { message?: string }
    throw new CommandFailed(`${res.status}: ${body.message ?? res.statusText}`)
  }
  return res
}
