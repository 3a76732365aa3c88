import { t } from 'elysia'

export const Email = t.Object(
  {
    email: t.String({ description: 'The address' }),
    verified: t.Boolean({ description: 'Whether the address is activated' }),
    primary: t.Boolean({ description: "Whether this is the account's primary address" }),
  },
  { title: 'Email' },
)

/** The contract names the adding and the deleting body apart though they have one shape. */
const emailList = (title: string, description: string) =>
  t.Object({ emails: t.Array(t.String({ maxLength: 254 }), { maxItems: 50, description }) }, { title })

export const CreateEmailOption = emailList('CreateEmailOption', 'Email addresses to add')
export const DeleteEmailOption = emailList('DeleteEmailOption', 'Email addresses to delete')

/** The raw record of the settings page (opaque in the spec). */
export const EmailRecord = t.Object(
  {
    id: t.Integer({ description: 'Address id, for _method=PRIMARY and delete' }),
    uid: t.Integer({ description: 'Owner user id' }),
    email: t.String({ description: 'The address' }),
    is_activated: t.Boolean({ description: 'Whether the address is activated' }),
    is_primary: t.Boolean({ description: 'Whether this is the primary address' }),
  },
  { title: 'EmailAddress' },
)

export const AddEmailParams = t.Object(
  {
    email: t.Optional(t.String({ maxLength: 254, description: 'Address to add (required unless _method=PRIMARY)' })),
  },
  { title: 'AddEmailParams' },
)

export const EmailSettingsQuery = t.Object({
  _method: t.Optional(t.String({ description: 'PRIMARY: make address `id` primary instead of adding one' })),
  id: t.Optional(t.Numeric({ description: 'Address id, with _method=PRIMARY' })),
})

export const EmailIdQuery = t.Object({ id: t.Numeric({ description: 'Address id to delete' }) })
