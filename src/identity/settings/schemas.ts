import { t } from 'elysia'
import { MAX_PAGE_SIZE } from '../../http/pagination'

export const Profile = t.Object(
  {
    name: t.String({ description: 'User name (an update renames the account: the new name must be usable and free)' }),
    full_name: t.String({ maxLength: 100, description: 'Display name' }),
    email: t.String({
      maxLength: 254,
      description:
        "Primary email (others see a noreply placeholder when it is kept private); an update names one of the caller's activated addresses",
    }),
    website: t.String({ maxLength: 255, description: 'Personal website, an http(s) URL or empty' }),
    location: t.String({ maxLength: 50, description: 'Free-text location' }),
    language: t.String({ maxLength: 16, description: 'Preferred UI language, e.g. en-US' }),
    description: t.String({ maxLength: 255, description: 'About the user' }),
    keep_email_private: t.Boolean({ description: 'Hide the email from other users' }),
  },
  { title: 'Profile' },
)

/** Every field optional on update: absent fields are left unchanged. */
export const ProfileUpdate = t.Partial(Profile, { title: 'ProfileUpdate', description: 'The Profile fields to change' })

export const UpdatePasswordParams = t.Object(
  {
    old_password: t.String({ maxLength: 1024, description: 'The current password' }),
    password: t.String({ maxLength: 1024, description: 'The new password, at least 8 characters' }),
    retype: t.String({ maxLength: 1024, description: 'The new password again' }),
  },
  { title: 'UpdatePasswordParams' },
)

export const DeleteAccountQuery = t.Object({
  password: t.Optional(t.String({ description: 'The current password' })),
})

export const Pagination = t.Object(
  {
    pageSize: t.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, description: `Default page size of lists, 1..${MAX_PAGE_SIZE}` }),
  },
  { title: 'Pagination' },
)
