import { mkdirSync, symlinkSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { tempDir } from '../support/app'
import { MAIN } from '../support/process'

export const REPO = resolve(import.meta.dir, '../..')

/** The last release before the single binary (docs/operations.md, "Upgrades"): its schema is the one an upgrade starts from. */
const PREVIOUS_RELEASE = 'e02daed'

export interface CliRun {
  code: number
  stdout: string
  stderr: string
}

/** Which program a scenario runs: this checkout's src/main.ts, or the built binary alone (bare environment, its own directory). */
export interface Program {
  command: string[]
  bareEnv?: boolean
  cwd?: string
}

export const SOURCES: Program = { command: [process.execPath, MAIN] }

/** Runs a command of `program` to its end. */
export function cli(args: string[], env: Record<string, string>, program: Program = SOURCES): CliRun {
  const out = Bun.spawnSync([...program.command, ...args], {
    env: { ...(program.bareEnv ? {} : process.env), PLATFORM_SANDBOX_CLUSTER: 'false', ...env },
    cwd: program.cwd,
    stdin: 'ignore',
  })
  return { code: out.exitCode, stdout: out.stdout.toString(), stderr: out.stderr.toString() }
}

/** The previous release's sources (from git history) in a temporary directory, runnable with this checkout's node_modules. */
export function previousRelease(): string {
  const dir = tempDir('platform-release-')
  const archive = Bun.spawnSync(['git', '-C', REPO, 'archive', PREVIOUS_RELEASE, 'src', 'db', 'reports', 'package.json', 'tsconfig.json'])
  if (archive.exitCode !== 0) throw new Error(`git archive ${PREVIOUS_RELEASE}: ${archive.stderr.toString()}`)
  mkdirSync(dir, { recursive: true })
  const untar = Bun.spawnSync(['tar', '-x', '-C', dir], { stdin: archive.stdout })
  if (untar.exitCode !== 0) throw new Error(`tar: ${untar.stderr.toString()}`)
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'))
  return dir
}

/**
 * The message bus's system account in a `msgbus nats-config` output of `dataDir`: the command
 * prints only after opening the sealed operator and account seeds, so it proves the data key.
 */
export function sealedSecretsProbe(dataDir: string, program?: Program): string {
  const out = cli(['msgbus', 'nats-config', '--resolver-dir', `${dataDir}/nats-jwt`], { PLATFORM_DATA_DIR: dataDir }, program)
  if (out.code !== 0) throw new Error(`nats-config: ${out.stderr}`)
  return /^system_account: (\S+)$/m.exec(out.stdout)![1]!
}
