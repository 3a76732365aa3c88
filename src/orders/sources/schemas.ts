import { t } from 'elysia'

const SOURCE_NAME = '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'

const sourceFields = {
  url: t.String({
    maxLength: 2048,
    pattern: '^(https?|oci)://[^/\\s]',
    description:
      'A Helm repository (`http(s)://…`, serving index.yaml) or an OCI registry path (`oci://host/path`); credentials belong in username/password, not in the URL',
  }),
  username: t.Optional(
    t.String({ maxLength: 512, description: 'User name for the registry (Basic auth, or the token request of an OCI registry)' }),
  ),
  password: t.Optional(
    t.String({ maxLength: 8192, description: 'Password or token for the registry; stored sealed and never answered (reads show "")' }),
  ),
  caData: t.Optional(
    t.String({ maxLength: 65536, description: "PEM certificate(s) of the CA that signed the registry's TLS certificate" }),
  ),
  insecureSkipTLSVerify: t.Optional(t.Boolean({ description: 'Accept any TLS certificate from the registry (labs only)' })),
}

export const ChartSourceSpec = t.Object(
  {
    name: t.String({
      pattern: SOURCE_NAME,
      description: 'Name packages use in `sourceRef.name`: lower-case letters, digits and -, at most 63',
    }),
    ...sourceFields,
  },
  { description: 'A chart source: a Helm HTTP repository or an OCI registry (docs/decisions.md §4a)' },
)
export type ChartSourceSpec = typeof ChartSourceSpec.static

export const ChartSourceUpdate = t.Object(
  {
    name: t.Optional(t.String({ pattern: SOURCE_NAME, description: 'Must equal the name in the path when given' })),
    ...sourceFields,
  },
  { description: 'The new settings of a chart source; an empty or absent password keeps the stored one' },
)
export type ChartSourceUpdate = typeof ChartSourceUpdate.static

export const ChartSource = t.Object(
  {
    name: t.String({ description: 'Name packages use in `sourceRef.name`' }),
    url: t.String({ description: 'Repository or registry URL' }),
    username: t.String({ description: 'User name, "" when anonymous' }),
    password: t.Literal('', { description: 'Always "": the password is never answered' }),
    caData: t.String({ description: 'PEM CA certificate(s), "" when the system CAs apply' }),
    insecureSkipTLSVerify: t.Boolean({ description: 'TLS certificates are not verified' }),
  },
  { description: 'A chart source as answered: the password is never shown' },
)
export type ChartSource = typeof ChartSource.static

export const ChartSourceParams = t.Object({
  name: t.String({ description: 'The chart source name' }),
})
