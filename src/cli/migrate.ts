import { loadConfig } from '../config'
import { openDatabase } from '../storage/database'
import { upgradeBackupDir } from '../storage/migrations'
import { type Command, PROGRAM, parse } from './command'

export const migrate: Command = {
  summary: 'apply database migrations and exit',
  usage: `Usage: ${PROGRAM} migrate

Applies pending database migrations to DATABASE_URL (or the data dir's database) and exits.`,
  async run(args) {
    parse(args, {})
    const config = loadConfig()
    const db = await openDatabase(config.databaseUrl, {
      authToken: config.databaseAuthToken,
      driver: config.databaseDriver,
      backupDir: upgradeBackupDir(config),
    })
    await db.close()
    console.log(`migrations applied to ${config.databaseUrl.replace(/\?.*$/, '')}`)
    return 0
  },
}
