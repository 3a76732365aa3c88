import { afterAll, describe, expect, test } from 'bun:test'
import { BucketMessages } from '../../src/cloud/buckets'
import { registerSandbox } from '../../src/clusters/service'
import { startEmulator } from '../../src/kube-emulator'
import { makeTestApp, type TestApp, type TestUser, tempDir } from '../support/app'
import { AZURITE_ACCOUNT, S3RVER_KEYS, startAzurite, startGcsStub, startS3 } from '../support/object-stores'
import { createTokenOnCommandLine, startServer } from '../support/process'

// Enough buckets for several provider pages at the page size the apps below ask for.
const PAGE_SIZE = '2'
const S3_BUCKETS = ['alpha-logs', 'beta-backups', 'gamma-media', 'delta-tmp', 'epsilon-db']
const CONTAINERS = ['backups', 'images', 'logs', 'reports', 'videos']

async function lab(): Promise<{ t: TestApp; ann: TestUser; bob: TestUser }> {
  const t = await makeTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true', PLATFORM_BUCKET_LIST_PAGE_SIZE: PAGE_SIZE })
  const [ann, bob] = await t.users('ann', 'bob')
  return { t, ann: ann!, bob: bob! }
}

const names = async (res: Response) => ((await res.json()) as { names: string[] }).names

describe('S3 buckets (s3rver)', async () => {
  const s3 = await startS3(S3_BUCKETS)
  const credential = (name: string) => ({ name, type: 'Aws', aws: { ...S3RVER_KEYS, endpoint: s3.endpoint } })

  test('GET with ?credential= lists every bucket the keys see', async () => {
    const { t, ann } = await lab()
    await t.as(ann).send('POST', '/api/v1/user/credentials', credential('minio'))
    const res = await t.as(ann).get('/api/v1/user/clouds/aws/buckets?credential=minio')
    expect(res.status).toBe(200)
    expect((await names(res)).sort()).toEqual([...S3_BUCKETS].sort())
  })

  test('POST with the JSON body and the s3 alias lists the same', async () => {
    const { t, ann } = await lab()
    await t.as(ann).send('POST', '/api/v1/user/credentials', credential('minio'))
    const res = await t.as(ann).send('POST', '/api/v1/user/clouds/s3/buckets', { credential: 'minio' })
    expect((await names(res)).sort()).toEqual([...S3_BUCKETS].sort())
  })

  // s3rver does not check signatures on ListBuckets, so a provider's refusal is proven with azurite and the GCS stub below.
  test("another user naming ann's credential → 404, and s3rver is not asked", async () => {
    const { t, ann, bob } = await lab()
    await t.as(ann).send('POST', '/api/v1/user/credentials', credential('minio'))
    const res = await t.as(bob).get('/api/v1/user/clouds/aws/buckets?credential=minio')
    expect(res.status).toBe(404)
  })

  test('a credential of another type → 422', async () => {
    const { t, ann } = await lab()
    await t.as(ann).send('POST', '/api/v1/user/credentials', credential('minio'))
    const res = await t.as(ann).get('/api/v1/user/clouds/gcs/buckets?credential=minio')
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(BucketMessages.wrongType('Aws', 'gcs'))
  })

  test('an unreachable endpoint → 502 naming S3', async () => {
    const { t, ann } = await lab()
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
    const endpoint = `http://127.0.0.1:${closed.port}`
    closed.stop(true)
    await t.as(ann).send('POST', '/api/v1/user/credentials', { name: 'gone', type: 'Aws', aws: { ...S3RVER_KEYS, endpoint } })
    const res = await t.as(ann).get('/api/v1/user/clouds/aws/buckets?credential=gone')
    expect(res.status).toBe(502)
    expect((await res.json()).message).toContain('S3 could not be reached')
  })
})

describe('Azure containers (azurite)', async () => {
  const azurite = await startAzurite(CONTAINERS)
  const credential = { name: 'blob', type: 'AzureStorage', azureStorage: { ...AZURITE_ACCOUNT, endpoint: azurite.endpoint } }

  test('every container, across pages of two (NextMarker followed to the end)', async () => {
    const { t, ann } = await lab()
    await t.as(ann).send('POST', '/api/v1/user/credentials', credential)
    const res = await t.as(ann).get('/api/v1/user/clouds/azure/buckets?credential=blob')
    expect(res.status).toBe(200)
    expect(await names(res)).toEqual(CONTAINERS)
  })

  test('a wrong account key → 502 naming Azure Blob and its error code', async () => {
    const { t, ann } = await lab()
    const wrongKey = Buffer.from('definitely not the key').toString('base64')
    await t.as(ann).send('POST', '/api/v1/user/credentials', { ...credential, azureStorage: { ...credential.azureStorage, key: wrongKey } })
    const res = await t.as(ann).get('/api/v1/user/clouds/azure/buckets?credential=blob')
    expect(res.status).toBe(502)
    const body = await res.text()
    expect(body).toContain('Azure Blob')
    expect(body).toContain('AuthorizationFailure')
    expect(body).not.toContain(wrongKey)
  })
})

describe('bucket listing options', () => {
  test('an unknown cloud → 422 naming the clouds', async () => {
    const { t, ann } = await lab()
    const res = await t.as(ann).get('/api/v1/user/clouds/dropbox/buckets?credential=x')
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(BucketMessages.unknownCloud('dropbox'))
  })

  test('neither a credential nor a Secret → 422 saying what to send', async () => {
    const { t, ann } = await lab()
    const res = await t.as(ann).get('/api/v1/user/clouds/aws/buckets')
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(BucketMessages.noSource)
  })

  test('a Secret without cluster_uid → 422', async () => {
    const { t, ann } = await lab()
    const res = await t.as(ann).get('/api/v1/user/clouds/aws/buckets?secret_namespace=demo&secret_name=keys')
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(BucketMessages.clusterUidNeeded)
  })

  test('a GET carrying a body (which Bun drops) and no query → 422 explaining both ways', async () => {
    const { t, ann } = await lab()
    const base = await t.listen()
    const res = await fetch(`${base}/api/v1/user/clouds/aws/buckets`, {
      method: 'GET',
      headers: { authorization: `token ${ann.token}`, 'content-type': 'application/json', 'content-length': '20' },
      body: '{"credential":"abc"}',
    } as RequestInit).catch(() => undefined)
    // Some clients cannot send a GET body at all; the raw socket below always can.
    const raw = res ?? (await rawGetWithBody(base, ann.token))
    expect(raw.status).toBe(422)
    expect((await raw.json()).message).toBe(BucketMessages.bodyIgnored)
  })
})

/** A GET with a JSON body over a plain socket, as curl -X GET -d would send it. */
async function rawGetWithBody(base: string, token: string): Promise<Response> {
  const url = new URL(base)
  const body = '{"credential":"abc"}'
  let text = ''
  await new Promise<void>((done) => {
    void Bun.connect({
      hostname: url.hostname,
      port: Number(url.port),
      socket: {
        open(socket) {
          socket.write(
            `GET /api/v1/user/clouds/aws/buckets HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: token ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
          )
        },
        data(_socket, chunk) {
          text += new TextDecoder().decode(chunk)
        },
        close() {
          done()
        },
      },
    })
  })
  const [head, payload] = text.split('\r\n\r\n')
  return new Response(payload, { status: Number(/^HTTP\/1\.1 (\d+)/.exec(head!)![1]) })
}

describe('Google Cloud Storage (HTTPS stub that checks the JWT signature)', async () => {
  const project = 'acme-prod'
  const buckets = ['acme-a', 'acme-b', 'acme-c', 'acme-d', 'acme-e']
  const stub = await startGcsStub(project, buckets)
  // A separate platform process, trusting the stub's CA the way an operator would trust a private CA.
  const dataDir = tempDir()
  const server = await startServer(dataDir, {
    NODE_EXTRA_CA_CERTS: stub.caFile,
    PLATFORM_GCS_ENDPOINT: stub.origin,
    PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true',
    PLATFORM_BUCKET_LIST_PAGE_SIZE: PAGE_SIZE,
    PLATFORM_ADMIN_PASSWORD: 'admin-password-1',
  })
  afterAll(() => {
    server.child.kill()
  })
  const token = createTokenOnCommandLine(dataDir, 'admin')
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${server.base}${path}`, {
      method,
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })

  test("a service-account credential lists every bucket of the project across pages; the JWT was signed by the account's key", async () => {
    await call('POST', '/api/v1/user/credentials', {
      name: 'gcs',
      type: 'GoogleCloud',
      googleCloud: { projectID: project, serviceAccount: JSON.stringify(stub.serviceAccount) },
    })
    const res = await call('GET', '/api/v1/user/clouds/gcs/buckets?credential=gcs')
    expect(res.status).toBe(200)
    expect(await names(res)).toEqual(buckets)
    expect(stub.exchanges.at(-1)).toEqual({
      iss: stub.serviceAccount.client_email!,
      aud: `${stub.origin}/token`,
      scope: 'https://www.googleapis.com/auth/devstorage.read_only',
    })
  })

  test('cloud_project lists another project with the same account', async () => {
    await call('POST', '/api/v1/user/credentials', {
      name: 'gcs2',
      type: 'GoogleCloud',
      googleCloud: { projectID: project, serviceAccount: JSON.stringify(stub.serviceAccount) },
    })
    expect(await names(await call('POST', '/api/v1/user/clouds/gcp/buckets', { credential: 'gcs2', cloud_project: 'other' }))).toEqual([])
  })

  test("a key the stub does not trust → 502 naming Google, the stub's refusal reason, never the key", async () => {
    const { privateKey } = await import('jose').then((jose) => jose.generateKeyPair('RS256', { extractable: true }))
    const foreign = await import('jose').then((jose) => jose.exportPKCS8(privateKey))
    await call('POST', '/api/v1/user/credentials', {
      name: 'forged',
      type: 'GoogleCloud',
      googleCloud: { projectID: project, serviceAccount: JSON.stringify({ ...stub.serviceAccount, private_key: foreign }) },
    })
    const res = await call('GET', '/api/v1/user/clouds/gcs/buckets?credential=forged')
    expect(res.status).toBe(502)
    const body = await res.text()
    expect(body).toContain('Google OAuth')
    expect(body).not.toContain(foreign.split('\n')[1]!)
  })
})

describe("keys from a Secret in the caller's cluster (KubeStash key names)", async () => {
  const azurite = await startAzurite(CONTAINERS)
  const emulator = await startEmulator({ tls: true, seed: true })
  afterAll(() => emulator.stop())
  const connection = {
    server: emulator.url,
    caData: emulator.caCertPem!,
    tlsServerName: '',
    insecureSkipTlsVerify: false,
    credential: { token: emulator.token },
  }
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'blob-keys', namespace: 'default' },
    stringData: { AZURE_ACCOUNT_NAME: AZURITE_ACCOUNT.account, AZURE_ACCOUNT_KEY: AZURITE_ACCOUNT.key, AZURE_ENDPOINT: azurite.endpoint },
  }
  const created = await fetch(`${emulator.url}/api/v1/namespaces/default/secrets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${emulator.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      ...secret,
      stringData: undefined,
      data: Object.fromEntries(Object.entries(secret.stringData).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    }),
    tls: { ca: emulator.caCertPem },
  } as RequestInit)
  if (created.status !== 201) throw new Error(`creating the Secret: ${created.status}`)

  async function withCluster(): Promise<{ t: TestApp; ann: TestUser; bob: TestUser; uid: string }> {
    const setup = await lab()
    await registerSandbox(setup.t.deps, setup.ann.user, connection)
    const [cluster] = await (await setup.t.as(setup.ann).get('/api/v1/user/clusters')).json()
    return { ...setup, uid: cluster.uid as string }
  }

  /** `who` lists the buckets of `provider` with the keys of the Secret `default/secretName` on the cluster `uid`. */
  const bucketsFromSecret = (t: TestApp, who: TestUser, provider: string, secretName: string, uid: string) =>
    t
      .as(who)
      .send('POST', `/api/v1/user/clouds/${provider}/buckets`, { secret_namespace: 'default', secret_name: secretName, cluster_uid: uid })

  test("secret_namespace + secret_name + cluster_uid list the containers with the Secret's keys", async () => {
    const { t, ann, uid } = await withCluster()
    const res = await bucketsFromSecret(t, ann, 'azure', 'blob-keys', uid)
    expect(res.status).toBe(200)
    expect(await names(res)).toEqual(CONTAINERS)
  })

  test('a Secret missing a required key → 422 naming the key', async () => {
    const { t, ann, uid } = await withCluster()
    const res = await bucketsFromSecret(t, ann, 's3', 'blob-keys', uid)
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(BucketMessages.secretIncomplete('AWS_ACCESS_KEY_ID'))
  })

  test('a Secret that does not exist → 404', async () => {
    const { t, ann, uid } = await withCluster()
    const res = await bucketsFromSecret(t, ann, 'azure', 'nope', uid)
    expect(res.status).toBe(404)
  })

  test("another user naming ann's cluster uid → 404, the cluster is not asked", async () => {
    const { t, bob, uid } = await withCluster()
    const res = await bucketsFromSecret(t, bob, 'azure', 'blob-keys', uid)
    expect(res.status).toBe(404)
  })
})
