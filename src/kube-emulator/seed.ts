/**
 * What the sandbox cluster starts with, so a newcomer sees something real: namespaces, two nodes
 * with capacity (for `kubectl top`), workloads whose controllers create ReplicaSets and Pods with
 * growing logs, a Service, ConfigMaps, a Secret, an HPA and a few Events.
 */

import type { KubeObject } from '../kube'
import { recordEvent } from './controllers/common'
import type { Registry } from './registry'

const labels = (app: string) => ({ 'app.kubernetes.io/name': app, app })

function node(name: string, ip: string, role?: string): KubeObject {
  return {
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        ...(role ? { [`node-role.kubernetes.io/${role}`]: '' } : {}),
      },
    },
    spec: { podCIDR: `10.244.${ip.split('.')[3]}.0/24` },
    status: {
      capacity: { cpu: '4', memory: '16393232Ki', pods: '110', 'ephemeral-storage': '102626232Ki' },
      allocatable: { cpu: '3800m', memory: '15893232Ki', pods: '110', 'ephemeral-storage': '94580335255' },
      conditions: [
        ['MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
        ['DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
        ['PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
        ['Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'],
      ].map(([type, status, reason, message]) => ({
        type,
        status,
        reason,
        message,
        lastHeartbeatTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      })),
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'Hostname', address: name },
      ],
      nodeInfo: {
        kubeletVersion: 'v1.31.0',
        kubeProxyVersion: 'v1.31.0',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        kernelVersion: '6.1.0-25-amd64',
        containerRuntimeVersion: 'containerd://1.7.20',
        architecture: 'amd64',
        operatingSystem: 'linux',
        machineID: Bun.hash(name).toString(16),
        systemUUID: crypto.randomUUID(),
        bootID: crypto.randomUUID(),
      },
    },
  }
}

function deployment(name: string, ns: string, replicas: number, containers: object[]): KubeObject {
  return {
    metadata: { name, namespace: ns, labels: labels(name) },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: labels(name) }, spec: { containers } } },
  }
}

/**
 * Fills an empty registry. Controllers, already subscribed, create ReplicaSets and Pods from the
 * workloads. `clusterUid` becomes the kube-system namespace's uid, which identifies a cluster.
 */
export function seed(reg: Registry, clusterUid?: string): void {
  const r = (group: string, version: string, resource: string) => reg.lookup(group, version, resource)!
  const create = (group: string, version: string, resource: string, ns: string, obj: KubeObject, uid?: string) =>
    reg.create(r(group, version, resource), ns, obj, { keepStatus: true, uid })
  for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease', 'demo'])
    create(
      '',
      'v1',
      'namespaces',
      '',
      { metadata: { name: ns, labels: { 'kubernetes.io/metadata.name': ns } } },
      ns === 'kube-system' ? clusterUid : undefined,
    )
  const nodes = [
    create('', 'v1', 'nodes', '', node('node-1', '10.0.0.11', 'control-plane')),
    create('', 'v1', 'nodes', '', node('node-2', '10.0.0.12')),
  ]
  for (const n of nodes)
    recordEvent(reg, r('', 'v1', 'nodes'), n, 'Normal', 'NodeReady', `Node ${n.metadata.name} status is now: NodeReady`, 'kubelet')

  create(
    'apps',
    'v1',
    'deployments',
    'demo',
    deployment('web', 'demo', 2, [
      {
        name: 'app',
        image: 'nginx:1.27',
        ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }],
        env: [{ name: 'MODE', value: 'demo' }],
        resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
      },
      { name: 'side', image: 'busybox:latest', env: [{ name: 'ROLE', value: 'sidecar' }] },
    ]),
  )
  create(
    'apps',
    'v1',
    'deployments',
    'demo',
    deployment('api', 'demo', 1, [
      {
        name: 'api',
        image: 'ghcr.io/example/api:1.4.2',
        ports: [{ containerPort: 8080, protocol: 'TCP' }],
        env: [{ name: 'LOG_LEVEL', value: 'info' }],
      },
    ]),
  )
  create('apps', 'v1', 'statefulsets', 'demo', {
    metadata: { name: 'db', namespace: 'demo', labels: labels('db') },
    spec: {
      replicas: 1,
      serviceName: 'db',
      selector: { matchLabels: { app: 'db' } },
      template: {
        metadata: { labels: labels('db') },
        spec: { containers: [{ name: 'postgres', image: 'postgres:16.4', env: [{ name: 'POSTGRES_DB', value: 'app' }] }] },
      },
    },
  })
  create(
    'apps',
    'v1',
    'deployments',
    'kube-system',
    deployment('coredns', 'kube-system', 2, [
      { name: 'coredns', image: 'registry.k8s.io/coredns/coredns:v1.11.1', ports: [{ containerPort: 53, name: 'dns', protocol: 'UDP' }] },
    ]),
  )
  create('', 'v1', 'services', 'demo', {
    metadata: { name: 'web', namespace: 'demo', labels: labels('web') },
    spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 80, protocol: 'TCP' }] },
  })
  create('', 'v1', 'configmaps', 'demo', {
    metadata: { name: 'cm1', namespace: 'demo', labels: { tier: 'fe' } },
    data: { greeting: 'hello' },
  })
  create('', 'v1', 'configmaps', 'demo', {
    metadata: { name: 'cm2', namespace: 'demo' },
    data: { 'app.properties': 'color=blue\nsize=3\n' },
  })
  create('', 'v1', 'secrets', 'demo', {
    metadata: { name: 'pg-config', namespace: 'demo', labels: { 'app.kubernetes.io/instance': 'pg' } },
    type: 'Opaque',
    data: {
      'postgresql.conf': Buffer.from('max_connections = 100\nshared_buffers = 128MB\n').toString('base64'),
      'pg_hba.conf': Buffer.from('host all all 0.0.0.0/0 scram-sha-256\n').toString('base64'),
    },
  })
  const hpa = create('autoscaling', 'v2', 'horizontalpodautoscalers', 'demo', {
    metadata: { name: 'web', namespace: 'demo' },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 2,
      maxReplicas: 5,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }],
    },
    status: { currentReplicas: 2, desiredReplicas: 2 },
  })
  recordEvent(
    reg,
    r('autoscaling', 'v2', 'horizontalpodautoscalers'),
    hpa,
    'Warning',
    'FailedGetResourceMetric',
    'failed to get cpu utilization: did not receive metrics for targeted pods (pods might be unready)',
    'horizontal-pod-autoscaler',
  )
}
