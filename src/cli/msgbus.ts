import { resolve } from 'node:path'
import { loadConfig } from '../config'
import { natsConfig } from '../msgbus/accounts'
import { type Command, PROGRAM, parse, portFlag, UsageError, withDeps } from './command'

export const msgbusNatsConfig: Command = {
  summary: 'print the nats-server configuration of the message bus',
  usage: `Usage: ${PROGRAM} msgbus nats-config --resolver-dir DIR [--port 4222] [--host 0.0.0.0] [--websocket-port N]

Prints a complete nats-server configuration: the platform's operator, system account and account
JWTs (made on first need, seeds sealed in the database), a full resolver keeping pushed account
updates in DIR, and with --websocket-port a websocket listener that reads the msgbus_jwt sign-in
cookie. Run nats-server -c with it, then start the platform with MSGBUS_URLS=nats://HOST:PORT.`,
  async run(args) {
    const values = parse(args, {
      'resolver-dir': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'websocket-port': { type: 'string' },
    })
    if (!values['resolver-dir']) throw new UsageError('--resolver-dir is required (where nats-server keeps pushed account JWTs)')
    const port = portFlag(values.port ?? '4222', '--port')
    const websocketPort = values['websocket-port'] === undefined ? undefined : portFlag(values['websocket-port'], '--websocket-port')
    const text = await withDeps(loadConfig(), (deps) =>
      natsConfig(deps, {
        resolverDir: resolve(values['resolver-dir']!),
        port,
        host: values.host ?? '0.0.0.0',
        websocketPort,
      }),
    )
    process.stdout.write(text)
    return 0
  },
}
