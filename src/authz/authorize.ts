import type { Deps } from '../deps'
import { AppError } from '../http/errors'
import type { Actor } from './actor'

/**
 * What a route requires of its caller. `public`: anyone; `signed-in`: any valid credential;
 * `site-admin`: a site administrator; `password`: Basic with the account's real password
 * (the `/users/{u}/tokens*` routes).
 */
export type Permission = 'public' | 'signed-in' | 'site-admin' | 'password'

export const Messages = {
  signInRequired: 'sign in required',
  siteAdminRequired: 'site administrator required',
  passwordRequired: 'this route needs Basic authentication with your password',
} as const

/** Answers "may this caller use a route requiring `permission`"; throws unauthenticated or forbidden. */
export async function authorize(_deps: Deps, actor: Actor | undefined, permission: Permission): Promise<void> {
  if (permission === 'public') return
  if (!actor) throw new AppError('unauthenticated', Messages.signInRequired)
  switch (permission) {
    case 'signed-in':
      return
    case 'site-admin':
      if (!actor.user.isAdmin) throw new AppError('forbidden', Messages.siteAdminRequired)
      return
    case 'password':
      if (actor.credential !== 'basic-password') throw new AppError('unauthenticated', Messages.passwordRequired)
      return
  }
}
