import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Audit events (docs/decisions.md §8): who did what at the door. Appended by the platform only
 * (the API reads them) and pruned by age. No foreign keys: an event outlives the user, org or
 * cluster it names, so names are kept as they were beside the ids the read routes filter by.
 * JSON columns hold small objects the event shape names (`target`, `object_ref`, `command`).
 */
export const auditEvents = sqliteTable(
  'audit_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    time: integer('time', { mode: 'timestamp_ms' }).notNull(),
    requestId: text('request_id').notNull(),
    /** `api`, `kubernetes` or `signin`. */
    kind: text('kind').notNull(),
    actorId: integer('actor_id'),
    actorLogin: text('actor_login'),
    /** The site admin behind a sudo request. */
    realLogin: text('real_login'),
    /** The user a sign-in tried to reach (even when it failed): their own audit shows it. */
    subjectId: integer('subject_id'),
    /** `session`, `token`, `basic`, `oauth2` or `none`; a token or OAuth2 application by name and id. */
    credentialKind: text('credential_kind').notNull(),
    credentialName: text('credential_name'),
    credentialId: integer('credential_id'),
    sourceAddress: text('source_address').notNull(),
    orgId: integer('org_id'),
    org: text('org'),
    /** `owner/name`. */
    cluster: text('cluster'),
    status: integer('status').notNull(),
    /** `allowed`, `refused` or `failed`. */
    result: text('result').notNull(),
    /** api: the HTTP method; signin: `password`, `totp`, `webauthn` or `sso`. */
    method: text('method'),
    /** api: the route template, `/api/v1/orgs/{org}/members/{username}`. */
    route: text('route'),
    /** JSON: api, the route's path parameters; signin, `{login}`. */
    target: text('target'),
    verb: text('verb'),
    objectRef: text('object_ref'),
    /** JSON array: the command of an exec. */
    command: text('command'),
    exitCode: integer('exit_code'),
    /** When a stream (exec, attach, port-forward) ended. */
    endTime: integer('end_time', { mode: 'timestamp_ms' }),
  },
  (t) => [
    index('audit_events_time').on(t.time),
    index('audit_events_org_time').on(t.orgId, t.time),
    index('audit_events_actor_time').on(t.actorId, t.time),
    index('audit_events_subject_time').on(t.subjectId, t.time),
  ],
)
