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

/** What the kubectl endpoint answers for the platform's own failures (docs/decisions.md §12). */
export const KubernetesStatus = t.Object(
  {
    kind: t.Literal('Status'),
    apiVersion: t.Literal('v1'),
    metadata: t.Object({}),
    status: t.Literal('Failure'),
    message: t.String({ description: 'What went wrong, for a person to read (kubectl prints it)' }),
    reason: t.String({ description: 'The Kubernetes reason: Unauthorized, Forbidden, NotFound, TooManyRequests, ServiceUnavailable, …' }),
    code: t.Integer({ description: 'The HTTP status' }),
  },
  { title: 'KubernetesStatus' },
)
