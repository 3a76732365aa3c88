import type { Config } from './config'
import type { Logger } from './logger'
import type { SecretBox } from './storage/secret-box'
import type { Database } from './storage/database'

/** What every area receives from createApp: configuration and the shared outside-world handles. */
export interface Deps {
  config: Config
  db: Database
  log: Logger
  secrets: SecretBox
}
