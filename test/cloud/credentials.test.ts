import { describe, expect, test } from 'bun:test'
import { Messages } from '../../src/cloud/service'
import { StoreMessages } from '../../src/cloud/store'
import { basic, makeTestApp, PASSWORD, type TestApp, type TestUser } from '../support/app'

const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'
const PRIVATE_KEY = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC-not-a-real-key\n-----END PRIVATE KEY-----\n'

const aws = (name: string, secretAccessKey: string | undefined = SECRET) => ({
  name,
  type: 'Aws',
  aws: { accessKeyID: 'AKIAEXAMPLE', secretAccessKey, region: 'eu-west-1' },
})

/** One valid body per type, each with a secret the tests look for in answers and logs. */
const SAMPLES: Record<string, { body: Record<string, unknown>; secrets: string[] }> = {
  Aws: { body: aws('aws1'), secrets: [SECRET] },
  GoogleCloud: {
    body: {
      name: 'gcp1',
      type: 'GoogleCloud',
      googleCloud: {
        projectID: 'proj',
        serviceAccount: JSON.stringify({
          type: 'service_account',
          client_email: 'sa@proj.iam.gserviceaccount.com',
          private_key: PRIVATE_KEY,
        }),
      },
    },
    secrets: ['not-a-real-key'],
  },
  Azure: {
    body: {
      name: 'az1',
      type: 'Azure',
      azure: { tenantID: 't', subscriptionID: 's', clientID: 'c', clientSecret: 'azure-client-secret-1' },
    },
    secrets: ['azure-client-secret-1'],
  },
  AzureStorage: {
    body: { name: 'azs1', type: 'AzureStorage', azureStorage: { account: 'acct', key: 'c3RvcmFnZS1rZXktc2VjcmV0' } },
    secrets: ['c3RvcmFnZS1rZXktc2VjcmV0'],
  },
  FleetManager: {
    body: {
      name: 'fm1',
      type: 'FleetManager',
      fleetmgr: { accessKeyID: 'fm-key', secretAccessKey: 'fleet-secret-1', endpoint: 'https://8.8.8.8/fleet' },
    },
    secrets: ['fleet-secret-1'],
  },
  DigitalOcean: { body: { name: 'do1', type: 'DigitalOcean', digitalocean: { token: 'do-token-secret' } }, secrets: ['do-token-secret'] },
  Linode: { body: { name: 'li1', type: 'Linode', linode: { token: 'linode-token-secret' } }, secrets: ['linode-token-secret'] },
  Vultr: { body: { name: 'vu1', type: 'Vultr', vultr: { token: 'vultr-token-secret' } }, secrets: ['vultr-token-secret'] },
}

async function setup(): Promise<{ t: TestApp; ann: TestUser; bob: TestUser }> {
  const t = await makeTestApp()
  const [ann, bob] = await t.users('ann', 'bob')
  return { t, ann: ann!, bob: bob! }
}

describe('cloud credentials', () => {
  for (const [type, sample] of Object.entries(SAMPLES))
    test(`${type}: create → 201; read back with every secret field "" and nothing secret anywhere in answers or logs`, async () => {
      const { t, ann } = await setup()
      const created = await t.as(ann).send('POST', '/api/v1/user/credentials', sample.body)
      expect(created.status).toBe(201)
      const one = await t.as(ann).get(`/api/v1/user/credentials/${sample.body.name}`)
      const oneText = await one.text()
      const listText = await (await t.as(ann).get('/api/v1/user/credentials')).text()
      const read = JSON.parse(oneText) as Record<string, unknown>
      expect(read).toMatchObject({ name: sample.body.name, type, ownerID: ann.user.id })
      expect(read.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
      for (const secret of sample.secrets) {
        expect(oneText).not.toContain(secret)
        expect(listText).not.toContain(secret)
        expect(t.logs.join('\n')).not.toContain(secret)
      }
    })

  test('secret fields come back as "" and the rest as sent', async () => {
    const { t, ann } = await setup()
    await t.as(ann).send('POST', '/api/v1/user/credentials', aws('a'))
    const read = await (await t.as(ann).get('/api/v1/user/credentials/a')).json()
    expect(read.aws).toEqual({ accessKeyID: 'AKIAEXAMPLE', secretAccessKey: '', region: 'eu-west-1' })
  })

  test('a service-account key file comes back whole but with private_key ""', async () => {
    const { t, ann } = await setup()
    await t.as(ann).send('POST', '/api/v1/user/credentials', SAMPLES.GoogleCloud!.body)
    const read = await (await t.as(ann).get('/api/v1/user/credentials/gcp1')).json()
    expect(JSON.parse(read.googleCloud.serviceAccount)).toEqual({
      type: 'service_account',
      client_email: 'sa@proj.iam.gserviceaccount.com',
      private_key: '',
    })
  })

  test('the database holds no secret in the clear', async () => {
    const { t, ann } = await setup()
    await t.as(ann).send('POST', '/api/v1/user/credentials', aws('a'))
    const rows = await t.deps.db.read.query.cloudCredentials.findMany()
    expect(JSON.stringify(rows)).not.toContain(SECRET)
  })

  test("a body's ownerID is ignored: the credential is the caller's", async () => {
    const { t, ann, bob } = await setup()
    expect((await t.as(ann).send('POST', '/api/v1/user/credentials', { ...aws('a'), ownerID: bob.user.id })).status).toBe(201)
    expect((await (await t.as(ann).get('/api/v1/user/credentials/a')).json()).ownerID).toBe(ann.user.id)
    expect((await t.as(bob).get('/api/v1/user/credentials/a')).status).toBe(404)
  })

  test('a second credential with the same name → 409', async () => {
    const { t, ann } = await setup()
    await t.as(ann).send('POST', '/api/v1/user/credentials', aws('a'))
    const res = await t.as(ann).send('POST', '/api/v1/user/credentials', aws('a'))
    expect(res.status).toBe(409)
    expect((await res.json()).message).toBe(StoreMessages.nameTaken)
  })

  test('two users may each have a credential of the same name', async () => {
    const { t, ann, bob } = await setup()
    expect((await t.as(ann).send('POST', '/api/v1/user/credentials', aws('a'))).status).toBe(201)
    expect((await t.as(bob).send('POST', '/api/v1/user/credentials', aws('a'))).status).toBe(201)
  })

  test('a missing required field → 422 naming it, nothing stored', async () => {
    const { t, ann } = await setup()
    const res = await t
      .as(ann)
      .send('POST', '/api/v1/user/credentials', { name: 'a', type: 'Azure', azure: { tenantID: 't', clientID: 'c', clientSecret: 'x' } })
    expect(res.status).toBe(422)
    expect((await res.json()).errors).toEqual([{ field: 'azure.subscriptionID', message: Messages.missingField }])
    expect(await (await t.as(ann).get('/api/v1/user/credentials')).json()).toEqual([])
  })

  test('a type without its block → 422 naming the block', async () => {
    const { t, ann } = await setup()
    const res = await t.as(ann).send('POST', '/api/v1/user/credentials', { name: 'a', type: 'Linode', vultr: { token: 'x' } })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(Messages.missingBlock('linode', 'Linode'))
  })

  test('an unknown type → 422 listing the types', async () => {
    const { t, ann } = await setup()
    const res = await t.as(ann).send('POST', '/api/v1/user/credentials', { name: 'a', type: 'Rancher', rancher: {} })
    expect(res.status).toBe(422)
    expect(JSON.stringify(await res.json())).toContain('Aws')
  })

  test('a service account that is not a key file → 422 on googleCloud.serviceAccount', async () => {
    const { t, ann } = await setup()
    const res = await t.as(ann).send('POST', '/api/v1/user/credentials', {
      name: 'g',
      type: 'GoogleCloud',
      googleCloud: { projectID: 'p', serviceAccount: 'not json' },
    })
    expect(res.status).toBe(422)
    expect((await res.json()).errors[0].field).toBe('googleCloud.serviceAccount')
  })

  test('an S3 endpoint on the metadata address → 422, nothing stored', async () => {
    const { t, ann } = await setup()
    const res = await t.as(ann).send('POST', '/api/v1/user/credentials', {
      name: 'm',
      type: 'Aws',
      aws: { accessKeyID: 'k', secretAccessKey: 's', endpoint: 'http://169.254.169.254/' },
    })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('metadata')
    expect((await t.as(ann).get('/api/v1/user/credentials/m')).status).toBe(404)
  })

  test('a loopback endpoint is refused by default and accepted when private endpoints are allowed', async () => {
    const body = { name: 'minio', type: 'Aws', aws: { accessKeyID: 'k', secretAccessKey: 's', endpoint: 'http://127.0.0.1:9000' } }
    const strict = await setup()
    expect((await strict.t.as(strict.ann).send('POST', '/api/v1/user/credentials', body)).status).toBe(422)
    const lab = await makeTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })
    const [ann] = await lab.users('ann')
    expect((await lab.as(ann!).send('POST', '/api/v1/user/credentials', body)).status).toBe(201)
  })

  test('PUT with the secret empty keeps the stored secret and changes the rest', async () => {
    const { t, ann } = await setup()
    await t.as(ann).send('POST', '/api/v1/user/credentials', aws('a'))
    const put = await t.as(ann).send('PUT', '/api/v1/user/credentials/', {
      name: 'a',
      type: 'Aws',
      aws: { accessKeyID: 'AKIANEW', secretAccessKey: '', region: 'us-east-2' },
    })
    expect(put.status).toBe(204)
    expect((await (await t.as(ann).get('/api/v1/user/credentials/a')).json()).aws).toEqual({
      accessKeyID: 'AKIANEW',
      secretAccessKey: '',
      region: 'us-east-2',
    })
    const row = await t.deps.db.read.query.cloudCredentials.findFirst()
    expect(JSON.parse(await t.deps.secrets.open(row!.sealedSecrets))).toEqual({ secretAccessKey: SECRET })
  })

  test('PUT with a new secret replaces it', async () => {
    const { t, ann } = await setup()
    await t.as(ann).send('POST', '/api/v1/user/credentials', aws('a'))
    await t.as(ann).send('PUT', '/api/v1/user/credentials/', aws('a', 'new-secret'))
    const row = await t.deps.db.read.query.cloudCredentials.findFirst()
    expect(JSON.parse(await t.deps.secrets.open(row!.sealedSecrets))).toEqual({ secretAccessKey: 'new-secret' })
  })

  test('PUT of a key file with private_key "" keeps the stored private key', async () => {
    const { t, ann } = await setup()
    await t.as(ann).send('POST', '/api/v1/user/credentials', SAMPLES.GoogleCloud!.body)
    const read = await (await t.as(ann).get('/api/v1/user/credentials/gcp1')).json()
    expect(
      (
        await t.as(ann).send('PUT', '/api/v1/user/credentials/', {
          name: 'gcp1',
          type: 'GoogleCloud',
          googleCloud: { ...read.googleCloud, projectID: 'proj2' },
        })
      ).status,
    ).toBe(204)
    const row = await t.deps.db.read.query.cloudCredentials.findFirst()
    expect(JSON.parse(await t.deps.secrets.open(row!.sealedSecrets))).toEqual({ serviceAccount: PRIVATE_KEY })
  })

  test("PUT changing the type without the new type's secret → 422", async () => {
    const { t, ann } = await setup()
    await t.as(ann).send('POST', '/api/v1/user/credentials', aws('a'))
    const res = await t.as(ann).send('PUT', '/api/v1/user/credentials/', { name: 'a', type: 'Linode', linode: { token: '' } })
    expect(res.status).toBe(422)
  })

  test('PUT of a name the caller does not have → 404', async () => {
    const { t, ann } = await setup()
    expect((await t.as(ann).send('PUT', '/api/v1/user/credentials/', aws('ghost'))).status).toBe(404)
  })

  test('delete → 204, then 404', async () => {
    const { t, ann } = await setup()
    await t.as(ann).send('POST', '/api/v1/user/credentials', aws('a'))
    expect((await t.as(ann).delete('/api/v1/user/credentials/a')).status).toBe(204)
    expect((await t.as(ann).get('/api/v1/user/credentials/a')).status).toBe(404)
    expect((await t.as(ann).delete('/api/v1/user/credentials/a')).status).toBe(404)
  })

  test("another user can neither read, replace nor delete ann's credential (404) and does not see it listed", async () => {
    const { t, ann, bob } = await setup()
    await t.as(ann).send('POST', '/api/v1/user/credentials', aws('a'))
    expect((await t.as(bob).get('/api/v1/user/credentials/a')).status).toBe(404)
    expect((await t.as(bob).send('PUT', '/api/v1/user/credentials/', aws('a', 'hijack'))).status).toBe(404)
    expect((await t.as(bob).delete('/api/v1/user/credentials/a')).status).toBe(404)
    expect(await (await t.as(bob).get('/api/v1/user/credentials')).json()).toEqual([])
    const row = await t.deps.db.read.query.cloudCredentials.findFirst()
    expect(JSON.parse(await t.deps.secrets.open(row!.sealedSecrets))).toEqual({ secretAccessKey: SECRET })
  })

  test('credential_type (repeatable) and fleetmgr_endpoint filter the list', async () => {
    const { t, ann } = await setup()
    for (const sample of Object.values(SAMPLES)) await t.as(ann).send('POST', '/api/v1/user/credentials', sample.body)
    await t.as(ann).send('POST', '/api/v1/user/credentials', {
      name: 'fm2',
      type: 'FleetManager',
      fleetmgr: { accessKeyID: 'k', secretAccessKey: 's', endpoint: 'https://1.1.1.1/other' },
    })
    const names = async (query: string) =>
      ((await (await t.as(ann).get(`/api/v1/user/credentials${query}`)).json()) as { name: string }[]).map((c) => c.name)
    expect(await names('?credential_type=Linode&credential_type=Vultr')).toEqual(['li1', 'vu1'])
    expect(await names('?credential_type=Aws')).toEqual(['aws1'])
    expect(await names('?fleetmgr_endpoint=https://8.8.8.8/fleet')).toEqual(['fm1'])
    expect(await names('')).toHaveLength(9)
  })

  test('anonymous → 401; a token without the user scope → 403', async () => {
    const { t } = await setup()
    expect((await t.request('GET', '/api/v1/user/credentials')).status).toBe(401)
    const minted = await t.request('POST', '/api/v1/users/ann/tokens', {
      body: { name: 'ro', scopes: ['read:organization'] },
      headers: { authorization: basic('ann', PASSWORD) },
    })
    const token = (await minted.json()).sha1 as string
    expect((await t.request('GET', '/api/v1/user/credentials', { token })).status).toBe(403)
  })
})
