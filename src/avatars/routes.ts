import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { AppError } from '../http/errors'
import { guard } from '../http/guard'
import { findAccountByName } from '../identity/store'
import { readAvatar } from './store'

// Short caching keeps the stable URL fresh after an upload; nosniff keeps browsers to the declared type.
const CACHE = { 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' }

/** A neutral placeholder for accounts without an uploaded avatar: the first letter on a grey square. */
function defaultAvatar(name: string): string {
  const letter = (name[0] ?? '?').toUpperCase().replace(/[^A-Z0-9]/, '?')
  return `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="120" viewBox="0 0 120 120"><rect width="120" height="120" fill="#9ca3af"/><text x="60" y="78" font-family="sans-serif" font-size="56" text-anchor="middle" fill="#fff">${letter}</text></svg>`
}

/**
 * `GET /avatars/:name`: the stable avatar URL of every user and org (`avatar_url` points here).
 * Public, like Gitea's avatar links; an unknown name is 404.
 */
export const avatarRoutes = (deps: Deps) =>
  new Elysia({ name: 'avatars.routes' })
    .use(guard(deps))
    .get('/avatars/:name', async ({ params }) => {
      const account = await findAccountByName(deps.db.read, params.name)
      if (!account) throw new AppError('notFound', 'no such user or organization')
      const stored = account.avatar ? readAvatar(deps.config.dataDir, account.avatar) : undefined
      if (stored) return new Response(stored.bytes, { headers: { 'content-type': stored.type, ...CACHE } })
      return new Response(defaultAvatar(account.name), { headers: { 'content-type': 'image/svg+xml', ...CACHE } })
    }, {
      permission: 'public',
      params: t.Object({ name: t.String({ description: 'User or organization name' }) }),
      detail: { summary: 'Avatar image of a user or organization', tags: ['avatar'] },
    })
