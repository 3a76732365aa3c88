/**
 * The values of coded columns, which every area may read in the rows it is handed (an account's type and
 * visibility). No tables here: which area owns which schema file is in .dependency-cruiser.cjs.
 */

/** The values of `users.type`. */
export const USER_TYPE = { individual: 0, organization: 1, bot: 4 } as const

/** The values of `users.visibility`, for users and organizations alike (Gitea's numbers). */
export const VISIBILITY = { public: 0, limited: 1, private: 2 } as const
export type VisibilityName = keyof typeof VISIBILITY
/** `VISIBILITY` backwards: the name of a stored number. */
export const VISIBILITY_NAMES = ['public', 'limited', 'private'] as const satisfies readonly VisibilityName[]
