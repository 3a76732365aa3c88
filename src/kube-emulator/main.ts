/**
 * Command line: `bun src/kube-emulator/main.ts [--port 6443] [--tls] [--token T] [--no-seed] [--kubeconfig-out path]`.
 * Starts one emulator, writes its kubeconfig, prints where it listens, logs one line per request
 * (never the token) and stops cleanly on Ctrl-C.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { type Emulator, type EmulatorOptions, startEmulator } from './index'

const HELP = `Kubernetes API server emulator (in memory, for development and tests)

Usage: bun src/kube-emulator/main.ts [options]

Options:
  --port N               port to listen on (default 6443; 0 picks a free one)
  --host H               interface to listen on (default 127.0.0.1)
  --tls                  serve HTTPS with a generated CA (kubectl sends tokens only over HTTPS)
  --token T              admin bearer token (default: random)
  --no-seed              start empty instead of with demo namespaces, nodes and workloads
  --kubeconfig-out PATH  where to write the kubeconfig (default .tmp/kube-emulator.kubeconfig)
  --quiet                do not log requests
  --help                 show this help
`

interface Cli {
  options: EmulatorOptions
  kubeconfigOut: string
  quiet: boolean
}

/** Parses argv; returns a message instead when the arguments are wrong or help was asked. */
export function parseArgs(argv: string[]): Cli | string {
  const cli: Cli = { options: { port: 6443 }, kubeconfigOut: '.tmp/kube-emulator.kubeconfig', quiet: false }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => {
      const v = argv[++i]
      if (v === undefined) throw new Error(`${arg} needs a value`)
      return v
    }
    try {
      if (arg === '--help' || arg === '-h') return HELP
      else if (arg === '--port') {
        const port = Number(value())
        if (!Number.isInteger(port) || port < 0 || port > 65535) return `invalid --port: ${argv[i]}\n`
        cli.options.port = port
      } else if (arg === '--host') cli.options.hostname = value()
      else if (arg === '--tls') cli.options.tls = true
      else if (arg === '--token') cli.options.token = value()
      else if (arg === '--no-seed') cli.options.seed = false
      else if (arg === '--kubeconfig-out') cli.kubeconfigOut = value()
      else if (arg === '--quiet') cli.quiet = true
      else return `unknown option: ${arg}\n\n${HELP}`
    } catch (e) {
      return `${(e as Error).message}\n`
    }
  }
  return cli
}

async function main(): Promise<void> {
  const cli = parseArgs(process.argv.slice(2))
  if (typeof cli === 'string') {
    const ok = cli === HELP
    process[ok ? 'stdout' : 'stderr'].write(cli)
    process.exit(ok ? 0 : 2)
  }
  const log = cli.quiet ? undefined : (line: string) => console.error(`${new Date().toISOString()} ${line}`)
  let emulator: Emulator
  try {
    emulator = await startEmulator({ ...cli.options, log })
  } catch (error) {
    const code = (error as { code?: string }).code
    const where = `port ${cli.options.port} on ${cli.options.hostname ?? '127.0.0.1'}`
    process.stderr.write(
      code === 'EADDRINUSE'
        ? `${where} is already in use (another emulator running? try --port 0)\n`
        : `cannot listen on ${where}: ${code ?? String(error)}\n`,
    )
    process.exit(1)
  }
  const path = resolve(cli.kubeconfigOut)
  mkdirSync(dirname(path), { recursive: true })
  // Bun.write ignores `mode`: the kubeconfig carries the admin token, so owner-only it is.
  writeFileSync(path, emulator.kubeconfig(), { mode: 0o600 })
  chmodSync(path, 0o600)
  console.log(`Kubernetes emulator listening on ${emulator.url}`)
  console.log(
    `kubeconfig written to ${path}${emulator.url.startsWith('http:') ? ' (kubectl sends the token only over HTTPS: add --tls)' : ''}`,
  )
  console.log(`try: KUBECONFIG=${path} .tools/bin/kubectl get pods -A`)
  const stop = async () => {
    await emulator.stop()
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}

if (import.meta.main) await main()
