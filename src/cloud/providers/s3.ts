import { AwsClient } from 'aws4fetch'
import type { EgressPolicy } from '../../net/egress'
import { asList, parseXml, providerRequest } from './request'

export interface S3Keys {
  accessKeyID: string
  secretAccessKey: string
  region?: string
  /** An S3-compatible endpoint; AWS's regional endpoint when absent. */
  endpoint?: string
}

interface ListAllMyBucketsResult {
  Buckets?: { Bucket?: { Name?: string } | { Name?: string }[] }
  ContinuationToken?: string
}

/** Every bucket the keys can see (ListBuckets, SigV4), following continuation tokens to the end. */
export async function listS3Buckets(keys: S3Keys, policy: EgressPolicy, pageSize: number): Promise<string[]> {
  const region = keys.region || 'us-east-1'
  const client = new AwsClient({ accessKeyId: keys.accessKeyID, secretAccessKey: keys.secretAccessKey, region, service: 's3' })
  const base = (keys.endpoint || `https://s3.${region}.amazonaws.com`).replace(/\/+$/, '')
  const names: string[] = []
  let token: string | undefined
  do {
    const url = new URL(`${base}/`)
    url.searchParams.set('max-buckets', String(pageSize))
    if (token) url.searchParams.set('continuation-token', token)
    const signed = await client.sign(url.toString(), { method: 'GET' })
    const body = await providerRequest('S3', signed.url, { method: 'GET', headers: signed.headers }, policy)
    const result = (parseXml('S3', body).ListAllMyBucketsResult ?? {}) as ListAllMyBucketsResult
    for (const bucket of asList(result.Buckets?.Bucket)) if (bucket.Name) names.push(bucket.Name)
    token = result.ContinuationToken || undefined
  } while (token)
  return names
}
