import { parseArgs } from 'node:util'
import { closeDeps, openDeps } from '../app'
import type { Config } from '../config'
import type { Deps } from '../deps'
import { messageOf } from '../errors'
import { databaseFileRefusal, localDatabaseFile } from '../storage/database'
import { upgradeBackupDir } from '../storage/migrations'

/** One command of the command line: its line in `help`, its `--help` text and its work (resolves to the exit code). */
export interface Command {
  summary: string
  usage: string
  run(args: string[]): Promise<number>
}

/** How the usage texts name the program: the built binary or the source entry point. */
export const PROGRAM = Bun.isStandaloneExecutable ? 'platform-api' : 'bun src/main.ts'

/** Exit codes: 0 ok, 1 the command failed, 2 bad usage or configuration. */
export class UsageError extends Error {}
/** A command that could not do its work for a reason the operator can act on (exit 1, message only). */
export class CommandFailed extends Error {}

export function print(text: string): number {
  console.log(text)
  return 0
}

/** Parses a command's flags (no positionals); what parseArgs refuses is a usage error. */
export function parse<T extends Record<string, { type: 'string' | 'boolean' }>>(args: string[], options: T) {
  return parseCommandArgs(() => parseArgs({ args, options, strict: true, allowPositionals: false }).values)
}

/** Runs a parseArgs call; what it refuses is a usage error (exit 2). */
export function parseCommandArgs<T>(parseThem: () => T): T {
  try {
    return parseThem()
  } catch (e) {
    throw new UsageError(messageOf(e))
  }
}

/** Opens the app's dependencies for one piece of work and closes them after, also when it fails. */
export async function withDeps<T>(config: Config, work: (deps: Deps) => Promise<T>): Promise<T> {
  return refusingUnusableDatabase(config, async () => {
    const deps = await openDeps(config)
    try {
      return await work(deps)
    } finally {
      await closeDeps(deps)
    }
  })
}

/**
 * Runs `work` on the configured database; a local file found damaged or not this user's (also
 * past opening, at the first query that reads a bad page) ends in databaseFileRefusal's one line
 * and exit 2 instead of a stack trace.
 */
export async function refusingUnusableDatabase<T>(config: Config, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    const file = localDatabaseFile(config.databaseUrl)
    throw (file === undefined ? undefined : databaseFileRefusal(file, error, upgradeBackupDir(config))) ?? error
  }
}

export function portFlag(text: string, name: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 65535)
    throw new UsageError(`${name} must be a port number 1-65535, got "${text}"`)
  return Number(text)
}
