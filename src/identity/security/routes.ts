import type { RegistrationResponseJSON } from '@simplewebauthn/server'
import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { jsonAnswer } from '../../http/json-answer'
import { ErrorBody } from '../../http/schemas'
import { listAccountLinks, unlinkAccount } from './account-links/service'
import {
  AccountLink,
  AccountLinkParams,
  CredentialCreationOptions,
  KeyIdParams,
  RegistrationResponse,
  ScratchToken,
  Security,
  SessionInfoAPIForm,
  SidParams,
  TwoFAStatus,
  TwoFactorAuthParams,
  WebAuthnSecurityKeys,
  WebauthnRegistrationOptions,
} from './schemas'
import { listSessions, revokeSession } from './sessions/service'
import { disableTwoFactor, finishEnrollment, regenerateScratch, startEnrollment, twoFactorStatus } from './two-factor/service'
import { deleteSecurityKey, listSecurityKeys, registerSecurityKey, requestRegistration } from './webauthn/service'

const NoBody = t.Void({ description: 'No body' })
const tags = ['settings']
/** A bare JSON string body (the scratch token), as Gitea's settings API answers it. */
const jsonString = (text: string) => jsonAnswer(JSON.stringify(text))
const emptyOk = () => new Response(null, { status: 200 })

export const securityRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity.security.routes', prefix: '/api/v1/user/settings/security' })
    .use(guard(deps))
    .get('/', ({ me }) => twoFactorStatus(deps, me.user.id), {
      signedIn: 'signed-in',
      scope: 'user',
      response: { 200: TwoFAStatus, 401: ErrorBody, 403: ErrorBody },
      detail: { summary: 'Two-factor and security-key status of the caller', tags },
    })
    .get('/twofa/enroll', ({ me }) => startEnrollment(deps, me.user), {
      signedIn: 'signed-in',
      scope: 'user',
      secret: true,
      response: { 200: Security, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
      detail: { summary: 'Start TOTP enrollment: a new secret and its QR code', tags },
    })
    .post('/twofa/enroll', async ({ me, body }) => jsonString(await finishEnrollment(deps, me.user.id, body.passcode)), {
      signedIn: 'signed-in',
      scope: 'user',
      secret: true,
      body: TwoFactorAuthParams,
      response: { 200: ScratchToken, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody, 429: ErrorBody },
      detail: { summary: 'Finish TOTP enrollment with a current code; answers the scratch token once', tags },
    })
    .post('/twofa/regenerate_scratch', async ({ me }) => jsonString(await regenerateScratch(deps, me.user.id)), {
      signedIn: 'signed-in',
      scope: 'user',
      secret: true,
      response: { 200: ScratchToken, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
      detail: { summary: 'Replace the scratch token; answers the new one once', tags },
    })
    .post(
      '/twofa/disable',
      async ({ me }) => {
        await disableTwoFactor(deps, me.user.id)
        return emptyOk()
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        response: { 200: NoBody, 401: ErrorBody, 403: ErrorBody },
        detail: { summary: 'Turn TOTP two-factor authentication off', tags },
      },
    )
    .get('/webauthn/keys', ({ me }) => listSecurityKeys(deps, me.user.id), {
      signedIn: 'signed-in',
      scope: 'user',
      response: { 200: t.Array(WebAuthnSecurityKeys), 401: ErrorBody, 403: ErrorBody },
      detail: { summary: "List the caller's WebAuthn security keys", tags },
    })
    .post('/webauthn/request_register', ({ me, body }) => requestRegistration(deps, me.user, body.name), {
      signedIn: 'signed-in',
      scope: 'user',
      body: WebauthnRegistrationOptions,
      response: { 200: CredentialCreationOptions, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
      detail: { summary: 'Credential-creation options for a new security key (challenge valid 5 minutes, once)', tags },
    })
    .post(
      '/webauthn/register',
      async ({ me, body, status }) => status(201, await registerSecurityKey(deps, me.user.id, body as unknown as RegistrationResponseJSON)),
      {
        signedIn: 'signed-in',
        scope: 'user',
        body: RegistrationResponse,
        response: { 201: WebAuthnSecurityKeys, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
        detail: { summary: "Verify the security key's attestation and store the key", tags },
      },
    )
    .delete(
      '/webauthn/keys/:id',
      async ({ me, params }) => {
        await deleteSecurityKey(deps, me.user.id, params.id)
        return emptyOk()
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        params: KeyIdParams,
        response: { 200: NoBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: { summary: "Delete one of the caller's security keys", tags },
      },
    )
    .get('/sessions/', ({ me }) => listSessions(deps, me.user.id, me.sessionId), {
      signedIn: 'signed-in',
      scope: 'user',
      response: { 200: t.Array(SessionInfoAPIForm), 401: ErrorBody, 403: ErrorBody },
      detail: { summary: "List the caller's live sessions", tags },
    })
    .delete('/sessions/:sid/revoke', ({ me, params }) => revokeSession(deps, me.user.id, params.sid, me.sessionId), {
      signedIn: 'signed-in',
      scope: 'user',
      params: SidParams,
      response: { 200: t.Array(SessionInfoAPIForm), 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      detail: { summary: "End one of the caller's sessions; answers the remaining ones", tags },
    })
    .get('/account_link', ({ me }) => listAccountLinks(deps, me.user.id), {
      signedIn: 'signed-in',
      scope: 'user',
      response: { 200: t.Array(AccountLink), 401: ErrorBody, 403: ErrorBody },
      detail: { summary: "List the caller's links to external login sources", tags },
    })
    .post(
      '/account_link',
      async ({ me, body }) => {
        await unlinkAccount(deps, me.user.id, body.id)
        return emptyOk()
      },
      {
        signedIn: 'signed-in',
        scope: 'user',
        body: AccountLinkParams,
        response: { 200: NoBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        detail: { summary: 'Remove the link to a login source (POST, as in Gitea)', tags },
      },
    )
