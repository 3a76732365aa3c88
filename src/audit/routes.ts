import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { guard } from '../http/guard'
import { answerPage } from '../http/pagination'
import { ErrorBody } from '../http/schemas'
import { AuditEvent, AuditQuery } from './schemas'
import * as audit from './service'

const TAGS = ['audit']
const Events = t.Array(AuditEvent)
const errors = { 401: ErrorBody, 403: ErrorBody, 422: ErrorBody }

/** The audit trail's read routes (docs/decisions.md §8); events are written by the recorder, never through the API. */
export const auditRoutes = (deps: Deps) =>
  new Elysia({ name: 'audit.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .get(
      '/admin/audit',
      ({ me, query, request, set }) =>
        answerPage(deps.config.publicUrl, { query, request, set }, me.user, (page) =>
          audit.listAuditEvents(deps, { all: true }, query, page),
        ),
      {
        signedIn: 'site-admin',
        scope: 'admin',
        query: AuditQuery,
        response: { 200: Events, ...errors },
        detail: { summary: 'Every audit event, newest first (site admins)', tags: TAGS },
      },
    )
    .get(
      '/orgs/:org/audit',
      ({ me, scope, query, request, set }) =>
        answerPage(deps.config.publicUrl, { query, request, set }, me.user, (page) =>
          audit.listAuditEvents(deps, { orgId: scope.org.id }, query, page),
        ),
      {
        inOrg: 'view:audit',
        scope: 'organization',
        params: t.Object({ org: t.String({ description: 'Organization name' }) }),
        query: AuditQuery,
        response: { 200: Events, ...errors, 404: ErrorBody },
        detail: { summary: "The organization's audit events, its clusters' included, newest first (owners)", tags: TAGS },
      },
    )
    .get(
      '/user/audit',
      ({ me, query, request, set }) =>
        answerPage(deps.config.publicUrl, { query, request, set }, me.user, (page) =>
          audit.listAuditEvents(deps, { userId: me.user.id }, query, page),
        ),
      {
        signedIn: 'signed-in',
        scope: 'user',
        query: AuditQuery,
        response: { 200: Events, ...errors },
        detail: { summary: "The caller's own audit events (as actor, or a sign-in aimed at their account), newest first", tags: TAGS },
      },
    )
