import { afterEach, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import packageJson from '../../package.json'
import { agentManifest } from '../../src/clusters/agent/manifest'
import { ConfigError, loadConfig } from '../../src/config'
import { scratch, stopAll, withKubectl } from '../kube-emulator/fixtures'

/** The agent manifest (docs/agents.md): what `kubectl apply -f` installs in a cluster. */

afterEach(stopAll)

const IMAGE = 'ghcr.io/platform-api/platform-api:0.1.0'
const INPUT = { publicUrl: 'https://platform.example.com', token: 'pat-agent-0123456789abcdef', image: IMAGE }
const CA_FILE = '/etc/platform-agent/ca.crt'

/** The manifest's documents as plain objects, read by `yaml` as any YAML reader would. */
function objectsOf(manifest: string): any[] {
  const docs = parseAllDocuments(manifest)
  for (const doc of docs) expect(doc.errors).toEqual([])
  return docs.map((doc) => doc.toJS())
}

const byKind = (objects: any[], kind: string) => objects.find((o) => o.kind === kind)
const agentContainer = (objects: any[]) => byKind(objects, 'Deployment').spec.template.spec.containers[0]

/** Values that break naive YAML: quotes, line breaks, `: ` and `#`, flow and block indicators, and words YAML 1.1 reads as booleans, numbers or null. */
const HOSTILE = [
  `a"b'c\\d`,
  'line one\nline two\r\n',
  'key: value # not a comment',
  '- item',
  '{a: 1, b: [2]}',
  '&anchor *alias !tag %directive @at `tick` | > ---  ...',
  '  leading and trailing  ',
  'yes',
  'on',
  'N',
  '0o12',
  '1_000',
  '2001-12-14',
  '~',
  'null',
  '',
  'tab\there',
  'controls \u0000\u0007\u001b\u007f\u0085\u009f',
  'separators \u2028\u2029 bom \ufeff',
  'accents é ü and an emoji 😀',
]

describe('agentManifest: the objects', () => {
  test('Namespace, ServiceAccount, ClusterRoleBinding to cluster-admin, Secret and Deployment, all named platform-agent and labelled', () => {
    const objects = objectsOf(agentManifest(INPUT))
    expect(objects.map((o) => `${o.apiVersion} ${o.kind}`)).toEqual([
      'v1 Namespace',
      'v1 ServiceAccount',
      'rbac.authorization.k8s.io/v1 ClusterRoleBinding',
      'v1 Secret',
      'apps/v1 Deployment',
    ])
    for (const object of objects) {
      expect(object.metadata.name).toBe('platform-agent')
      expect(object.metadata.labels).toMatchObject({
        'app.kubernetes.io/name': 'platform-agent',
        'app.kubernetes.io/part-of': 'platform-api',
      })
      expect(Object.keys(object.metadata.labels)).toHaveLength(object.kind === 'Namespace' ? 3 : 2)
      const namespaced = !['Namespace', 'ClusterRoleBinding'].includes(object.kind)
      expect(object.metadata.namespace).toBe(namespaced ? 'platform-agent' : undefined)
    }
    expect(byKind(objects, 'Namespace').metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted')
    expect(byKind(objects, 'ClusterRoleBinding')).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'platform-agent', namespace: 'platform-agent' }],
    })
  })

  test('the Deployment: 2 agents of the image, the service account mounted, the token from the Secret in the environment, hardened', () => {
    const objects = objectsOf(agentManifest(INPUT))
    const deployment = byKind(objects, 'Deployment')
    expect(deployment.spec.replicas).toBe(2)
    expect(deployment.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'platform-agent' })
    expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels)
    const pod = deployment.spec.template.spec
    expect(pod.serviceAccountName).toBe('platform-agent')
    expect(pod.automountServiceAccountToken).toBe(true)
    const container = agentContainer(objects)
    expect(container.image).toBe(IMAGE)
    expect(container.args).toEqual(['agent', '--server', INPUT.publicUrl])
    expect(container.env).toEqual([{ name: 'PLATFORM_AGENT_TOKEN', valueFrom: { secretKeyRef: { name: 'platform-agent', key: 'token' } } }])
    expect(container.volumeMounts).toContainEqual({ name: 'secret', mountPath: '/etc/platform-agent', readOnly: true })
    expect(pod.volumes).toContainEqual({ name: 'secret', secret: { secretName: 'platform-agent' } })
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    })
    expect(Object.keys(container.resources).sort()).toEqual(['limits', 'requests'])
    // The token is in the Secret only: not on a command line, not in the Deployment.
    expect(JSON.stringify(deployment)).not.toContain(INPUT.token)
  })

  test("the pod template carries the Secret's digest: a rotated token or another CA changes it, so a new apply restarts the agents", () => {
    const digest = (input: Parameters<typeof agentManifest>[0]) =>
      byKind(objectsOf(agentManifest(input)), 'Deployment').spec.template.metadata.annotations['platform-agent/secret-sha256']
    expect(digest(INPUT)).toMatch(/^[0-9a-f]{64}$/)
    expect(digest({ ...INPUT })).toBe(digest(INPUT))
    const others = [
      { ...INPUT, token: 'pat-agent-rotated' },
      { ...INPUT, caPem: 'a CA' },
      { ...INPUT, caPem: 'another CA' },
    ]
    expect(new Set([INPUT, ...others].map(digest)).size).toBe(4)
  })

  test('without caPem: no ca.crt in the Secret and no --ca-file; with it: both, the CA exactly as given', () => {
    const without = objectsOf(agentManifest(INPUT))
    expect(Object.keys(byKind(without, 'Secret').stringData)).toEqual(['token'])
    expect(agentContainer(without).args).not.toContain('--ca-file')
    const caPem = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n'
    const withCa = objectsOf(agentManifest({ ...INPUT, caPem }))
    expect(byKind(withCa, 'Secret').stringData).toEqual({ token: INPUT.token, 'ca.crt': caPem })
    expect(agentContainer(withCa).args).toEqual(['agent', '--server', INPUT.publicUrl, '--ca-file', CA_FILE])
  })

  test('hostile tokens, URLs, images and CAs → read back by yaml exactly as given', () => {
    for (const value of HOSTILE) {
      const objects = objectsOf(agentManifest({ publicUrl: `https://h.example/${value}`, token: value, image: value, caPem: value }))
      expect(byKind(objects, 'Secret').stringData).toEqual({ token: value, 'ca.crt': value })
      expect(agentContainer(objects).args).toEqual(['agent', '--server', `https://h.example/${value}`, '--ca-file', CA_FILE])
      expect(agentContainer(objects).image).toBe(value)
    }
  })
})

describe('agentManifest through kubectl and the emulator (TLS)', () => {
  /** A manifest file and the run of `kubectl apply` of it with `flags`. */
  async function apply(kubectl: Awaited<ReturnType<typeof withKubectl>>['kubectl'], manifest: string, flags: string[] = []) {
    const file = join(scratch(), 'agent.yaml')
    writeFileSync(file, manifest)
    return kubectl.run(['apply', ...flags, '-f', file])
  }

  test('kubectl apply --dry-run=server accepts every object (the namespace existing: a dry run creates none) and stores nothing', async () => {
    const { kubectl } = await withKubectl()
    expect((await kubectl.run(['create', 'namespace', 'platform-agent'])).code).toBe(0)
    for (const caPem of [undefined, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n']) {
      const dry = await apply(kubectl, agentManifest({ ...INPUT, caPem }), ['--dry-run=server'])
      expect(dry.code).toBe(0)
      expect(dry.stdout).toBe(
        [
          'namespace/platform-agent configured (server dry run)',
          'serviceaccount/platform-agent created (server dry run)',
          'clusterrolebinding.rbac.authorization.k8s.io/platform-agent created (server dry run)',
          'secret/platform-agent created (server dry run)',
          'deployment.apps/platform-agent created (server dry run)',
          '',
        ].join('\n'),
      )
    }
    const left = await kubectl.run(['get', 'serviceaccounts,secrets,deployments', '-n', 'platform-agent', '-o', 'name'])
    expect(left.stdout.split('\n').filter((line) => line.includes('platform-agent'))).toEqual([])
  })

  test('kubectl apply installs it: two agent pods; applied again, the Deployment stays; with a rotated token, its pod template changes', async () => {
    const { k, kubectl } = await withKubectl()
    const first = await apply(kubectl, agentManifest(INPUT))
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    await k.emulator.settled()
    const pods = await kubectl.run(['get', 'pods', '-n', 'platform-agent', '-l', 'app.kubernetes.io/name=platform-agent', '-o', 'name'])
    expect(pods.stdout.trim().split('\n')).toHaveLength(2)
    const lines = (changed: string) =>
      ['namespace/', 'serviceaccount/', 'clusterrolebinding.rbac.authorization.k8s.io/', 'secret/', 'deployment.apps/']
        .map((kind) => `${kind}platform-agent ${changed.includes(kind) ? 'configured' : 'unchanged'} (server dry run)\n`)
        .join('')
    // The API server never stores a Secret's stringData, so kubectl patches it in again each time, as it does on any cluster.
    const again = await apply(kubectl, agentManifest(INPUT), ['--dry-run=server'])
    expect(again.stdout).toBe(lines('secret/'))
    const rotated = await apply(kubectl, agentManifest({ ...INPUT, token: 'pat-agent-rotated' }), ['--dry-run=server'])
    expect(rotated.code).toBe(0)
    expect(rotated.stdout).toBe(lines('secret/ deployment.apps/'))
  })

  test("hostile values → kubectl's own YAML reader sends the Secret's token and the args exactly as given", async () => {
    const { kubectl } = await withKubectl()
    expect((await kubectl.run(['create', 'namespace', 'platform-agent'])).code).toBe(0)
    const values = [HOSTILE.slice(0, 7).join(''), ...HOSTILE.slice(7, 15), HOSTILE.slice(15).join('')]
    for (const value of values) {
      const publicUrl = `https://h.example/${value}`
      const manifest = agentManifest({ publicUrl, token: value, image: IMAGE, caPem: value })
      const dry = await apply(kubectl, manifest, ['--dry-run=server', '-o', 'json'])
      expect(dry.code).toBe(0)
      const items: any[] = JSON.parse(dry.stdout).items
      const secret = byKind(items, 'Secret')
      expect(Buffer.from(secret.data.token, 'base64').toString()).toBe(value)
      expect(Buffer.from(secret.data['ca.crt'], 'base64').toString()).toBe(value)
      expect(agentContainer(items).args).toEqual(['agent', '--server', publicUrl, '--ca-file', CA_FILE])
    }
  })
})

describe('PLATFORM_AGENT_IMAGE', () => {
  test("unset or empty → this version's image on ghcr.io; set → that image; not an image reference → a ConfigError naming it", () => {
    expect(loadConfig({}).agentImage).toBe(`ghcr.io/platform-api/platform-api:${packageJson.version}`)
    expect(loadConfig({ PLATFORM_AGENT_IMAGE: '' }).agentImage).toBe(`ghcr.io/platform-api/platform-api:${packageJson.version}`)
    for (const image of ['registry.example.com:5000/team/platform-api:0.1.0', 'platform-api', `r.example/p@sha256:${'0'.repeat(64)}`])
      expect(loadConfig({ PLATFORM_AGENT_IMAGE: image }).agentImage).toBe(image)
    for (const image of ['platform api:1', 'r.example/p:1\nx', 'r.example/p:"1"', 'r.example/p:'])
      expect(() => loadConfig({ PLATFORM_AGENT_IMAGE: image })).toThrow(ConfigError)
    expect(() => loadConfig({ PLATFORM_AGENT_IMAGE: 'a b' })).toThrow(/^PLATFORM_AGENT_IMAGE must be a container image/)
  })
})
