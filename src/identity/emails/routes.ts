import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { ErrorBody } from '../../http/schemas'
import { AddEmailParams, CreateEmailOption, DeleteEmailOption, Email, EmailIdQuery, EmailRecord, EmailSettingsQuery } from './schemas'
import * as emails from './service'
import type { EmailRow } from './store'

const asEmail = (row: EmailRow) => ({ email: row.email, verified: row.isActivated, primary: row.isPrimary })
const asRecord = (row: EmailRow) => ({
  id: row.id,
  uid: row.uid,
  email: row.email,
  is_activated: row.isActivated,
  is_primary: row.isPrimary,
})

/** The caller's email addresses: Gitea's API and the settings-page variants. */
export const emailRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity.emails', prefix: '/api/v1' })
    .use(guard(deps))
    .get('/user/emails', async ({ me }) => (await emails.listEmails(deps.db, me.user)).map(asEmail), {
      signedIn: 'signed-in',
      scope: 'user',
      response: { 200: t.Array(Email), 401: ErrorBody, 403: ErrorBody },
      detail: { summary: 'List my email addresses', tags: ['user'] },
    })
    .post(
      '/user/emails',
      async ({ me, body, status }) => status(201, (await emails.addEmails(deps.db, me.user, body.emails)).map(asEmail)),
      {
        signedIn: 'signed-in',
        scope: 'user',
        body: CreateEmailOption,
        response: { 201: t.Array(Email), 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Add email addresses (all or none); answers the updated list', tags: ['user'] },
      },
    )
    .delete(
      '/user/emails',
      async ({ me, body, status }) => {
        await emails.deleteEmails(deps.db, me.user, body.emails)
        return status(204, undefined)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        body: DeleteEmailOption,
        response: { 204: t.Void(), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Delete email addresses (all or none; never the primary one)', tags: ['user'] },
      },
    )
    .get('/user/settings/account/email', async ({ me }) => (await emails.listEmails(deps.db, me.user)).map(asRecord), {
      signedIn: 'signed-in',
      scope: 'user',
      response: { 200: t.Array(EmailRecord), 401: ErrorBody, 403: ErrorBody },
      detail: { summary: 'List my email address records', tags: ['settings'] },
    })
    .post(
      '/user/settings/account/email',
      async ({ me, body, query }) => {
        await emails.applyEmailForm(deps.db, me.user, { method: query._method, id: query.id, email: body?.email })
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        body: t.Optional(AddEmailParams),
        query: EmailSettingsQuery,
        response: { 200: t.Void(), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Add an email address, or with _method=PRIMARY&id= make one of mine primary', tags: ['settings'] },
      },
    )
    .post(
      '/user/settings/account/email/delete',
      async ({ me, query }) => {
        await emails.deleteEmailById(deps.db, me.user, query.id)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        query: EmailIdQuery,
        response: { 200: t.Void(), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Delete one of my email addresses (not the primary one)', tags: ['settings'] },
      },
    )
