import { afterEach, describe, expect, test } from 'bun:test'
import { Writable } from 'node:stream'
import { AppsV1Api, CoreV1Api, Exec, KubeConfig, makeInformer, type V1ConfigMap, type V1Status, Watch } from '@kubernetes/client-node'
import { emulator, eventually, stopAll } from './fixtures'

afterEach(stopAll)

async function connect() {
  const k = await emulator({ tls: true })
  const kc = new KubeConfig()
  kc.loadFromString(k.emulator.kubeconfig())
  return { k, kc }
}

/** A writable that collects what it is given. */
function sink(): { stream: Writable; text: () => string } {
  let text = ''
  return {
    stream: new Writable({
      write(chunk, _enc, done) {
        text += chunk.toString()
        done()
      },
    }),
    text: () => text,
  }
}

describe('@kubernetes/client-node against the emulator over HTTPS', () => {
  test('client-node lists pods and reads a deployment → typed objects from the emulator', async () => {
    const { kc } = await connect()
    const core = kc.makeApiClient(CoreV1Api)
    const pods = await core.listNamespacedPod({ namespace: 'demo', labelSelector: 'app=web' })
    expect(pods.items).toHaveLength(2)
    expect(pods.items[0].status?.phase).toBe('Running')
    const web = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'web', namespace: 'demo' })
    expect(web.spec?.replicas).toBe(2)
  })

  test('client-node reads a missing configmap → an ApiException carrying the 404 Status', async () => {
    const { kc } = await connect()
    const err = await kc
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'missing', namespace: 'demo' })
      .catch((e) => e)
    expect(err.code).toBe(404)
    expect(JSON.parse(err.body).message).toBe('configmaps "missing" not found')
  })

  test('client-node watches configmaps from a list resourceVersion → ADDED and DELETED events', async () => {
    const { kc } = await connect()
    const core = kc.makeApiClient(CoreV1Api)
    const list = await core.listNamespacedConfigMap({ namespace: 'demo' })
    const events: string[] = []
    let deleted = () => {}
    const done = new Promise<void>((resolve) => {
      deleted = resolve
    })
    const watch = await new Watch(kc).watch(
      '/api/v1/namespaces/demo/configmaps',
      { resourceVersion: list.metadata?.resourceVersion },
      (type, obj) => {
        events.push(`${type} ${obj.metadata.name}`)
        if (type === 'DELETED') deleted()
      },
      () => {},
    )
    await core.createNamespacedConfigMap({ namespace: 'demo', body: { metadata: { name: 'watched' } } })
    await core.deleteNamespacedConfigMap({ name: 'watched', namespace: 'demo' })
    await done
    watch.abort()
    expect(events).toEqual(['ADDED watched', 'DELETED watched'])
  })

  test('a client-node informer follows add, update and delete of a configmap → its cache ends as it began', async () => {
    const { kc } = await connect()
    const core = kc.makeApiClient(CoreV1Api)
    const informer = makeInformer<V1ConfigMap>(kc, '/api/v1/namespaces/demo/configmaps', () =>
      core.listNamespacedConfigMap({ namespace: 'demo' }),
    )
    const seen: string[] = []
    for (const verb of ['add', 'update', 'delete'] as const)
      informer.on(verb, (o) => {
        if (o.metadata?.name === 'inf') seen.push(verb)
      })
    informer.on('error', () => {}) // stop() aborts the watch, which the informer reports as an error
    await informer.start()
    await core.createNamespacedConfigMap({ namespace: 'demo', body: { metadata: { name: 'inf' } } })
    await core.patchNamespacedConfigMap({ name: 'inf', namespace: 'demo', body: [{ op: 'add', path: '/data', value: { a: '1' } }] })
    await core.deleteNamespacedConfigMap({ name: 'inf', namespace: 'demo' })
    await eventually(() => seen.length === 3)
    expect(seen).toEqual(['add', 'update', 'delete'])
    expect(
      informer
        .list()
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['cm1', 'cm2'])
    await informer.stop()
  })

  test('client-node exec echo and a failing command → stdout and the exit-code status', async () => {
    const { kc } = await connect()
    const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'demo', labelSelector: 'app=api' })
    const pod = pods.items[0].metadata!.name!
    const run = (command: string[]) =>
      new Promise<{ out: string; status: V1Status }>((resolve, reject) => {
        const out = sink()
        const err = sink()
        new Exec(kc)
          .exec('demo', pod, 'api', command, out.stream, err.stream, null, false, (status) => resolve({ out: out.text(), status }))
          .catch(reject)
      })
    const ok = await run(['echo', 'from client-node'])
    expect(ok.out).toBe('from client-node\n')
    expect(ok.status.status).toBe('Success')
    const failed = await run(['sh', '-c', 'exit 7'])
    expect(failed.status).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '7' }] },
    })
  })
})
