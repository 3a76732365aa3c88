import { t } from 'elysia'

const text = (description: string) => t.Optional(t.String({ maxLength: 4096, description }))
const secret = (description: string) =>
  t.Optional(
    t.String({
      maxLength: 16384,
      description: `${description}. Write-only: answered as "" on every read; empty or absent on PUT keeps the stored value`,
    }),
  )

const AwsBlock = t.Object(
  {
    accessKeyID: text('Access key id'),
    secretAccessKey: secret('Secret access key'),
    region: text('Region; us-east-1 when empty'),
    endpoint: text('S3-compatible endpoint URL (MinIO, Ceph, R2…); buckets are then addressed path-style'),
  },
  { description: 'Amazon Web Services or an S3-compatible store' },
)

const GoogleCloudBlock = t.Object(
  {
    projectID: text('Project whose buckets are listed'),
    serviceAccount: secret('The service-account key file (JSON) as a string; its private_key is the secret part'),
  },
  { description: 'Google Cloud' },
)

const AzureBlock = t.Object(
  {
    tenantID: text('Entra ID tenant id'),
    subscriptionID: text('Subscription id'),
    clientID: text('Application (client) id'),
    clientSecret: secret('Client secret'),
  },
  { description: 'Azure service principal' },
)

const AzureStorageBlock = t.Object(
  {
    account: text('Storage account name'),
    key: secret('Storage account key (base64)'),
    endpoint: text(
      "Blob service URL including the account (a connection string's BlobEndpoint); https://<account>.blob.core.windows.net when empty",
    ),
  },
  { description: 'Azure Blob storage account' },
)

const FleetManagerBlock = t.Object(
  {
    accessKeyID: text('Fleet manager access key'),
    secretAccessKey: secret('Fleet manager secret key'),
    endpoint: text('Fleet manager API URL'),
  },
  { description: 'Fleet manager (replaces Rancher)' },
)

const TokenBlock = t.Object({ token: secret('API token') }, { description: 'A provider API token' })

const credentialFields = {
  name: t.String({
    minLength: 1,
    maxLength: 253,
    pattern: '^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$',
    description: 'Credential name, unique per owner: letters, digits, - _ . (not at either end)',
  }),
  type: t.Union(
    [
      t.Literal('Aws'),
      t.Literal('GoogleCloud'),
      t.Literal('Azure'),
      t.Literal('AzureStorage'),
      t.Literal('FleetManager'),
      t.Literal('DigitalOcean'),
      t.Literal('Linode'),
      t.Literal('Vultr'),
    ],
    { description: 'Provider type; decides which block is read' },
  ),
  aws: t.Optional(AwsBlock),
  googleCloud: t.Optional(GoogleCloudBlock),
  azure: t.Optional(AzureBlock),
  azureStorage: t.Optional(AzureStorageBlock),
  fleetmgr: t.Optional(FleetManagerBlock),
  digitalocean: t.Optional(TokenBlock),
  linode: t.Optional(TokenBlock),
  vultr: t.Optional(TokenBlock),
}

/** The request body of POST and PUT: name, type and the block of that type. */
export const CloudCredentialSpec = t.Object(
  {
    ...credentialFields,
    ownerID: t.Optional(t.Integer({ description: 'Ignored: the owner is always the caller' })),
  },
  { description: 'A cloud credential spec (AppsCode resource model): the block named for its type' },
)
export type CloudCredentialSpec = typeof CloudCredentialSpec.static
export type CredentialType = CloudCredentialSpec['type']

export const CloudCredentialApiForm = t.Object(
  {
    ...credentialFields,
    ownerID: t.Integer({ description: 'Id of the owning user' }),
    creationTimestamp: t.String({ format: 'date-time', description: 'When the credential was created (RFC 3339)' }),
  },
  { title: 'CloudCredentialApiForm', description: 'A credential as read back, every secret field answered as ""' },
)
export type CloudCredentialApiForm = typeof CloudCredentialApiForm.static

export const CredentialParams = t.Object({ credName: t.String({ description: 'Credential name' }) })

export const CredentialListQuery = t.Object({
  credential_type: t.Optional(t.Array(t.String(), { description: 'Keep only these types (repeatable, exact)' })),
  fleetmgr_endpoint: t.Optional(t.String({ description: 'Keep only FleetManager credentials with this endpoint' })),
})

export const CloudParams = t.Object({
  cloud: t.String({ description: 'Provider: aws (or s3), gcs (or gcp), azure' }),
})

const bucketOptionFields = {
  credential: t.Optional(
    t.String({ maxLength: 253, description: "Name of one of the caller's credentials; or secret_namespace + secret_name" }),
  ),
  secret_namespace: t.Optional(t.String({ maxLength: 253, description: 'Namespace of a Secret holding the keys (KubeStash key names)' })),
  secret_name: t.Optional(t.String({ maxLength: 253, description: 'Name of that Secret' })),
  cluster_uid: t.Optional(
    t.String({
      maxLength: 253,
      description: "uid of the caller's cluster the Secret is read from; required with secret_namespace/secret_name",
    }),
  ),
  cloud_project: t.Optional(t.String({ maxLength: 253, description: "GCS: project to list instead of the credential's projectID" })),
  provider: t.Optional(t.String({ maxLength: 253, description: 'Informational provider label; {cloud} decides the API' })),
}

export const BucketListOptions = t.Object(bucketOptionFields, { title: 'BucketListOptions' })
export type BucketListOptions = typeof BucketListOptions.static

export const BucketListResponse = t.Object(
  {
    names: t.Array(t.String(), { description: "Bucket (or container) names, in the provider's order, every page followed" }),
  },
  { title: 'BucketListResponse' },
)
export type BucketListResponse = typeof BucketListResponse.static
