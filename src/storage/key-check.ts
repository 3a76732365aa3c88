import { ConfigError } from '../config'
import type { Database } from './database'
import { readFact, writeFact } from './deployment-facts'
import type { SecretBox } from './secret-box'

const FACT = 'secret-key-check'
const PLAINTEXT = 'platform-api secret key'

/**
 * Makes sure this process seals with the key every other process sharing the database uses: the
 * first process seals a known value into the database, every later one must open it. Two keys
 * would leave each machine unable to read the other's cluster, cloud and SSO secrets; refusing to
 * start says so at once. Throws ConfigError.
 */
export async function assertSharedSecretKey(db: Database, secrets: SecretBox): Promise<void> {
  let stored = await readFact(db.read, FACT)
  if (stored === undefined) {
    const sealed = await secrets.seal(PLAINTEXT)
    stored = await db.write(async (tx) => {
      await writeFact(tx, FACT, sealed, { onlyFirst: true })
      return (await readFact(tx, FACT))!
    })
  }
  const opened = await secrets.open(stored).catch(() => undefined)
  if (opened !== PLAINTEXT)
    throw new ConfigError(
      'the secret key (PLATFORM_SECRET_KEY, else <data dir>/secret.key) is not the one this database was first used with: every process and machine sharing DATABASE_URL needs the same PLATFORM_SECRET_KEY',
    )
}
