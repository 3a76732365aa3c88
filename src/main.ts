#!/usr/bin/env bun
import { buildStamp } from './assets'
import { adminCreateToken, adminCreateUser } from './cli/admin'
import { agent } from './cli/agent'
import { backup, restore } from './cli/backup'
import { clusterImport, clusterList, clusterRemove } from './cli/cluster'
import { type Command, CommandFailed, PROGRAM, print, UsageError } from './cli/command'
import { clusters, kubeconfig } from './cli/kubeconfig'
import { login, logout } from './cli/login'
import { migrate } from './cli/migrate'
import { msgbusNatsConfig } from './cli/msgbus'
import { serve } from './cli/serve'
import { status } from './cli/status'
import { systemdUnit } from './cli/systemd'
import { usageImport } from './cli/usage'
import { ConfigError } from './config'
import { AppError } from './errors'
import { buildInfo } from './system/service'

/** The command line: a command, or a group and its subcommand (`admin create-user`). */
const COMMANDS: Record<string, Command | Record<string, Command>> = {
  serve,
  status,
  migrate,
  backup,
  restore,
  'systemd-unit': systemdUnit,
  agent,
  admin: { 'create-user': adminCreateUser, 'create-token': adminCreateToken },
  cluster: { import: clusterImport, list: clusterList, remove: clusterRemove },
  msgbus: { 'nats-config': msgbusNatsConfig },
  usage: { import: usageImport },
  login,
  logout,
  clusters,
  kubeconfig,
}

const isCommand = (entry: Command | Record<string, Command>): entry is Command => typeof entry.run === 'function'

function commandList(): string {
  const lines: [string, string][] = []
  for (const [name, entry] of Object.entries(COMMANDS)) {
    if (isCommand(entry)) lines.push([name, entry.summary])
    else for (const [sub, command] of Object.entries(entry)) lines.push([`${name} ${sub}`, command.summary])
  }
  const width = Math.max(...lines.map(([name]) => name.length)) + 2
  return lines.map(([name, summary]) => `  ${name.padEnd(width)}${summary}`).join('\n')
}

/** `platform-api 0.1.0 (commit …, built …)`: the binary's stamp, or from a checkout its git commit. */
function versionLine(): string {
  const info = buildInfo({ buildCommit: buildStamp?.commit, buildDate: buildStamp?.date })
  return `platform-api ${info.version} (commit ${info.commit}${buildStamp ? `, built ${info.buildDate}` : ', from source'})`
}

const HELP = () => `platform-api: a self-hosted multi-cluster platform API

Usage: ${PROGRAM} <command> [options]
       ${PROGRAM} --version

Commands:
${commandList()}

Run "<command> --help" for a command's options. Configuration comes from the environment
(PORT, HOST, PLATFORM_DATA_DIR, DATABASE_URL, PLATFORM_SECRET_KEY, PLATFORM_PUBLIC_URL,
PLATFORM_ADMIN_USERNAME/PASSWORD/EMAIL, PLATFORM_MODES, PLATFORM_RUN_MODE, ...); see docs/operations.md.`

async function main(argv: string[]): Promise<number> {
  const [name = 'serve', ...rest] = argv
  if (name === '--help' || name === '-h' || name === 'help') return print(HELP())
  if (name === '--version' || name === 'version') return print(versionLine())
  const entry = COMMANDS[name]
  if (!entry) throw new UsageError(`unknown command "${name}"; run --help`)
  let command: Command
  let args = rest
  if (isCommand(entry)) command = entry
  else {
    const [sub = '', ...subArgs] = rest
    const found = entry[sub]
    if (!found) throw new UsageError(`unknown ${name} command "${sub}"; try ${Object.keys(entry).join(', ')}`)
    command = found
    args = subArgs
  }
  if (args.includes('--help') || args.includes('-h')) return print(command.usage)
  return command.run(args)
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof ConfigError) {
      console.error(`error: ${error.message}`)
      process.exit(2)
    }
    if (error instanceof CommandFailed) {
      console.error(`error: ${error.message}`)
      process.exit(1)
    }
    if (error instanceof AppError) {
      console.error(
        `error: ${error.message}${error.fields.length ? ` (${error.fields.map((f) => `${f.field}: ${f.message}`).join('; ')})` : ''}`,
      )
      process.exit(1)
    }
    console.error(error)
    process.exit(1)
  },
)
