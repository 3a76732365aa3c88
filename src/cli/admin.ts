import { recordCommand } from '../audit/service'
import { TOKEN_SCOPES } from '../authz/actor'
import { loadConfig } from '../config'
import { AppError } from '../errors'
import { createUser } from '../identity/service'
import { findUserByName } from '../identity/store'
import { mintToken } from '../identity/tokens/service'
import { type Command, PROGRAM, parse, UsageError, withDeps } from './command'

export const adminCreateUser: Command = {
  summary: 'create a user',
  usage: `Usage: ${PROGRAM} admin create-user --username NAME --email EMAIL [--password PW] [--admin] [--must-change-password]

Creates a user. Without --password a random one is generated and printed once.`,
  async run(args) {
    const values = parse(args, {
      username: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      admin: { type: 'boolean' },
      'must-change-password': { type: 'boolean' },
    })
    if (!values.username || !values.email) throw new UsageError('--username and --email are required')
    const generated = values.password ? undefined : Buffer.from(crypto.getRandomValues(new Uint8Array(15))).toString('base64url')
    const user = await withDeps(loadConfig(), async (deps) => {
      const created = await createUser(deps.db, {
        username: values.username!,
        email: values.email!,
        password: values.password ?? generated!,
        isAdmin: values.admin ?? false,
        mustChangePassword: values['must-change-password'] ?? false,
      })
      await recordCommand(deps, { command: 'admin create-user', target: { username: created.name } })
      return created
    })
    console.log(`created user ${user.name} (id ${user.id})${user.isAdmin ? ' as site admin' : ''}`)
    if (generated) console.log(`generated password (shown once): ${generated}`)
    return 0
  },
}

export const adminCreateToken: Command = {
  summary: 'create an access token for a user (printed once)',
  usage: `Usage: ${PROGRAM} admin create-token --username NAME [--name TOKEN_NAME] [--scopes all,read:user,...]

Creates an access token for the user and prints it once; it cannot be shown again.
Scopes: ${TOKEN_SCOPES.join(', ')} (default all).`,
  async run(args) {
    const values = parse(args, { username: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' } })
    if (!values.username) throw new UsageError('--username is required')
    const scopes = (values.scopes ?? 'all')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
    const unknown = scopes.filter((s) => !(TOKEN_SCOPES as readonly string[]).includes(s))
    if (unknown.length > 0) throw new UsageError(`unknown scope(s) ${unknown.join(', ')}; known: ${TOKEN_SCOPES.join(', ')}`)
    const plaintext = await withDeps(loadConfig(), async (deps) => {
      const user = await findUserByName(deps.db.read, values.username!)
      if (!user) throw new AppError('notFound', `user "${values.username}" does not exist`)
      const name = values.name ?? `cli-${new Date().toISOString().replace(/[:.]/g, '-')}`
      const minted = await mintToken(deps.db, user.id, { name, scopes })
      await recordCommand(deps, { command: 'admin create-token', target: { username: user.name, name } })
      return minted.plaintext
    })
    console.log(plaintext)
    return 0
  },
}
