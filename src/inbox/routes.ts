import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { guard } from '../http/guard'
import { ErrorBody } from '../http/schemas'
import { OrgParams } from '../orgs/schemas'
import { CreateInboxSubscriptionOption, InboxSubscription, SubscriptionFilters } from './schemas'
import * as inbox from './service'

const TAGS = ['inbox']
const EmptyBody = t.String({ description: 'Empty body' })
/** The caller's subscription to an org: asked, made or ended; each answers 200 with an empty body. */
const orgSubscription = {
  inOrg: 'org-subscriber',
  scope: 'organization',
  params: OrgParams,
  response: { 200: EmptyBody, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
} as const
const answerEmpty = async (done: Promise<void>) => {
  await done
  return ''
}

/** Inbox subscriptions, stored by the platform. */
export const inboxRoutes = (deps: Deps) =>
  new Elysia({ name: 'inbox.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .get('/user/inbox/subscriptions', ({ me, query }) => inbox.listSubscriptions(deps, me, query), {
      signedIn: 'signed-in',
      scope: 'user',
      query: SubscriptionFilters,
      response: { 200: t.Array(InboxSubscription), 401: ErrorBody, 403: ErrorBody },
      detail: { summary: "The caller's subscriptions; every filter is an exact match", tags: TAGS },
    })
    .post('/user/inbox/subscriptions', async ({ me, body, status }) => status(201, await inbox.createSubscription(deps, me, body)), {
      signedIn: 'signed-in',
      scope: 'user',
      body: CreateInboxSubscriptionOption,
      response: { 201: InboxSubscription, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
      detail: { summary: 'Subscribe to a cluster, namespace or resource', tags: TAGS },
    })
    .get('/orgs/:org/subscription', ({ me, scope }) => answerEmpty(inbox.assertOrgSubscription(deps, me, scope)), {
      ...orgSubscription,
      detail: { summary: 'Is the caller subscribed to the organization? 200 yes, 404 no', tags: TAGS },
    })
    .post('/orgs/:org/subscription', ({ me, scope }) => answerEmpty(inbox.subscribeToOrg(deps, me, scope)), {
      ...orgSubscription,
      detail: { summary: 'Subscribe to the organization (idempotent)', tags: TAGS },
    })
    .delete('/orgs/:org/subscription', ({ me, scope }) => answerEmpty(inbox.unsubscribeFromOrg(deps, me, scope)), {
      ...orgSubscription,
      detail: { summary: 'Unsubscribe from the organization (idempotent)', tags: TAGS },
    })
