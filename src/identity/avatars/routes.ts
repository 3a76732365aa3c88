import { Elysia, t } from 'elysia'
import type { Deps } from '../../deps'
import { guard } from '../../http/guard'
import { ErrorBody } from '../../http/schemas'
import { AvatarNameParams, AvatarParams, AvatarSetting } from './schemas'
import * as avatars from './service'

/** Public avatar images (the `avatar_url` of users and orgs) and the caller's avatar settings. */
export const avatarRoutes = (deps: Deps) =>
  new Elysia({ name: 'identity.avatars' })
    .use(guard(deps))
    .get(
      '/avatars/:name',
      async ({ params, request, redirect }) => {
        const image = await avatars.avatarImage(deps, params.name)
        if (image.kind === 'redirect') return redirect(image.location, 302)
        // The CSP keeps an image opened directly from running anything (the identicon is SVG).
        const headers = {
          etag: image.etag,
          'cache-control': 'public, max-age=300, must-revalidate',
          'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
        }
        if (request.headers.get('if-none-match') === image.etag) return new Response(null, { status: 304, headers })
        return new Response(image.bytes as BodyInit, {
          headers: { ...headers, 'content-type': image.type, 'x-content-type-options': 'nosniff' },
        })
      },
      {
        public: true,
        params: AvatarNameParams,
        response: {
          200: t.File({ description: 'The image (PNG, JPEG, GIF, WebP, or the SVG identicon)' }),
          302: t.Void({ description: 'To the external avatar' }),
          304: t.Void({ description: 'If-None-Match matched the ETag' }),
          404: ErrorBody,
        },
        detail: { summary: 'Avatar image of a user or organization (stored image, external link, or identicon)', tags: ['user'] },
      },
    )
    .group('/api/v1', (app) =>
      app
        .get('/user/settings/avatar', ({ me }) => avatars.avatarSetting(me.user), {
          signedIn: 'signed-in',
          scope: 'user',
          response: { 200: AvatarSetting, 401: ErrorBody, 403: ErrorBody },
          detail: { summary: 'My avatar setting', tags: ['settings'] },
        })
        .post(
          '/user/settings/avatar',
          async ({ me, body }) => {
            await avatars.updateAvatar(deps, me.user, body)
          },
          {
            signedIn: 'signed-in',
            scope: 'user',
            body: AvatarParams,
            response: { 200: t.Void(), 401: ErrorBody, 403: ErrorBody, 422: ErrorBody },
            detail: { summary: 'Upload an avatar image (multipart) or set an external avatar_link', tags: ['settings'] },
          },
        )
        .post(
          '/user/settings/avatar/delete',
          async ({ me }) => {
            await avatars.deleteAvatar(deps, me.user)
          },
          {
            signedIn: 'signed-in',
            scope: 'user',
            response: { 200: t.Void(), 401: ErrorBody, 403: ErrorBody },
            detail: { summary: 'Remove my avatar (back to the generated default)', tags: ['settings'] },
          },
        ),
    )
