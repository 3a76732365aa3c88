import { recordCommand } from '../audit/service'
import { loadConfig } from '../config'
import { type Command, PROGRAM, parse, withDeps } from './command'

export const migrate: Command = {
  summary: 'apply database migrations and exit',
  usage: `Usage: ${PROGRAM} migrate

Applies pending database migrations to DATABASE_URL (or the data dir's database) and exits.`,
  async run(args) {
    parse(args, {})
    const config = loadConfig()
    // Opening the app's dependencies applies the migrations (copying a database with data first).
    await withDeps(config, (deps) => recordCommand(deps, { command: 'migrate', target: {} }))
    console.log(`migrations applied to ${config.databaseUrl.replace(/\?.*$/, '')}`)
    return 0
  },
}
