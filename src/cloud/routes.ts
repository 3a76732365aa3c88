import { Elysia, t } from 'elysia'
import { readSecretOfCluster } from '../clusters/service'
import type { Deps } from '../deps'
import { guard } from '../http/guard'
import { ErrorBody } from '../http/schemas'
import { listBuckets } from './buckets'
import {
  BucketListOptions,
  BucketListResponse,
  CloudCredentialApiForm,
  CloudCredentialSpec,
  CloudParams,
  CredentialListQuery,
  CredentialParams,
} from './schemas'
import * as credentials from './service'

const TAGS = ['cloud']
const errors = { 401: ErrorBody, 403: ErrorBody }

/** Cloud credentials of the caller and bucket listing with them (docs/decisions.md §4b, §4c). */
export const cloudRoutes = (deps: Deps) =>
  new Elysia({ name: 'cloud.routes', prefix: '/api/v1' })
    .use(guard(deps))
    .get('/user/credentials', ({ me, query }) => credentials.listCredentials(deps, me, query), {
      signedIn: 'signed-in',
      scope: 'user',
      query: CredentialListQuery,
      response: { 200: t.Array(CloudCredentialApiForm), ...errors, 422: ErrorBody },
      detail: { summary: 'The caller\'s cloud credentials, secret fields answered as ""', tags: TAGS },
    })
    .post(
      '/user/credentials',
      async ({ me, body }) => {
        await credentials.createCredential(deps, me, body)
        return new Response(null, { status: 201 })
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        body: CloudCredentialSpec,
        response: { 201: t.Void(), ...errors, 409: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Store a cloud credential; its secret fields are sealed and never returned', tags: TAGS },
      },
    )
    .put(
      '/user/credentials/',
      async ({ me, body, status }) => {
        await credentials.replaceCredential(deps, me, body)
        return status(204, undefined)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        body: CloudCredentialSpec,
        response: { 204: t.Void(), ...errors, 404: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Replace the credential named in the body; an empty or absent secret keeps the stored one', tags: TAGS },
      },
    )
    .get('/user/credentials/:credName', ({ me, params }) => credentials.getCredential(deps, me, params.credName), {
      signedIn: 'signed-in',
      scope: 'user',
      params: CredentialParams,
      response: { 200: CloudCredentialApiForm, ...errors, 404: ErrorBody },
      detail: { summary: 'One of the caller\'s credentials, secret fields answered as ""', tags: TAGS },
    })
    .delete(
      '/user/credentials/:credName',
      async ({ me, params, status }) => {
        await credentials.deleteCredential(deps, me, params.credName)
        return status(204, undefined)
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: CredentialParams,
        response: { 204: t.Void(), ...errors, 404: ErrorBody },
        detail: { summary: "Delete one of the caller's credentials", tags: TAGS },
      },
    )
    .get(
      '/user/clouds/:cloud/buckets',
      async ({ me, params, query, headers }) => ({
        names: await listBuckets(
          deps,
          me,
          params.cloud,
          query,
          readSecretOfCluster,
          Number(headers['content-length'] ?? 0) > 0 || 'transfer-encoding' in headers,
        ),
      }),
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: CloudParams,
        query: BucketListOptions,
        response: { 200: BucketListResponse, ...errors, 404: ErrorBody, 422: ErrorBody, 502: ErrorBody },
        detail: { summary: 'List buckets with options as query parameters (Bun drops GET bodies; POST takes the JSON body)', tags: TAGS },
      },
    )
    .post(
      '/user/clouds/:cloud/buckets',
      async ({ me, params, body }) => ({ names: await listBuckets(deps, me, params.cloud, body, readSecretOfCluster) }),
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: CloudParams,
        body: BucketListOptions,
        response: { 200: BucketListResponse, ...errors, 404: ErrorBody, 422: ErrorBody, 502: ErrorBody },
        detail: { summary: 'List buckets with BucketListOptions as the JSON body', tags: TAGS },
      },
    )
