import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { hostname, networkInterfaces } from 'node:os'
import { dirname } from 'node:path'
import type { Config } from '../config'
import { generateServerTls } from '../kube-emulator/tls'
import { fingerprintOf } from './login'

/** The names and addresses this host answers by, which a generated certificate names. */
function hostNames(config: Config): string[] {
  const addresses = Object.values(networkInterfaces())
    .flat()
    .map((entry) => entry?.address)
    .filter((address): address is string => typeof address === 'string' && !address.includes('%'))
  const bound = config.host === '0.0.0.0' || config.host === '::' ? [] : [config.host]
  return [...new Set(['localhost', hostname(), '127.0.0.1', '::1', ...addresses, ...bound])]
}

/** The CA of a server that serves HTTPS with certificates it made itself: what to print at start and in `status`. */
export interface GeneratedCa {
  caFile: string
  /** SHA-256 of the CA certificate, as `platform-api login` shows it to be confirmed. */
  fingerprint: string
  /** Made by this start (the first). */
  created: boolean
}

/** The generated CA of `config`, if it serves with one; undefined while none was made yet or with TLS of the operator's. */
export function generatedCa(config: Config): GeneratedCa | undefined {
  const tls = config.tls
  if (!tls?.generated || !tls.caFile || !existsSync(tls.caFile)) return undefined
  return { caFile: tls.caFile, fingerprint: fingerprintOf(readFileSync(tls.caFile, 'utf8')), created: false }
}

/**
 * Makes, once, the CA and server certificate `serve` uses when no TLS setting names any
 * (docs/decisions.md §12): for this host's names and addresses, in `<data dir>/tls`. The server
 * presents its certificate with the CA after it, so `platform-api login` can show the CA to be
 * confirmed. The CA's key is not kept: nothing else is ever signed with it.
 */
export async function ensureGeneratedTls(config: Config): Promise<GeneratedCa | undefined> {
  const tls = config.tls
  if (!tls?.generated || !tls.caFile) return undefined
  if (existsSync(tls.keyFile) && existsSync(tls.certFile) && existsSync(tls.caFile)) return generatedCa(config)
  const made = await generateServerTls(hostNames(config), { organization: 'platform-api', ca: 'platform-api CA', server: 'platform-api' })
  mkdirSync(dirname(tls.keyFile), { recursive: true, mode: 0o700 })
  writeFileSync(tls.keyFile, made.keyPem, { mode: 0o600 })
  writeFileSync(tls.certFile, made.certPem + made.caCertPem)
  writeFileSync(tls.caFile, made.caCertPem)
  return { caFile: tls.caFile, fingerprint: fingerprintOf(made.caCertPem), created: true }
}
