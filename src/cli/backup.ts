import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { recordCommand } from '../audit/service'
import { loadConfig } from '../config'
import { BadBackupInput, backup as backupData, restore as restoreData } from '../system/backup'
import { type Command, PROGRAM, parseCommandArgs, UsageError, withDeps } from './command'

/** The one directory argument of backup and restore. */
function directoryArg(args: string[], usage: string): string {
  const { positionals } = parseCommandArgs(() => parseArgs({ args, options: {}, strict: true, allowPositionals: true }))
  if (positionals.length !== 1) throw new UsageError(`usage: ${usage}`)
  return positionals[0]!
}

/** What the backup module refuses is bad input: one line, exit 2, nothing changed. */
function refusedAsUsage<T>(work: () => T): T {
  try {
    return work()
  } catch (error) {
    if (error instanceof BadBackupInput) throw new UsageError(error.message)
    throw error
  }
}

export const backup: Command = {
  summary: 'copy the database, the data key and the data files into a new directory, while the server runs',
  usage: `Usage: ${PROGRAM} backup DIR

Writes a backup of the configured data (PLATFORM_DATA_DIR, DATABASE_URL) into DIR, which must be new
or empty: a consistent copy of the database taken while the server keeps writing (SQLite's VACUUM
INTO), the data key (secret.key), every other file of the data dir that is not a cache, and
manifest.json with the version, schema version, time, sizes and SHA-256 digests. A remote libSQL
database is not copied: that server's own backups apply.`,
  async run(args) {
    const dir = directoryArg(args, `${PROGRAM} backup DIR`)
    const { manifest, notes } = refusedAsUsage(() => backupData(loadConfig(), dir))
    const bytes = manifest.files.reduce((sum, f) => sum + f.bytes, 0)
    console.log(`backup in ${dir}: ${manifest.files.length} files, ${bytes} bytes, schema version ${manifest.schemaVersion}`)
    for (const note of notes) console.log(`note: ${note}`)
    return 0
  },
}

export const restore: Command = {
  summary: 'restore a backup into a new or empty data dir',
  usage: `Usage: ${PROGRAM} restore DIR

Restores the backup in DIR into the configured data dir (PLATFORM_DATA_DIR, or --data-dir of serve
through the environment), which must be new or empty. Every file's digest is checked first, and a
backup whose schema is newer than this program's is refused; nothing is written unless all checks
pass. Start the server on the data dir afterwards: it accepts the first instance's tokens and opens
its sealed secrets.`,
  async run(args) {
    const dir = directoryArg(args, `${PROGRAM} restore DIR`)
    const config = loadConfig()
    const manifest = refusedAsUsage(() => restoreData(config, dir))
    await withDeps(config, (deps) => recordCommand(deps, { command: 'restore', target: { dir: resolve(dir) } }))
    console.log(
      `restored ${manifest.files.length} files from ${dir} (made ${manifest.createdAt} by platform-api ${manifest.program.version}) into ${config.dataDir}`,
    )
    return 0
  },
}
