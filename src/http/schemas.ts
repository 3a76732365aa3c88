import { t } from 'elysia'

const FieldErrorSchema = t.Object({
  field: t.String({ description: 'The offending field, dotted path' }),
  message: t.String({ description: 'What is wrong with it' }),
})

/** The one error body (docs/decisions.md §1). */
export const ErrorBody = t.Object(
  {
    message: t.String({ description: 'What went wrong, for a person to read' }),
    url: t.String({ description: 'Link to the API documentation' }),
    errors: t.Optional(t.Array(FieldErrorSchema, { description: 'Field-level validation failures' })),
  },
  { title: 'Error' },
)

export const ApiResponseMessage = t.Object(
  { message: t.String({ description: 'Outcome, for a person to read' }) },
  { title: 'ApiResponseMessage' },
)
