import { afterAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import YAML from 'yaml'
import { AccessMessages } from '../../src/clusters/access'
import { Messages } from '../../src/clusters/service'
import { StoreMessages } from '../../src/clusters/store'
import { startEmulator } from '../../src/kube-emulator'
import { makeOrg } from '../orgs/support'
import { makeTestApp, type TestUser, tempDir } from '../support/app'
import { MAIN } from '../support/process'
import { clusterLab, importAs, importBody, importedCluster } from './support'

// A second cluster beside the sandbox: bearer tokens over TLS; and one that wants client certificates.
const member = await startEmulator({ tls: true, seed: true })
const mtls = await startEmulator({ tls: true, seed: true, clientCertificates: true })
afterAll(async () => {
  await member.stop()
  await mtls.stop()
})

const b64 = (text: string) => Buffer.from(text).toString('base64')
const kubeGet = async (emulator: typeof member, path: string) =>
  (
    await fetch(`${emulator.url}${path}`, {
      headers: { authorization: `Bearer ${emulator.token}` },
      tls: { ca: emulator.caCertPem },
    } as RequestInit)
  ).json()
const kubeSystemUid = async (emulator: typeof member) =>
  ((await kubeGet(emulator, '/api/v1/namespaces/kube-system')) as { metadata: { uid: string } }).metadata.uid

/** A kubeconfig with two contexts: `other` (a dead server) is current, `member` reaches the emulator. */
const kubeconfig = (user: Record<string, string>, server = member.url, ca = member.caCertPem!) =>
  YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'other',
    clusters: [
      { name: 'm', cluster: { server, 'certificate-authority-data': b64(ca) } },
      { name: 'o', cluster: { server: 'https://127.0.0.1:1' } },
    ],
    users: [{ name: 'u', user }],
    contexts: [
      { name: 'member', context: { cluster: 'm', user: 'u' } },
      { name: 'other', context: { cluster: 'o', user: 'u' } },
    ],
  })

describe('POST /clustersv2/{owner}/import', () => {
  test('a kubeconfig context with a bearer token → 201 ClusterInfo as the cluster reports it; uid = kube-system uid', async () => {
    const { t, alice } = await clusterLab()
    const res = await importAs(t, alice, 'alice', {
      name: 'dev',
      displayName: 'Dev cluster',
      kubeconfig: kubeconfig({ token: member.token }),
      context: 'member',
    })
    expect(res.status).toBe(201)
    const info = await res.json()
    const version = (await kubeGet(member, '/version')) as { gitVersion: string }
    const nodes = (await kubeGet(member, '/api/v1/nodes')) as { items: unknown[] }
    expect(info).toMatchObject({
      name: 'dev',
      displayName: 'Dev cluster',
      ownerName: 'alice',
      ownerID: alice.user.id,
      endpoint: member.url,
      uid: await kubeSystemUid(member),
      kubernetesVersion: version.gitVersion,
      nodeCount: nodes.items.length,
      status: { phase: 'Active' },
    })
    expect(info.status.lastProbeTime).toMatch(/Z$/)
  })

  test('a kubeconfig in JSON is read too', async () => {
    const { t, alice } = await clusterLab()
    const json = JSON.stringify(YAML.parse(kubeconfig({ token: member.token })))
    expect((await importAs(t, alice, 'alice', { name: 'dev', kubeconfig: json, context: 'member' })).status).toBe(201)
  })

  test('explicit fields with a bearer token → 201', async () => {
    const { t, alice } = await clusterLab()
    const res = await importAs(t, alice, 'alice', importBody(member, 'dev'))
    expect(res.status).toBe(201)
  })

  test("explicit fields with a client certificate (mutual TLS) → 201 with that cluster's uid", async () => {
    const { t, alice } = await clusterLab()
    const res = await importAs(t, alice, 'alice', {
      name: 'secure',
      server: mtls.url,
      caData: b64(mtls.caCertPem!),
      clientCertificate: b64(mtls.clientCertPem!),
      clientKey: b64(mtls.clientKeyPem!),
    })
    expect(res.status).toBe(201)
    const uid = (
      (await (
        await fetch(`${mtls.url}/api/v1/namespaces/kube-system`, {
          tls: { ca: mtls.caCertPem, cert: mtls.clientCertPem, key: mtls.clientKeyPem },
        } as RequestInit)
      ).json()) as { metadata: { uid: string } }
    ).metadata.uid
    expect((await res.json()).uid).toBe(uid)
  })

  test('a kubeconfig with client-certificate-data → 201', async () => {
    const { t, alice } = await clusterLab()
    const text = kubeconfig(
      { 'client-certificate-data': b64(mtls.clientCertPem!), 'client-key-data': b64(mtls.clientKeyPem!) },
      mtls.url,
      mtls.caCertPem!,
    )
    expect((await importAs(t, alice, 'alice', { name: 'secure', kubeconfig: text, context: 'member' })).status).toBe(201)
  })

  test('a name the owner already uses → 409; the same cluster under another name → 409', async () => {
    const { t, alice } = await clusterLab()
    const body = importBody(member, 'dev')
    await importAs(t, alice, 'alice', body)
    const sameName = await importAs(t, alice, 'alice', body)
    expect(sameName.status).toBe(409)
    expect((await sameName.json()).message).toBe(StoreMessages.nameTaken)
    const sameCluster = await importAs(t, alice, 'alice', { ...body, name: 'dev2' })
    expect(sameCluster.status).toBe(409)
    expect((await sameCluster.json()).message).toBe(StoreMessages.uidTaken)
  })

  test('two owners may each register the same cluster', async () => {
    const { t, alice, bob } = await clusterLab()
    const body = importBody(member, 'dev')
    expect((await importAs(t, alice, 'alice', body)).status).toBe(201)
    expect((await importAs(t, bob, 'bob', body)).status).toBe(201)
  })

  test('an invalid name → 422', async () => {
    const { t, alice } = await clusterLab()
    expect((await importAs(t, alice, 'alice', { name: 'no spaces', server: member.url, token: member.token })).status).toBe(422)
  })

  test('a refused connection → 422 saying so', async () => {
    const { t, alice } = await clusterLab()
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
    const server = `https://127.0.0.1:${closed.port}`
    closed.stop(true)
    const res = await importAs(t, alice, 'alice', { name: 'dev', server, token: 'x' })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('refused the connection')
  })

  test('a host name that does not resolve → 422 naming DNS', async () => {
    const { t, alice } = await clusterLab()
    const res = await importAs(t, alice, 'alice', { name: 'dev', server: 'https://no-such-cluster.invalid:6443', token: 'x' })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('DNS')
  })

  test("the wrong certificate authority → 422 naming the certificate's subject and issuer", async () => {
    const { t, alice } = await clusterLab()
    const res = await importAs(t, alice, 'alice', { ...importBody(member, 'dev'), caData: b64(mtls.caCertPem!) })
    expect(res.status).toBe(422)
    const { message } = await res.json()
    expect(message).toContain('certificate authority did not sign')
    expect(message).toContain('CN=kube-apiserver')
    expect(message).toContain('CN=emulator-ca')
  })

  test('a token the cluster refuses → 422 naming the 401', async () => {
    const { t, alice } = await clusterLab()
    const res = await importAs(t, alice, 'alice', { ...importBody(member, 'dev'), token: 'not-a-valid-token' })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('401')
  })

  test('a server that accepts and never answers → 422 (no answer in time), not a hang', async () => {
    const { t, alice } = await clusterLab()
    const silent = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    try {
      const res = await importAs(t, alice, 'alice', { name: 'dev', server: `https://127.0.0.1:${silent.port}`, token: 'x' })
      expect(res.status).toBe(422)
      expect((await res.json()).message).toContain('did not answer in time')
    } finally {
      silent.stop(true)
    }
  }, 15_000)

  for (const server of [
    'https://169.254.169.254',
    'https://2852039166',
    'https://0xa9fea9fe',
    'https://[::ffff:169.254.169.254]',
    'https://[fd00:ec2::254]',
    'https://metadata.google.internal',
  ])
    test(`a server at the metadata address ${server} → 422 even where private endpoints are allowed`, async () => {
      const { t, alice } = await clusterLab()
      const res = await importAs(t, alice, 'alice', { name: 'dev', server, token: 'x' })
      expect(res.status).toBe(422)
      expect((await res.json()).message).toContain('metadata')
    })

  test('a loopback server under the default policy → 422 naming the setting', async () => {
    const { t, alice } = await clusterLab({})
    const res = await importAs(t, alice, 'alice', { name: 'dev', server: member.url, token: member.token })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('PLATFORM_ALLOW_PRIVATE_ENDPOINTS')
  })

  test('an exec plugin in the kubeconfig → 422', async () => {
    const { t, alice } = await clusterLab()
    const text = YAML.stringify({ ...YAML.parse(kubeconfig({ token: 'x' })), users: [{ name: 'u', user: { exec: { command: 'aws' } } }] })
    expect((await importAs(t, alice, 'alice', { name: 'dev', kubeconfig: text, context: 'member' })).status).toBe(422)
  })

  test('importing for another user → 404; for an org: its owners and admins only', async () => {
    const { t, alice, bob } = await clusterLab()
    const [adam, mia] = await t.users('adam', 'mia')
    await makeOrg(t, 'acme', { owner: alice, admins: [adam!], members: [mia!] })
    expect((await importAs(t, bob, 'alice', importBody(member, 'x'))).status).toBe(404)
    expect((await importAs(t, mia!, 'acme', importBody(member, 'x'))).status).toBe(404)
    expect((await importAs(t, adam!, 'acme', importBody(member, 'prod'))).status).toBe(201)
  })

  test('the token is never in an answer or a log line, and only sealed in the database', async () => {
    const { t, alice } = await clusterLab()
    const bodies: string[] = []
    const keep = async (res: Response) => {
      bodies.push(await res.text())
    }
    await keep(await importAs(t, alice, 'alice', { name: 'dev', kubeconfig: kubeconfig({ token: member.token }), context: 'member' }))
    await keep(await importAs(t, alice, 'alice', { name: 'dev', server: member.url, token: member.token }))
    await keep(await importAs(t, alice, 'alice', { ...importBody(member, 'bad'), token: `${member.token}x` }))
    await keep(await t.as(alice).get('/api/v1/clustersv2/alice'))
    await keep(await t.as(alice).get('/api/v1/clustersv2/alice/dev'))
    await keep(await t.as(alice).get('/api/v1/user/clusters'))
    for (const text of [...bodies, t.logs.join('\n')]) expect(text).not.toContain(member.token)
    const rows = await t.deps.db.read.query.clusters.findMany()
    expect(JSON.stringify(rows)).not.toContain(member.token)
  })
})

describe('registry routes', () => {
  const withCluster = () => importedCluster(member)

  test('another user gets 404 on every route that names the cluster', async () => {
    const { t, bob } = await withCluster()
    for (const [method, path, body] of [
      ['GET', '/api/v1/clustersv2/alice'],
      ['GET', '/api/v1/clustersv2/alice/dev'],
      ['PATCH', '/api/v1/clustersv2/alice/dev', { displayName: 'x' }],
      ['DELETE', '/api/v1/clustersv2/alice/dev'],
      ['GET', '/api/v1/clustersv2/alice/dev/kubeconfig'],
      ['GET', '/api/v1/clustersv2/alice/ghost'],
    ] as [string, string, unknown?][]) {
      const res = await t.as(bob).send(method, path, body)
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 404`)
    }
    expect((await t.as(bob).get('/api/v1/user/clusters?all=true')).status).toBe(200)
    expect(await (await t.as(bob).get('/api/v1/user/clusters?all=true')).json()).toEqual([])
  })

  test('PATCH renames the display name', async () => {
    const { t, alice } = await withCluster()
    const res = await t.as(alice).send('PATCH', '/api/v1/clustersv2/alice/dev', { displayName: 'Development' })
    expect(res.status).toBe(200)
    expect((await res.json()).displayName).toBe('Development')
  })

  test('PATCH with a body that changes nothing → 200 with the registration as it is (found by the fuzz pass)', async () => {
    const { t, alice } = await withCluster()
    const before = await (await t.as(alice).get('/api/v1/clustersv2/alice/dev')).json()
    const res = await t.as(alice).send('PATCH', '/api/v1/clustersv2/alice/dev', {})
    expect(res.status).toBe(200)
    expect((await res.json()).displayName).toBe(before.displayName)
  })

  test('PATCH rotating to a refused token → 422 and the old credential stays', async () => {
    const { t, alice } = await withCluster()
    const res = await t
      .as(alice)
      .send('PATCH', '/api/v1/clustersv2/alice/dev', { server: member.url, caData: b64(member.caCertPem!), token: 'revoked' })
    expect(res.status).toBe(422)
    const row = await t.deps.db.read.query.clusters.findFirst()
    expect(JSON.parse(await t.deps.secrets.open(row!.sealedCredential))).toEqual({ token: member.token })
  })

  test('PATCH rotating to a connection that reaches another cluster → 422', async () => {
    const { t, alice } = await withCluster()
    const res = await t.as(alice).send('PATCH', '/api/v1/clustersv2/alice/dev', {
      server: mtls.url,
      caData: b64(mtls.caCertPem!),
      clientCertificate: b64(mtls.clientCertPem!),
      clientKey: b64(mtls.clientKeyPem!),
    })
    expect(res.status).toBe(422)
    expect((await res.json()).message).toBe(Messages.otherCluster)
  })

  test('PATCH rotating to another valid credential of the same cluster → 200', async () => {
    const { t, alice } = await withCluster()
    const text = kubeconfig({ token: member.token })
    expect((await t.as(alice).send('PATCH', '/api/v1/clustersv2/alice/dev', { kubeconfig: text, context: 'member' })).status).toBe(200)
  })

  test('DELETE → 204, then 404', async () => {
    const { t, alice } = await withCluster()
    expect((await t.as(alice).delete('/api/v1/clustersv2/alice/dev')).status).toBe(204)
    expect((await t.as(alice).get('/api/v1/clustersv2/alice/dev')).status).toBe(404)
  })

  test('the kubeconfig parses with kubectl config view and names the passthrough URL and a working write:cluster token', async () => {
    const { t, alice } = await withCluster()
    const res = await t.as(alice).get('/api/v1/clustersv2/alice/dev/kubeconfig')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/yaml')
    expect(res.headers.get('cache-control')).toBe('no-store')
    const file = join(tempDir(), 'kubeconfig')
    writeFileSync(file, await res.text())
    const view = Bun.spawnSync([t.config.kubectlPath, 'config', 'view', '--raw', '-o', 'json', '--kubeconfig', file])
    expect(view.exitCode).toBe(0)
    const config = JSON.parse(view.stdout.toString())
    expect(config.clusters[0].cluster.server).toBe(`${t.config.publicUrl}/api/v1/clusters/alice/dev/k8s`)
    const token = config.users[0].user.token as string
    expect((await t.request('GET', '/api/v1/clustersv2/alice/dev', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    const tokens = (await (await t.as(alice).get('/api/v1/user/settings/tokens/access-tokens/')).json()) as {
      name: string
      scopes: string[]
    }[]
    expect(tokens.find((k) => k.name === 'kubeconfig-alice-dev')?.scopes).toEqual(['write:cluster'])
  })
})

describe('team grants', () => {
  async function orgLab() {
    const l = await clusterLab()
    const [rita, will, nora] = await l.t.users('rita', 'will', 'nora')
    const org = await makeOrg(l.t, 'acme', { owner: l.alice, members: [nora!] })
    const team = async (name: string, permission: string, who: TestUser) => {
      const created = await (await l.t.as(l.alice).send('POST', '/api/v1/orgs/acme/teams', { name, permission })).json()
      await l.t.as(l.alice).send('PUT', `/api/v1/teams/${created.id}/members/${who.name}`)
      return created.id as number
    }
    const readers = await team('readers', 'read', rita!)
    const writers = await team('writers', 'write', will!)
    expect((await importAs(l.t, l.alice, 'acme', importBody(member, 'prod'))).status).toBe(201)
    return { ...l, org, rita: rita!, will: will!, nora: nora!, readers, writers }
  }

  test('granted teams see the cluster; a member of no granted team gets 404', async () => {
    const l = await orgLab()
    expect((await l.t.as(l.alice).send('PUT', `/api/v1/teams/${l.readers}/clusters/prod`)).status).toBe(204)
    expect((await l.t.as(l.rita).get('/api/v1/clustersv2/acme/prod')).status).toBe(200)
    expect((await l.t.as(l.nora).get('/api/v1/clustersv2/acme/prod')).status).toBe(404)
    const granted = (await (await l.t.as(l.alice).get(`/api/v1/teams/${l.readers}/clusters`)).json()) as { name: string }[]
    expect(granted.map((c) => c.name)).toEqual(['prod'])
    const mine = (await (await l.t.as(l.rita).get('/api/v1/user/clusters?all=true')).json()) as { name: string }[]
    expect(mine.map((c) => c.name)).toEqual(['prod'])
  })

  test('a read team member cannot get a write kubeconfig (403) but can get a read-only one', async () => {
    const l = await orgLab()
    await l.t.as(l.alice).send('PUT', `/api/v1/teams/${l.readers}/clusters/prod`)
    const write = await l.t.as(l.rita).get('/api/v1/clustersv2/acme/prod/kubeconfig')
    expect(write.status).toBe(403)
    expect((await write.json()).message).toBe(AccessMessages.needsWrite)
    const readonly = await l.t.as(l.rita).get('/api/v1/clustersv2/acme/prod/kubeconfig?readonly=true')
    expect(readonly.status).toBe(200)
    expect(await readonly.text()).toContain('token:')
  })

  test('a write team member gets a write kubeconfig but may not change or remove the cluster (403)', async () => {
    const l = await orgLab()
    await l.t.as(l.alice).send('PUT', `/api/v1/teams/${l.writers}/clusters/prod`)
    expect((await l.t.as(l.will).get('/api/v1/clustersv2/acme/prod/kubeconfig')).status).toBe(200)
    expect((await l.t.as(l.will).send('PATCH', '/api/v1/clustersv2/acme/prod', { displayName: 'x' })).status).toBe(403)
    expect((await l.t.as(l.will).delete('/api/v1/clustersv2/acme/prod')).status).toBe(403)
  })

  test('revoking the grant takes the access away; only admin:org may grant', async () => {
    const l = await orgLab()
    await l.t.as(l.alice).send('PUT', `/api/v1/teams/${l.readers}/clusters/prod`)
    expect((await l.t.as(l.rita).send('PUT', `/api/v1/teams/${l.writers}/clusters/prod`)).status).toBe(403)
    expect((await l.t.as(l.alice).delete(`/api/v1/teams/${l.readers}/clusters/prod`)).status).toBe(204)
    expect((await l.t.as(l.rita).get('/api/v1/clustersv2/acme/prod')).status).toBe(404)
  })

  test("a cluster that is not the org's cannot be granted (404)", async () => {
    const l = await orgLab()
    await importAs(l.t, l.alice, 'alice', importBody(member, 'personal'))
    expect((await l.t.as(l.alice).send('PUT', `/api/v1/teams/${l.readers}/clusters/personal`)).status).toBe(404)
  })
})

describe('cached health probes', () => {
  test('a cluster that accepts and never answers is Unknown in the list, probed once across lists, and does not hold up the live one', async () => {
    const { t, alice } = await clusterLab()
    let connections = 0
    const silent = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        open() {
          connections++
        },
        data() {},
      },
    })
    try {
      await importAs(t, alice, 'alice', importBody(member, 'live'))
      const { registrationFixture } = await import('./support')
      await registrationFixture(t, alice.user, 'silent', {
        server: `https://127.0.0.1:${silent.port}`,
        caData: '',
        tlsServerName: '',
        insecureSkipTlsVerify: false,
        credential: { token: 'x' },
      })
      const first = (await (await t.as(alice).get('/api/v1/user/clusters')).json()) as { name: string; status: { phase: string } }[]
      expect(Object.fromEntries(first.map((c) => [c.name, c.status.phase]))).toEqual({ live: 'Active', silent: 'Unknown' })
      const opened = connections
      await t.as(alice).get('/api/v1/user/clusters')
      expect(connections).toBe(opened)
    } finally {
      silent.stop(true)
    }
  })
})

describe('the cluster command line', () => {
  const run = async (dataDir: string, ...args: string[]) => {
    const child = Bun.spawn([process.execPath, MAIN, ...args], {
      env: { ...process.env, PLATFORM_DATA_DIR: dataDir, PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true', PLATFORM_REQUEST_LOG: 'false' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
    return { out, err, code }
  }

  test('import from a kubeconfig file, list, remove', async () => {
    const dataDir = tempDir()
    expect((await run(dataDir, 'admin', 'create-user', '--username', 'root', '--email', 'root@example.com', '--admin')).code).toBe(0)
    const file = join(dataDir, 'member.kubeconfig')
    writeFileSync(file, kubeconfig({ token: member.token }))
    const imported = await run(
      dataDir,
      'cluster',
      'import',
      '--owner',
      'root',
      '--name',
      'dev',
      '--kubeconfig',
      file,
      '--context',
      'member',
    )
    expect(imported.code).toBe(0)
    expect(imported.out).toContain(`registered root/dev (uid ${await kubeSystemUid(member)}`)
    const listed = await run(dataDir, 'cluster', 'list')
    expect(listed.out).toMatch(/OWNER\s+NAME\s+UID/)
    expect(listed.out).toMatch(/root\s+dev\s+\S+\s+https:\/\/127\.0\.0\.1:\d+\s+Active/)
    expect((await run(dataDir, 'cluster', 'remove', '--owner', 'root', '--name', 'dev')).code).toBe(0)
    expect((await run(dataDir, 'cluster', 'list')).out).not.toContain('dev')
    // Each change leaves a cli event (docs/decisions.md §8) naming the cluster.
    const t = await makeTestApp({ PLATFORM_DATA_DIR: dataDir })
    const rows = await t.deps.db.read.query.auditEvents.findMany({ where: (e, { eq }) => eq(e.kind, 'cli') })
    expect(rows.map((e) => [e.command, e.target, e.cluster, e.credentialKind])).toEqual([
      ['"admin create-user"', '{"username":"root"}', null, 'cli'],
      ['"cluster import"', '{"cluster":"root/dev"}', 'root/dev', 'cli'],
      ['"cluster remove"', '{"cluster":"root/dev"}', 'root/dev', 'cli'],
    ])
  }, 30_000)

  test('an import the cluster refuses exits 1 with the reason, no stack trace', async () => {
    const dataDir = tempDir()
    await run(dataDir, 'admin', 'create-user', '--username', 'root', '--email', 'root@example.com', '--admin')
    const file = join(dataDir, 'bad.kubeconfig')
    writeFileSync(file, kubeconfig({ token: 'wrong-token' }))
    const result = await run(dataDir, 'cluster', 'import', '--owner', 'root', '--name', 'dev', '--kubeconfig', file, '--context', 'member')
    expect(result.code).toBe(1)
    expect(result.err).toContain('401')
    expect(result.err).not.toContain('    at ')
  }, 30_000)
})
