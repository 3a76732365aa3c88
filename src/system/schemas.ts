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
