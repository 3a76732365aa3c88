/**
 * The AppsCode aggregated groups the platform's proxy fronts (docs/decisions.md §3b), answered
 * plausibly from the emulator's own objects: create-only virtual kinds that take `request` and
 * answer it filled with `response`, plus menus and the KubeDB DatabaseConfiguration getter.
 * A missing `request` is the 400 `missing apirequest` the real ui-server gives.
 */
import { isObject, type JsonObject, type KubeObject, kubeStatus } from '../kube'
import type { VirtualHandler, VirtualRequest } from './context'
import type { Registry, Resource } from './registry'
import { fieldAt } from './strategies'

const META = 'meta.k8s.appscode.com'
const SCANNER = 'reports.scanner.appscode.com'
const POLICY = 'policy.k8s.appscode.com'
const KUBEDB_UI = 'ui.kubedb.com'
const V = 'v1alpha1'

const virtual = (group: string, resource: string, kind: string, verbs: string[], namespaced = false): Resource => ({
  group,
  versions: [V],
  resource,
  virtual: true,
  strategy: { kind, singular: kind.toLowerCase(), namespaced, verbs },
})

/** The AppsCode kinds: cluster-scoped and create-only, except the menu and database getters. */
export const appscodeResources: Resource[] = [
  virtual(META, 'renders', 'Render', ['create']),
  virtual(META, 'renderdashboards', 'RenderDashboard', ['create']),
  virtual(META, 'rendermenus', 'RenderMenu', ['create']),
  virtual(META, 'resourcegraphs', 'ResourceGraph', ['create']),
  virtual(META, 'usermenus', 'UserMenu', ['get']),
  virtual(META, 'vendormenus', 'VendorMenu', ['get']),
  virtual(SCANNER, 'images', 'Image', ['create']),
  virtual(SCANNER, 'cvereports', 'CVEReport', ['create']),
  virtual(POLICY, 'policyreports', 'PolicyReport', ['create']),
  virtual(KUBEDB_UI, 'databaseconfigurations', 'DatabaseConfiguration', ['create', 'get'], true),
]

interface ObjectInfo {
  resource: JsonObject
  ref: JsonObject
}

/** The `request` of a create-only kind; absent is the upstream's 400. */
function requestOf(body: unknown): JsonObject {
  if (!isObject(body) || !isObject(body.request)) throw kubeStatus.badRequest('missing apirequest')
  return body.request as JsonObject
}

/** The body echoed back with `response`, as the aggregated server answers a create. */
const answer = (req: VirtualRequest, response: unknown) => ({
  code: 201,
  body: {
    apiVersion: `${req.resource.group}/${V}`,
    kind: req.resource.strategy.kind,
    metadata: { creationTimestamp: null },
    ...(isObject(req.body) ? req.body : {}),
    response,
  },
})

/** Finds the stored object an ObjectInfo points at (group '' or 'core', by plural name or Kind). */
function resolve(reg: Registry, info: unknown): { resource: Resource; object: KubeObject } | undefined {
  if (!isObject(info) || !isObject(info.resource) || !isObject(info.ref)) return undefined
  const id = info.resource
  const group = id.group === 'core' ? '' : String(id.group ?? '')
  const r = reg.all().find((x) => !x.virtual && x.group === group && (x.resource === id.name || x.strategy.kind === id.kind))
  if (!r) return undefined
  try {
    return { resource: r, object: reg.get(r, String(info.ref.namespace ?? ''), String(info.ref.name ?? '')) }
  } catch {
    return undefined
  }
}

const resourceId = (r: Resource) => ({
  group: r.group,
  version: r.versions[0],
  name: r.resource,
  kind: r.strategy.kind,
  scope: r.strategy.namespaced ? 'Namespaced' : 'Cluster',
})
const objectInfo = (r: Resource, o: KubeObject): ObjectInfo => ({
  resource: resourceId(r),
  ref: { ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}), name: o.metadata.name! },
})

/** The object and everything it owns, transitively (deployment → replica sets → pods); ownership cycles end the walk. */
function withDependents(reg: Registry, root: { resource: Resource; object: KubeObject }): { resource: Resource; object: KubeObject }[] {
  const out = [root]
  const seen = new Set([root.object.metadata.uid])
  for (let i = 0; i < out.length; i++)
    for (const d of reg.dependentsOf(out[i].object.metadata.uid!))
      if (!seen.has(d.object.metadata.uid)) {
        seen.add(d.object.metadata.uid)
        out.push(d)
      }
  return out
}

const podsResource = (reg: Registry) => reg.lookup('', 'v1', 'pods')!

/**
 * Pods a scanner/policy request covers: nil or empty = cluster, `Namespace` = that namespace,
 * otherwise the pods owned (transitively) by the named workload.
 */
function podsInScope(reg: Registry, request: unknown): KubeObject[] {
  const pr = podsResource(reg)
  const info = isObject(request) && isObject(request.resource) ? request : undefined
  if (!info || !isObject(info.resource) || !info.resource.kind) return reg.list(pr, '').items
  if (info.resource.kind === 'Namespace') return reg.list(pr, String(fieldAt(info, ['ref', 'name']) ?? '')).items
  const root = resolve(reg, info)
  return root
    ? withDependents(reg, root)
        .filter((x) => x.resource === pr)
        .map((x) => x.object)
    : []
}

interface ImageUse {
  image: string
  lineages: { chain: ObjectInfo[]; containers: string[] }[]
}

function imagesOf(reg: Registry, pods: KubeObject[]): ImageUse[] {
  const pr = podsResource(reg)
  const byImage = new Map<string, ImageUse>()
  for (const pod of pods) {
    const containers = fieldAt(pod, ['spec', 'containers'])
    for (const c of Array.isArray(containers) ? containers.filter(isObject) : []) {
      const use = byImage.get(String(c.image)) ?? { image: String(c.image), lineages: [] }
      use.lineages.push({ chain: [objectInfo(pr, pod)], containers: [String(c.name)] })
      byImage.set(use.image, use)
    }
  }
  return [...byImage.values()].sort((a, b) => a.image.localeCompare(b.image))
}

/** One image named by `{resource: {group: scanner, kind: Image}, ref: {name}}`, or the pods' images. */
function imagesForRequest(reg: Registry, request: JsonObject | undefined): ImageUse[] {
  if (request && fieldAt(request, ['resource', 'kind']) === 'Image') {
    const name = String(fieldAt(request, ['ref', 'name']) ?? '')
    return [imagesOf(reg, reg.list(podsResource(reg), '').items).find((i) => i.image === name) ?? { image: name, lineages: [] }]
  }
  return imagesOf(reg, podsInScope(reg, request))
}

const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'UNKNOWN'] as const
const KNOWN_CVES = [
  { id: 'CVE-2024-6387', title: 'openssh: regreSSHion - RCE in OpenSSH server', severity: 'HIGH', pkg: 'openssh-client' },
  { id: 'CVE-2023-4911', title: 'glibc: buffer overflow in ld.so via GLIBC_TUNABLES', severity: 'HIGH', pkg: 'libc6' },
  { id: 'CVE-2024-2961', title: 'glibc: out-of-bounds write in iconv', severity: 'HIGH', pkg: 'libc6' },
  { id: 'CVE-2023-44487', title: 'HTTP/2 rapid reset can cause excessive work', severity: 'MEDIUM', pkg: 'nghttp2' },
  { id: 'CVE-2024-45490', title: 'libexpat: negative length in XML_ParseBuffer', severity: 'CRITICAL', pkg: 'libexpat1' },
  { id: 'CVE-2022-3715', title: 'bash: heap buffer overflow in valid_parameter_transform', severity: 'LOW', pkg: 'bash' },
  { id: 'CVE-2023-50495', title: 'ncurses: segmentation fault via _nc_wrap_entry', severity: 'LOW', pkg: 'libtinfo6' },
]

/** A stable subset of known CVEs per image, so the same image always reports the same findings. */
const cvesFor = (image: string) => KNOWN_CVES.filter((_, i) => Number(Bun.hash(`${image}#${i}`) % 3n) === 0)

function cveReport(images: ImageUse[]) {
  const stats = () =>
    Object.fromEntries(SEVERITIES.map((s) => [s, { count: 0, occurrence: 0 }])) as Record<string, { count: number; occurrence: number }>
  const total = stats()
  const cves = new Map<
    string,
    { vulnerabilityID: string; title: string; severity: string; primaryURL: string; occurrence: number; results: object[] }
  >()
  const perImage = images.map((img) => {
    const own = stats()
    for (const c of cvesFor(img.image)) {
      own[c.severity].count++
      own[c.severity].occurrence += Math.max(1, img.lineages.length)
      const entry = cves.get(c.id) ?? {
        vulnerabilityID: c.id,
        title: c.title,
        severity: c.severity,
        primaryURL: `https://avd.aquasec.com/nvd/${c.id.toLowerCase()}`,
        occurrence: 0,
        results: [],
      }
      entry.occurrence += Math.max(1, img.lineages.length)
      entry.results.push({
        image: img.image,
        targets: [
          {
            target: `${img.image} (debian 12.6)`,
            class: 'os-pkgs',
            type: 'debian',
            installedVersion: '1.0.0-1',
            layer: { digest: `sha256:${Bun.hash(img.image).toString(16)}` },
          },
        ],
      })
      cves.set(c.id, entry)
    }
    for (const s of SEVERITIES) {
      total[s].count += own[s].count
      total[s].occurrence += own[s].occurrence
    }
    const [name, tag = 'latest'] = img.image.split(':')
    return {
      image: { name, tag },
      metadata: { os: { family: 'debian', name: '12.6' } },
      stats: own,
      scanStatus: { result: 'Found', trivyDBVersion: '2026-11-01T00:00:00Z', reportRef: { name: Bun.hash(img.image).toString(16) } },
    }
  })
  for (const s of SEVERITIES) total[s].count = [...cves.values()].filter((c) => c.severity === s).length
  return {
    images: perImage,
    vulnerabilities: { stats: total, cves: [...cves.values()].sort((a, b) => a.vulnerabilityID.localeCompare(b.vulnerabilityID)) },
  }
}

/** Two Gatekeeper-style constraints evaluated against real pods; only those with violations are listed. */
function policyReport(pods: KubeObject[]) {
  const checks = [
    {
      name: 'container-must-have-limits',
      kind: 'K8sContainerLimits',
      test: (c: JsonObject) => !isObject(fieldAt(c, ['resources', 'limits'])),
      message: (c: JsonObject) => `container <${String(c.name)}> has no resource limits`,
    },
    {
      name: 'disallow-latest-tag',
      kind: 'K8sDisallowedTags',
      test: (c: JsonObject) => !String(c.image).includes(':') || String(c.image).endsWith(':latest'),
      message: (c: JsonObject) => `container <${String(c.name)}> uses a disallowed tag <${String(c.image)}>`,
    },
  ]
  const time = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const constraints = checks.map((check) => ({
    auditTimestamp: time,
    name: check.name,
    gvr: { group: 'constraints.gatekeeper.sh', version: 'v1beta1', resource: check.kind.toLowerCase() },
    violations: pods.flatMap((pod) => {
      const containers = fieldAt(pod, ['spec', 'containers'])
      return (Array.isArray(containers) ? containers.filter(isObject) : [])
        .filter((c) => check.test(c as JsonObject))
        .map((c) => ({
          group: '',
          version: 'v1',
          kind: 'Pod',
          name: pod.metadata.name,
          namespace: pod.metadata.namespace,
          message: check.message(c as JsonObject),
          enforcementAction: 'dryrun',
        }))
    }),
  }))
  return { constraints: constraints.filter((c) => c.violations.length).sort((a, b) => a.name.localeCompare(b.name)) }
}

const SECTIONS: [string, [string, string][]][] = [
  [
    'Workloads',
    [
      ['apps', 'deployments'],
      ['apps', 'statefulsets'],
      ['apps', 'replicasets'],
      ['', 'pods'],
    ],
  ],
  [
    'Config',
    [
      ['', 'configmaps'],
      ['', 'secrets'],
    ],
  ],
  ['Network', [['', 'services']]],
  ['Autoscaling', [['autoscaling', 'horizontalpodautoscalers']]],
  [
    'Cluster',
    [
      ['', 'namespaces'],
      ['', 'nodes'],
      ['', 'events'],
      ['', 'serviceaccounts'],
    ],
  ],
]

/** The complete menu for this cluster, custom resources included; `available` answers it whole (users have no saved menu here). */
function menu(reg: Registry, name: string, mode: string) {
  const item = (r: Resource) => ({
    name: r.strategy.kind,
    path: `/${r.group || 'core'}/${r.versions[0]}/${r.resource}`,
    resource: resourceId(r),
    missing: false,
    required: false,
    layoutName: `${r.group || 'core'}-${r.versions[0]}-${r.resource}`,
  })
  const sections = SECTIONS.map(([section, list]) => ({
    name: section,
    items: list
      .map(([g, res]) => reg.all().find((r) => r.group === g && r.resource === res))
      .filter((r): r is Resource => !!r)
      .map(item),
  }))
  const custom = reg.all().filter((r) => r.strategy.custom)
  if (custom.length) sections.push({ name: 'Custom Resources', items: custom.map(item) })
  return { apiVersion: `${META}/${V}`, kind: 'Menu', metadata: { name }, spec: { mode, home: { name: 'Home', path: '/' }, sections } }
}

function render(reg: Registry, request: JsonObject) {
  const found = resolve(reg, request.source)
  const resource = isObject(request.source) ? request.source.resource : undefined
  const result = found ? { status: 'Success' } : { status: 'Missing', message: 'the source object was not found' }
  const o = found?.object
  const table = o && {
    metadata: {},
    columns: [
      { name: 'Field', type: 'string', priority: 0 },
      { name: 'Value', type: 'string', priority: 0 },
    ],
    rows: [
      ['Name', o.metadata.name],
      ['Namespace', o.metadata.namespace ?? ''],
      ['Created', o.metadata.creationTimestamp],
      [
        'Labels',
        Object.entries(o.metadata.labels ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .join(', '),
      ],
    ].map(([k, v]) => ({ cells: [{ data: k }, { data: v ?? '' }] })),
  }
  const block = { kind: 'Self', name: 'Overview', resource, result, ...(table ? { table } : {}) }
  if (isObject(request.block)) return { block }
  return {
    view: {
      resource,
      layoutName: String(request.layoutName ?? ''),
      pages: [{ name: String(request.pageName ?? 'Overview'), sections: [{ name: 'Basic', blocks: [block] }] }],
    },
  }
}

function resourceGraph(reg: Registry, request: JsonObject) {
  const found = resolve(reg, request.source)
  if (!found)
    throw kubeStatus.notFound({ group: META, resource: 'resourcegraphs' }, String(fieldAt(request, ['source', 'ref', 'name']) ?? ''))
  const nodes = withDependents(reg, found)
  const resources: object[] = []
  const indexOf = (r: Resource) => {
    const key = JSON.stringify(resourceId(r))
    const i = resources.findIndex((x) => JSON.stringify(x) === key)
    return i >= 0 ? i : resources.push(resourceId(r)) - 1
  }
  const connections = nodes.slice(1).map(({ resource, object }) => {
    const owner = nodes.find((n) => object.metadata.ownerReferences?.some((ref) => ref.uid === n.object.metadata.uid))!
    return {
      source: { resourceID: indexOf(owner.resource), namespace: owner.object.metadata.namespace ?? '', name: owner.object.metadata.name },
      target: { resourceID: indexOf(resource), namespace: object.metadata.namespace ?? '', name: object.metadata.name },
      labels: ['offshoot'],
    }
  })
  indexOf(found.resource)
  return { resources, connections }
}

/** Config of a KubeDB database, read from its `<name>-config` Secret; `keys` narrows the files. */
function databaseConfiguration(reg: Registry, ns: string, name: string, keys: string[]) {
  const secrets = reg.lookup('', 'v1', 'secrets')!
  const config = reg
    .list(secrets, ns)
    .items.filter((s) => s.metadata.name === `${name}-config` || s.metadata.labels?.['app.kubernetes.io/instance'] === name)
  return {
    configurations: config.map((s) => {
      const data = isObject(s.data) ? s.data : {}
      return {
        componentName: name,
        secretName: s.metadata.name,
        data: Object.fromEntries(Object.entries(data).filter(([k]) => !keys.length || keys.includes(k))),
      }
    }),
    availableSecrets: reg
      .list(secrets, ns)
      .items.map((s) => s.metadata.name!)
      .sort(),
  }
}

/** Handlers keyed `group/resource`. */
export function appscodeHandlers(reg: Registry): [string, VirtualHandler][] {
  return [
    [
      `${META}/renders`,
      (req) => {
        const request = requestOf(req.body)
        if (!isObject(request.source)) throw kubeStatus.badRequest('missing request.source')
        return answer(req, render(reg, request))
      },
    ],
    [
      `${META}/renderdashboards`,
      (req) => {
        const request = requestOf(req.body)
        const found = resolve(reg, request.sourceLocator)
        const raw = isObject(request.source) ? request.source : undefined
        const title = found
          ? `${found.resource.strategy.kind} ${found.object.metadata.name}`
          : raw
            ? `${String(raw.kind ?? '')} ${String(fieldAt(raw, ['metadata', 'name']) ?? '')}`.trim()
            : String(request.name ?? 'Dashboard')
        const uid = Bun.hash(title).toString(16)
        const url = `https://grafana.example.com/d/${uid}/${encodeURIComponent(title.toLowerCase().replaceAll(' ', '-'))}`
        return answer(req, {
          dashboards: [
            {
              title,
              url,
              panels: ['CPU Usage', 'Memory Usage', 'Network I/O'].map((p, i) => ({ title: p, url: `${url}?viewPanel=${i + 1}` })),
            },
          ],
        })
      },
    ],
    [
      `${META}/rendermenus`,
      (req) => {
        const request = requestOf(req.body)
        if (typeof request.menu !== 'string' || !request.menu) throw kubeStatus.badRequest('missing menu name')
        if (request.mode !== 'Accordion' && request.mode !== 'Gallery')
          throw kubeStatus.badRequest('unknown menu mode, must be Accordion or Gallery')
        return answer(req, menu(reg, request.menu, request.mode))
      },
    ],
    [`${META}/resourcegraphs`, (req) => answer(req, resourceGraph(reg, requestOf(req.body)))],
    ...(['usermenus', 'vendormenus'] as const).map((res): [string, VirtualHandler] => [
      `${META}/${res}`,
      (req) => {
        if (!req.info.name || req.info.subresource !== 'available') throw kubeStatus.pathNotFound()
        return { code: 200, body: menu(reg, req.info.name, 'Accordion') }
      },
    ]),
    [
      `${SCANNER}/images`,
      (req) => {
        const request = isObject(req.body) && isObject(req.body.request) ? (req.body.request as JsonObject) : undefined
        if (!isObject(req.body)) throw kubeStatus.badRequest('missing apirequest')
        return answer(req, { images: imagesForRequest(reg, request) })
      },
    ],
    [
      `${SCANNER}/cvereports`,
      (req) => {
        if (!isObject(req.body)) throw kubeStatus.badRequest('missing apirequest')
        const request = isObject(req.body.request) ? (req.body.request as JsonObject) : undefined
        return answer(req, cveReport(imagesForRequest(reg, request)))
      },
    ],
    [
      `${POLICY}/policyreports`,
      (req) => {
        if (!isObject(req.body)) throw kubeStatus.badRequest('missing apirequest')
        return answer(req, policyReport(podsInScope(reg, req.body.request)))
      },
    ],
    [
      `${KUBEDB_UI}/databaseconfigurations`,
      (req) => {
        if (req.info.verb === 'get') {
          if (!req.info.namespace) throw kubeStatus.badRequest('a namespace is required to read a database configuration')
          const keys = req.query.getAll('keys')
          return {
            code: 200,
            body: {
              apiVersion: `${KUBEDB_UI}/${V}`,
              kind: 'DatabaseConfiguration',
              metadata: { name: req.info.name, namespace: req.info.namespace },
              request: {
                source: {
                  resource: { group: 'kubedb.com', version: 'v1', name: 'postgreses', kind: 'Postgres' },
                  ref: { namespace: req.info.namespace, name: req.info.name },
                },
                keys,
              },
              response: databaseConfiguration(reg, req.info.namespace, req.info.name, keys),
            },
          }
        }
        const request = requestOf(req.body)
        const ref = fieldAt(request, ['source', 'ref'])
        if (!isObject(ref) || typeof ref.name !== 'string') throw kubeStatus.badRequest('missing request.source.ref')
        const keys = Array.isArray(request.keys) ? request.keys.map(String) : []
        return answer(req, databaseConfiguration(reg, String(ref.namespace ?? ''), ref.name, keys))
      },
    ],
  ]
}
