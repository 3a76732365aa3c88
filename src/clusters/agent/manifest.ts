import { createHash } from 'node:crypto'
import { Document, Scalar, type ScalarTag } from 'yaml'

/** Namespace, ServiceAccount, ClusterRoleBinding, Secret and Deployment all carry this name (docs/agents.md). */
const NAME = 'platform-agent'
/** Where the Secret is mounted in the agent's container: `ca.crt` (and `token`) are files there. */
const SECRET_DIR = '/etc/platform-agent'
/** The user the image runs as (Dockerfile: USER 65532), the distroless "nonroot" user. */
const AGENT_USER = 65532

const LABELS = { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/part-of': 'platform-api' }
const SELECTOR = { 'app.kubernetes.io/name': NAME }

export interface AgentManifestInput {
  /** The platform's public URL, which the agent dials (`agent --server`). */
  publicUrl: string
  /** The cluster's agent token. */
  token: string
  /** The agent's container image (PLATFORM_AGENT_IMAGE). */
  image: string
  /** The CA that signed the platform's TLS certificate, when it is not one the agent's system trusts. */
  caPem?: string
}

/** The pod template's annotation with the digest of the Secret's content. */
const SECRET_DIGEST = 'platform-agent/secret-sha256'

/** SHA-256 of the token and CA: the agents read both at start only (environment, file). */
const secretDigest = (input: AgentManifestInput) =>
  createHash('sha256')
    .update(JSON.stringify([input.token, input.caPem ?? null]))
    .digest('hex')

/** A string from outside (token, URL, image, CA), written by `quotedTag`. */
class Quoted {
  constructor(readonly text: string) {}
}

/**
 * A double-quoted scalar with every character but printable ASCII escaped: each YAML parser reads it back as
 * the same string. A plain scalar is resolved by the parser's own rules (kubectl's YAML 1.1 parser reads `yes`,
 * `0o12` or `1_000` as a boolean or a number), and `yaml`'s own double quotes leave U+2028, U+2029 and C1
 * controls raw, which YAML 1.1 reads as line breaks or refuses.
 */
function quoted(text: string): string {
  let out = '"'
  for (const ch of text) {
    const code = ch.codePointAt(0) as number
    if (ch === '"' || ch === '\\') out += `\\${ch}`
    else if (code >= 0x20 && code < 0x7f) out += ch
    else if (code <= 0xff) out += `\\x${code.toString(16).padStart(2, '0')}`
    else if (code <= 0xffff) out += `\\u${code.toString(16).padStart(4, '0')}`
    else out += `\\U${code.toString(16).padStart(8, '0')}`
  }
  return `${out}"`
}

const quotedTag: ScalarTag = {
  tag: 'tag:yaml.org,2002:str',
  default: true,
  identify: (value) => value instanceof Quoted,
  resolve: (text) => text,
  stringify: (item) => quoted(((item as Scalar).value as Quoted).text),
}

/** A PEM as a literal block, readable in the manifest, when it holds only printable ASCII lines; quoted otherwise. */
const pem = (text: string): Scalar | Quoted => {
  if (!/^[\x20-\x7e\n]*$/.test(text)) return new Quoted(text)
  const node = new Scalar(text)
  node.type = 'BLOCK_LITERAL'
  return node
}

/**
 * The manifest `kubectl apply -f` installs to run the cluster agent in a cluster (docs/agents.md,
 * "Installing the agent in a cluster"): the namespace, the agent's service account bound
 * to cluster-admin (it reports that account's token as the credential the platform uses at the API server;
 * the platform's own access rules and impersonation narrow what each user does), a Secret with the agent
 * token and the platform's CA when given, and a Deployment of two agents (the platform uses any connected
 * one) reading the token from the Secret through the environment, never from its command line.
 */
export function agentManifest(input: AgentManifestInput): string {
  const withCa = input.caPem !== undefined
  const metadata = (namespaced: boolean) => ({ name: NAME, ...(namespaced ? { namespace: NAME } : {}), labels: LABELS })
  const objects: unknown[] = [
    // The agents meet the "restricted" Pod Security Standard; the namespace admits no pod that does not.
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { ...metadata(false), labels: { ...LABELS, 'pod-security.kubernetes.io/enforce': 'restricted' } },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: metadata(true) },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: metadata(false),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: NAME, namespace: NAME }],
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: metadata(true),
      type: 'Opaque',
      stringData: { token: new Quoted(input.token), ...(withCa ? { 'ca.crt': pem(input.caPem as string) } : {}) },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: metadata(true),
      spec: {
        replicas: 2,
        selector: { matchLabels: SELECTOR },
        template: {
          // A new token or CA changes the pods' template, so applying the manifest again restarts the agents with it.
          metadata: { labels: LABELS, annotations: { [SECRET_DIGEST]: secretDigest(input) } },
          spec: {
            serviceAccountName: NAME,
            automountServiceAccountToken: true,
            // Two agents on two nodes when the cluster has them, so one node's loss leaves a tunnel open.
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: SELECTOR }, topologyKey: 'kubernetes.io/hostname' } },
                ],
              },
            },
            containers: [
              {
                name: 'agent',
                image: new Quoted(input.image),
                args: ['agent', '--server', new Quoted(input.publicUrl), ...(withCa ? ['--ca-file', `${SECRET_DIR}/ca.crt`] : [])],
                env: [{ name: 'PLATFORM_AGENT_TOKEN', valueFrom: { secretKeyRef: { name: NAME, key: 'token' } } }],
                volumeMounts: [
                  { name: 'secret', mountPath: SECRET_DIR, readOnly: true },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
                resources: { requests: { cpu: '20m', memory: '64Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
                securityContext: {
                  runAsNonRoot: true,
                  runAsUser: AGENT_USER,
                  runAsGroup: AGENT_USER,
                  readOnlyRootFilesystem: true,
                  allowPrivilegeEscalation: false,
                  capabilities: { drop: ['ALL'] },
                  seccompProfile: { type: 'RuntimeDefault' },
                },
              },
            ],
            volumes: [
              { name: 'secret', secret: { secretName: NAME } },
              // The root file system is read-only; the runtime's temporary files go here.
              { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
            ],
          },
        },
      },
    },
  ]
  const header = '# The platform-api cluster agent (docs/agents.md): apply with `kubectl apply -f`.\n'
  return (
    header +
    objects
      .map((object) => new Document(object, { aliasDuplicateObjects: false, customTags: [quotedTag] }).toString({ lineWidth: 0 }))
      .join('---\n')
  )
}
