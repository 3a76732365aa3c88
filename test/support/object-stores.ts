import { afterAll } from 'bun:test'
import { resolve } from 'node:path'
import { AwsClient } from 'aws4fetch'
import { exportPKCS8, exportSPKI, generateKeyPair, importSPKI, jwtVerify } from 'jose'
import S3rver from 's3rver'
import { sharedKeyAuthorization } from '../../src/cloud/providers/azure'
import { generateServerTls } from '../../src/kube-emulator/tls'
import { tempDir } from './app'

/** s3rver's fixed keys: it checks every SigV4 signature against them. */
export const S3RVER_KEYS = { accessKeyID: 'S3RVER', secretAccessKey: 'S3RVER' }

/** A real S3-compatible server (s3rver) on loopback, with `buckets` created through its API. */
export async function startS3(buckets: string[]): Promise<{ endpoint: string }> {
  const server = new S3rver({ port: 0, address: '127.0.0.1', directory: tempDir('s3rver-'), silent: true })
  const { port } = (await server.run()) as { port: number }
  afterAll(() => server.close())
  const endpoint = `http://127.0.0.1:${port}`
  const client = new AwsClient({
    accessKeyId: S3RVER_KEYS.accessKeyID,
    secretAccessKey: S3RVER_KEYS.secretAccessKey,
    region: 'us-east-1',
    service: 's3',
  })
  for (const bucket of buckets) {
    const res = await client.fetch(`${endpoint}/${bucket}`, { method: 'PUT' })
    if (!res.ok) throw new Error(`creating bucket ${bucket}: ${res.status} ${await res.text()}`)
  }
  return { endpoint }
}

/** Azurite's well-known development account. */
export const AZURITE_ACCOUNT = {
  account: 'devstoreaccount1',
  key: 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==',
}

/** Azurite's Blob service on loopback (a child process), with `containers` created through its API. */
export async function startAzurite(containers: string[]): Promise<{ endpoint: string }> {
  const main = resolve(import.meta.dir, '../../node_modules/azurite/dist/src/blob/main.js')
  const child = Bun.spawn(
    [
      process.execPath,
      main,
      '--blobHost',
      '127.0.0.1',
      '--blobPort',
      '0',
      '--inMemoryPersistence',
      '--extentMemoryLimit',
      '64',
      '--silent',
    ],
    {
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    },
  )
  afterAll(() => {
    child.kill('SIGKILL')
  })
  const reader = child.stdout.getReader()
  let seen = ''
  let port: string | undefined
  while (!(port = /listens on http:\/\/127\.0\.0\.1:(\d+)/.exec(seen)?.[1])) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`azurite exited: ${seen}`)
    seen += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  void child.stdout.pipeTo(new WritableStream()).catch(() => undefined)
  const endpoint = `http://127.0.0.1:${port}/${AZURITE_ACCOUNT.account}`
  for (const container of containers) {
    const url = new URL(`${endpoint}/${container}?restype=container`)
    const headers: Record<string, string> = { 'x-ms-date': new Date().toUTCString(), 'x-ms-version': '2021-08-06' }
    headers.authorization = await sharedKeyAuthorization(AZURITE_ACCOUNT, 'PUT', url, headers)
    const res = await fetch(url, { method: 'PUT', headers })
    if (res.status !== 201) throw new Error(`creating container ${container}: ${res.status} ${await res.text()}`)
  }
  return { endpoint }
}

export interface GcsStub {
  /** HTTPS origin of both the token endpoint and the JSON API. */
  origin: string
  /** PEM of the CA that signed the stub's certificate (for NODE_EXTRA_CA_CERTS). */
  caFile: string
  /** A service-account key file whose private key the stub trusts. */
  serviceAccount: Record<string, string>
  /** Tokens the stub issued, and the JWT claims it verified for each. */
  exchanges: { iss: string; aud: string; scope: string }[]
}

/**
 * A loopback HTTPS stand-in for Google: the token endpoint verifies the service account's JWT
 * with its public key (RS256, audience, expiry) before issuing a token, and the JSON API lists
 * `buckets` of `project` two per page, only for a token it issued.
 */
export async function startGcsStub(project: string, buckets: string[]): Promise<GcsStub> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true })
  const publicPem = await exportSPKI(publicKey)
  const tls = await generateServerTls(['127.0.0.1'])
  const caFile = `${tempDir('gcs-ca-')}/ca.pem`
  await Bun.write(caFile, tls.caCertPem)
  const issued = new Set<string>()
  const exchanges: GcsStub['exchanges'] = []
  let origin = ''
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    tls: { cert: tls.certPem, key: tls.keyPem },
    async fetch(request) {
      const url = new URL(request.url)
      if (url.pathname === '/token' && request.method === 'POST') {
        const form = new URLSearchParams(await request.text())
        try {
          const { payload } = await jwtVerify(form.get('assertion') ?? '', await importSPKI(publicPem, 'RS256'), {
            audience: `${origin}/token`,
          })
          const token = crypto.randomUUID()
          issued.add(token)
          exchanges.push({ iss: String(payload.iss), aud: String(payload.aud), scope: String(payload.scope) })
          return Response.json({ access_token: token, token_type: 'Bearer', expires_in: 3600 })
        } catch {
          return Response.json({ error: 'invalid_grant', error_description: 'Invalid JWT Signature.' }, { status: 400 })
        }
      }
      if (url.pathname === '/storage/v1/b') {
        if (!issued.has((request.headers.get('authorization') ?? '').replace(/^Bearer /, '')))
          return Response.json({ error: { code: 401, message: 'Invalid Credentials' } }, { status: 401 })
        if (url.searchParams.get('project') !== project) return Response.json({ items: [] })
        const start = Number(url.searchParams.get('pageToken') ?? 0)
        const size = Math.min(2, Number(url.searchParams.get('maxResults') ?? 1000))
        const page = buckets.slice(start, start + size).map((name) => ({ name }))
        return Response.json({
          kind: 'storage#buckets',
          items: page,
          ...(start + size < buckets.length ? { nextPageToken: String(start + size) } : {}),
        })
      }
      return new Response('not found', { status: 404 })
    },
  })
  afterAll(() => server.stop(true))
  origin = `https://127.0.0.1:${server.port}`
  const serviceAccount = {
    type: 'service_account',
    project_id: project,
    private_key_id: 'k1',
    client_email: `lister@${project}.iam.gserviceaccount.com`,
    private_key: await exportPKCS8(privateKey),
    token_uri: `${origin}/token`,
  }
  return { origin, caFile, serviceAccount, exchanges }
}
