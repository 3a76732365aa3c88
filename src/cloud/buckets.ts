import type { Actor } from '../authz/actor'
import type { Deps } from '../deps'
import { AppError } from '../errors'
import { listAzureContainers } from './providers/azure'
import { type GcsKeys, listGcsBuckets } from './providers/gcs'
import { listS3Buckets } from './providers/s3'
import type { BucketListOptions } from './schemas'
import { revealCredential, type TYPE_RULES } from './service'

export const BucketMessages = {
  unknownCloud: (cloud: string) => `unknown cloud "${cloud}": use aws (or s3), gcs (or gcp) or azure`,
  bodyIgnored:
    'a GET request body is not read: send the options as query parameters (?credential=NAME) or POST them as a JSON body to the same path',
  noSource: 'name a credential, or a Secret with secret_namespace, secret_name and cluster_uid',
  clusterUidNeeded: 'cluster_uid is required with secret_namespace and secret_name',
  wrongType: (type: string, cloud: string) => `a ${type} credential cannot list ${cloud} buckets`,
  secretIncomplete: (key: string) => `the Secret has no ${key}`,
} as const

type Cloud = 's3' | 'gcs' | 'azure'
const CLOUDS: Record<string, Cloud> = { aws: 's3', s3: 's3', gcs: 'gcs', gcp: 'gcs', azure: 'azure' }

/** The credential type each cloud lists with, and the KubeStash Secret keys that stand for its fields. */
const SOURCES = {
  s3: {
    type: 'Aws',
    secretKeys: {
      accessKeyID: 'AWS_ACCESS_KEY_ID',
      secretAccessKey: 'AWS_SECRET_ACCESS_KEY',
      region: 'AWS_REGION?',
      endpoint: 'AWS_ENDPOINT?',
    },
  },
  gcs: { type: 'GoogleCloud', secretKeys: { projectID: 'GOOGLE_PROJECT_ID', serviceAccount: 'GOOGLE_SERVICE_ACCOUNT_JSON_KEY' } },
  azure: { type: 'AzureStorage', secretKeys: { account: 'AZURE_ACCOUNT_NAME', key: 'AZURE_ACCOUNT_KEY', endpoint: 'AZURE_ENDPOINT?' } },
} as const satisfies Record<Cloud, { type: keyof typeof TYPE_RULES; secretKeys: Record<string, string> }>

type Fields = Record<string, string | undefined>

/** Reads a Secret's data (decoded) from the caller's cluster `clusterUid`; supplied by the cluster area. */
export type SecretReader = (
  deps: Deps,
  actor: Actor,
  clusterUid: string,
  namespace: string,
  name: string,
) => Promise<Record<string, string>>

/**
 * Lists the buckets of `cloud` with the caller's named credential or with keys from a Secret in
 * one of the caller's clusters. Throws invalid (options, cloud, type), notFound (credential,
 * cluster, Secret), upstream (the provider's refusal or silence). `getWithBody`: the options came
 * from the query of a GET that also carried a body.
 */
export async function listBuckets(
  deps: Deps,
  actor: Actor,
  cloudName: string,
  options: BucketListOptions,
  readSecret: SecretReader,
  getWithBody = false,
): Promise<string[]> {
  // Bun drops GET bodies (docs/decisions.md §4b): a client that sent one must learn where its options went.
  if (getWithBody && Object.keys(options).length === 0) throw new AppError('invalid', BucketMessages.bodyIgnored)
  const cloud = CLOUDS[cloudName.toLowerCase()]
  if (!cloud) throw new AppError('invalid', BucketMessages.unknownCloud(cloudName), [{ field: 'cloud', message: 'is not a known cloud' }])
  const fields = await keysFor(deps, actor, cloud, options, readSecret)
  const policy = { allowPrivate: deps.config.allowPrivateEndpoints }
  const pageSize = deps.config.bucketListPageSize
  if (cloud === 's3')
    return listS3Buckets(
      { accessKeyID: fields.accessKeyID!, secretAccessKey: fields.secretAccessKey!, region: fields.region, endpoint: fields.endpoint },
      policy,
      pageSize,
    )
  if (cloud === 'azure')
    return listAzureContainers({ account: fields.account!, key: fields.key!, endpoint: fields.endpoint }, policy, pageSize)
  return listGcsBuckets(gcsKeys(fields, options.cloud_project), deps.config.gcsEndpoint, policy, pageSize)
}

async function keysFor(deps: Deps, actor: Actor, cloud: Cloud, options: BucketListOptions, readSecret: SecretReader): Promise<Fields> {
  const source = SOURCES[cloud]
  if (options.credential) {
    const credential = await revealCredential(deps, actor, options.credential)
    if (credential.type !== source.type)
      throw new AppError('invalid', BucketMessages.wrongType(credential.type, cloud), [
        { field: 'credential', message: `must be a ${source.type} credential` },
      ])
    return credential.block
  }
  if (!options.secret_namespace || !options.secret_name)
    throw new AppError('invalid', BucketMessages.noSource, [
      { field: 'credential', message: 'is required without secret_namespace and secret_name' },
    ])
  if (!options.cluster_uid)
    throw new AppError('invalid', BucketMessages.clusterUidNeeded, [{ field: 'cluster_uid', message: 'is required' }])
  const data = await readSecret(deps, actor, options.cluster_uid, options.secret_namespace, options.secret_name)
  const fields: Fields = {}
  for (const [field, spec] of Object.entries(source.secretKeys)) {
    const optional = spec.endsWith('?')
    const key = spec.replace(/\?$/, '')
    if (data[key]) fields[field] = data[key]
    else if (!optional)
      throw new AppError('invalid', BucketMessages.secretIncomplete(key), [{ field: 'secret_name', message: `has no ${key}` }])
  }
  return fields
}

function gcsKeys(fields: Fields, project: string | undefined): GcsKeys {
  let serviceAccount: GcsKeys['serviceAccount']
  try {
    serviceAccount = JSON.parse(fields.serviceAccount ?? '') as GcsKeys['serviceAccount']
  } catch {
    throw new AppError('invalid', 'the service account key is not JSON')
  }
  if (typeof serviceAccount?.client_email !== 'string' || typeof serviceAccount.private_key !== 'string')
    throw new AppError('invalid', 'the service account key has no client_email or private_key')
  return { projectID: project || fields.projectID!, serviceAccount }
}
