import { t } from 'elysia'

export const ServerVersion = t.Object(
  {
    version: t.String({ description: 'Release version of this build' }),
    commit: t.String({ description: 'Source commit this build was made from, or "unknown"' }),
    buildDate: t.String({ description: 'When this build was made (RFC 3339), or the start time of an unbuilt checkout' }),
  },
  { description: 'The running build' },
)
export type ServerVersion = typeof ServerVersion.static

export const Health = t.Object({ status: t.Literal('ok', { description: 'Always "ok" when answered' }) })
export const Readiness = t.Object({
  status: t.Union([t.Literal('ok'), t.Literal('unavailable')], { description: 'Whether the database answers' }),
})

/** The manifest.json of a backup directory (docs/operations.md, "Backup and restore"). */
export const BackupManifest = t.Object(
  {
    format: t.Literal(1, { description: 'Layout version of the backup directory' }),
    program: t.Object(
      { version: t.String({ description: 'platform-api release' }), commit: t.String({ description: 'Source commit' }) },
      { description: 'The program that made the backup' },
    ),
    createdAt: t.String({ description: 'When the backup began (RFC 3339)' }),
    schemaVersion: t.Union([t.Integer({ minimum: 0 }), t.Literal('remote')], {
      description: 'Migrations applied to the copied database, or "remote" when the database is a libSQL server\'s and not in the backup',
    }),
    keyIncluded: t.Boolean({ description: 'Whether secret.key is in the backup (false: the key came from PLATFORM_SECRET_KEY)' }),
    files: t.Array(
      t.Object({
        path: t.String({ description: 'Path inside the backup directory' }),
        bytes: t.Integer({ minimum: 0, description: 'Size in bytes' }),
        sha256: t.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the content, hex' }),
      }),
      { description: 'Every file of the backup but the manifest' },
    ),
  },
  { description: 'BackupManifest' },
)
export type BackupManifest = typeof BackupManifest.static
