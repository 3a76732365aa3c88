import { t } from 'elysia'

export const AvatarParams = t.Object(
  {
    avatar: t.Optional(t.File({ description: 'PNG, JPEG, GIF or WebP image, at most 1 MiB (checked by content)' })),
    source: t.Optional(t.String({ description: 'local (the uploaded file) or lookup (avatar_link); informational' })),
    avatar_link: t.Optional(
      t.String({
        maxLength: 1024,
        description: 'External avatar: an http(s) URL or an email address (users only; organizations show an uploaded image)',
      }),
    ),
    federavatar: t.Optional(
      t.Union([t.Boolean(), t.String()], { description: 'Accepted for compatibility; federated avatars are not looked up' }),
    ),
  },
  { title: 'AvatarParams' },
)

export const AvatarSetting = t.Object(
  {
    source: t.Union([t.Literal('local'), t.Literal('lookup'), t.Literal('default')], {
      description: 'local: uploaded image; lookup: avatar_link; default: generated identicon',
    }),
    avatar_link: t.String({ description: 'External avatar URL or email; empty when none' }),
    federavatar: t.Boolean({ description: 'Always false: federated avatars are not looked up' }),
  },
  { title: 'AvatarSetting', description: 'The current avatar setting' },
)

export const AvatarNameParams = t.Object({ name: t.String({ description: 'User or organization name, case-insensitive' }) })
