import type { Config } from '../config'
import type { Deps } from '../deps'
import { messageOf } from '../errors'
import { importAvatarFiles } from '../identity/avatars/store'
import { ensureFirstAdmin } from '../identity/service'
import { CommandFailed, UsageError } from './command'

/**
 * Applies migrations (openDeps), moves avatar files of an earlier version into the database, and
 * creates the first site admin when there is no user yet, printing a generated password once.
 */
export async function prepareDatabase(deps: Deps): Promise<void> {
  const avatars = await importAvatarFiles(deps.db, deps.config.dataDir)
  if (avatars > 0) deps.log.info('avatar files moved into the database', { avatars })
  const admin = await ensureFirstAdmin(deps.db, deps.config.admin)
  if (!admin.created) return
  deps.log.info('first site admin created', { username: deps.config.admin.username })
  // The one place a password is printed: to the operator's terminal, once, not to the log.
  if (admin.generatedPassword)
    process.stderr.write(`\n  site admin "${deps.config.admin.username}" password (shown once): ${admin.generatedPassword}\n\n`)
}

/** The listen error an operator can act on: a port in use (a configuration to change: exit 2), an address that cannot be bound. */
export function listenFailed(config: Config, error: unknown): CommandFailed | UsageError {
  const code = (error as { code?: string }).code
  if (code === 'EADDRINUSE') return new UsageError(`port ${config.port} on ${config.host} is already in use (another server running?)`)
  return new CommandFailed(`cannot listen on ${config.host}:${config.port}: ${code ?? messageOf(error)}`)
}
