import { loadConfig } from '../config'
import { type Command, PROGRAM, parse, print } from './command'
import { generatedCa } from './server-tls'

export const status: Command = {
  summary: "print where this server's data is, its public URL, and what clients must trust (the CA's path and fingerprint)",
  usage: `Usage: ${PROGRAM} status [--data-dir DIR]

Prints the data dir, the public URL and how the server serves: plain HTTP, HTTPS with the
operator's certificate, or HTTPS with a certificate authority of its own, named by its file and
SHA-256 fingerprint (what "${PROGRAM} login" shows a user to confirm).`,
  async run(args) {
    const values = parse(args, { 'data-dir': { type: 'string' } })
    const config = loadConfig(process.env, { dataDir: values['data-dir'] })
    const ca = generatedCa(config)
    const serving = ca
      ? `HTTPS with its own certificate authority: CA ${ca.caFile}, SHA-256 fingerprint ${ca.fingerprint}`
      : config.tls?.generated
        ? 'HTTPS with its own certificate authority, made at the first start (not yet)'
        : config.tls
          ? `HTTPS with ${config.tls.certFile}`
          : 'plain HTTP (PLATFORM_TLS=off, or a TLS proxy in front)'
    return print([`data dir:   ${config.dataDir}`, `public URL: ${config.publicUrl}`, `serves:     ${serving}`].join('\n'))
  },
}
