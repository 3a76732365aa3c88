import { afterEach, describe, expect, test } from 'bun:test'
import { type Client, defineGizmos, emulator, readWatchEvents, stopAll } from './fixtures'

afterEach(stopAll)

const CM = '/api/v1/namespaces/demo/configmaps'
const names = (body: any) => body.items.map((i: any) => i.metadata.name).sort()

async function list(k: Client, query: string) {
  return k.json('GET', `${CM}?${query}`)
}

describe('label selectors', () => {
  const cases: [string, string[]][] = [
    ['tier=fe', ['cm1']],
    ['tier==fe', ['cm1']],
    ['tier!=fe', ['cm2', 'kube-root']],
    ['tier in (fe,be)', ['cm1']],
    ['tier notin (fe)', ['cm2', 'kube-root']],
    ['tier', ['cm1']],
    ['!tier', ['cm2', 'kube-root']],
    ['tier=fe,env=prod', []],
  ]
  for (const [selector, expected] of cases)
    test(`an admin lists configmaps with labelSelector "${selector}" → ${JSON.stringify(expected)}`, async () => {
      const k = await emulator()
      await k.json('POST', CM, { metadata: { name: 'kube-root', labels: { other: 'x' } } })
      const { status, body } = await list(k, `labelSelector=${encodeURIComponent(selector)}`)
      expect(status).toBe(200)
      expect(names(body)).toEqual(expected)
    })

  for (const bad of ['tier in ()', 'a=b=c', 'tier in (fe', '=x', 'a b', 'x>y'])
    test(`an admin lists with the malformed selector "${bad}" → 400 BadRequest`, async () => {
      const k = await emulator()
      const { status, body } = await list(k, `labelSelector=${encodeURIComponent(bad)}`)
      expect(status).toBe(400)
      expect(body.reason).toBe('BadRequest')
    })
})

describe('list shape', () => {
  test('a built-in list → items without apiVersion and kind; a custom resource list → items with them', async () => {
    const k = await emulator()
    const { body } = await list(k, '')
    expect(body).toMatchObject({ kind: 'ConfigMapList', apiVersion: 'v1' })
    expect(body.items[0].kind).toBeUndefined()
    await defineGizmos(k)
    await k.json('POST', '/apis/toys.io/v1/namespaces/demo/gizmos', { metadata: { name: 'g1' } })
    const { body: gizmos } = await k.json('GET', '/apis/toys.io/v1/namespaces/demo/gizmos')
    expect(gizmos.items[0]).toMatchObject({ apiVersion: 'toys.io/v1', kind: 'Gizmo', metadata: { name: 'g1' } })
  })
})

describe('field selectors', () => {
  test('an admin selects metadata.name=cm1 → exactly cm1; != → the rest', async () => {
    const k = await emulator()
    expect(names((await list(k, 'fieldSelector=metadata.name%3Dcm1')).body)).toEqual(['cm1'])
    expect(names((await list(k, 'fieldSelector=metadata.name!%3Dcm1')).body)).toEqual(['cm2'])
  })

  test('an admin selects on an unsupported field → 400 field label not supported', async () => {
    const k = await emulator()
    const { status, body } = await list(k, 'fieldSelector=spec.foo%3Dbar')
    expect(status).toBe(400)
    expect(body.message).toBe('field label not supported: spec.foo')
  })

  test('an admin lists pods by status.phase and spec.nodeName → only matching pods', async () => {
    const k = await emulator()
    const { body: all } = await k.json('GET', '/api/v1/pods')
    const node = all.items[0].spec.nodeName
    const { body } = await k.json('GET', `/api/v1/pods?fieldSelector=${encodeURIComponent(`status.phase=Running,spec.nodeName=${node}`)}`)
    expect(body.items.length).toBeGreaterThan(0)
    expect(body.items.every((p: any) => p.spec.nodeName === node)).toBe(true)
    expect(body.items.length).toBeLessThan(all.items.length)
  })

  test("an admin lists events of one deployment by involvedObject → only that object's events", async () => {
    const k = await emulator()
    const { body: web } = await k.json('GET', '/apis/apps/v1/namespaces/demo/deployments/web')
    const sel = `involvedObject.name=web,involvedObject.namespace=demo,involvedObject.kind=Deployment,involvedObject.uid=${web.metadata.uid}`
    const { status, body } = await k.json('GET', `/api/v1/namespaces/demo/events?fieldSelector=${encodeURIComponent(sel)}`)
    expect(status).toBe(200)
    expect(body.items.length).toBeGreaterThan(0)
    expect(body.items.every((e: any) => e.involvedObject.uid === web.metadata.uid)).toBe(true)
    expect(body.items[0]).toMatchObject({ reason: 'ScalingReplicaSet', source: { component: 'deployment-controller' } })
  })
})

describe('limit and continue', () => {
  test('an admin pages through 5 configmaps by 2 → 2, 2, 1 with one list resourceVersion and remainingItemCount', async () => {
    const k = await emulator({ seed: false })
    await k.json('POST', '/api/v1/namespaces', { metadata: { name: 'demo' } })
    for (let i = 1; i <= 5; i++) await k.json('POST', CM, { metadata: { name: `c${i}` } })
    const p1 = (await list(k, 'limit=2')).body
    expect(p1.items).toHaveLength(2)
    expect(p1.metadata.remainingItemCount).toBe(3)
    const p2 = (await list(k, `limit=2&continue=${p1.metadata.continue}`)).body
    const p3 = (await list(k, `limit=2&continue=${p2.metadata.continue}`)).body
    expect([p2.items.length, p3.items.length]).toEqual([2, 1])
    expect(p3.metadata.continue).toBeUndefined()
    expect(new Set([p1, p2, p3].map((p) => p.metadata.resourceVersion)).size).toBe(1)
    expect([...p1.items, ...p2.items, ...p3.items].map((i: any) => i.metadata.name)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5'])
  })

  test('an admin pages with a label selector → no remainingItemCount', async () => {
    const k = await emulator()
    const { body } = await list(k, 'limit=1&labelSelector=tier')
    expect(body.metadata.remainingItemCount).toBeUndefined()
  })

  test('an admin continues a list after the history moved past it → 410 Expired', async () => {
    const k = await emulator({ watchHistory: 5 })
    const first = (await list(k, 'limit=1')).body
    for (let i = 0; i < 10; i++) await k.json('POST', CM, { metadata: { name: `churn-${i}` } })
    const { status, body } = await list(k, `limit=1&continue=${first.metadata.continue}`)
    expect(status).toBe(410)
    expect(body.reason).toBe('Expired')
    expect(body.message).toStartWith('The provided continue parameter is too old')
  })

  test('an admin selects pods by a prefixed label key with spaces around the set → the web pods', async () => {
    const k = await emulator()
    const { body } = await k.json(
      'GET',
      `/api/v1/namespaces/demo/pods?labelSelector=${encodeURIComponent('app.kubernetes.io/name in ( web , db ),app!=db')}`,
    )
    expect(body.items.length).toBe(2)
    expect(body.items.every((p: any) => p.metadata.labels.app === 'web')).toBe(true)
  })

  test('an admin sends a tampered continue token → 400', async () => {
    const k = await emulator()
    const { status } = await list(k, 'limit=1&continue=garbage!!')
    expect(status).toBe(400)
  })
})

const readEvents = async (res: Response, count: number) => (await readWatchEvents(res, count)).events

describe('watch', () => {
  test('an admin watches from a list resourceVersion → ADDED, MODIFIED, DELETED for one configmap', async () => {
    const k = await emulator()
    const { body: l } = await list(k, '')
    const res = await k.get(`${CM}?watch=1&resourceVersion=${l.metadata.resourceVersion}`)
    expect(res.status).toBe(200)
    const events = readEvents(res, 3)
    const { body: created } = await k.json('POST', CM, { metadata: { name: 'cm9' } })
    await k.json('PUT', `${CM}/cm9`, { ...created, data: { a: '1' } })
    await k.json('DELETE', `${CM}/cm9`)
    const got = await events
    expect(got.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'cm9'],
      ['MODIFIED', 'cm9'],
      ['DELETED', 'cm9'],
    ])
    expect(got[0].object).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' })
  })

  test('an admin watches without a resourceVersion → synthetic ADDED for existing objects first', async () => {
    const k = await emulator()
    const events = await readEvents(await k.get(`${CM}?watch=true`), 2)
    expect(events.map((e) => [e.type, e.object.metadata.name]).sort()).toEqual([
      ['ADDED', 'cm1'],
      ['ADDED', 'cm2'],
    ])
  })

  test('an admin watches from a compacted resourceVersion → 200 then an ERROR event with 410 Expired', async () => {
    const k = await emulator({ watchHistory: 10 })
    const res = await k.get(`${CM}?watch=1&resourceVersion=1`)
    expect(res.status).toBe(200)
    const [event] = await readEvents(res, 1)
    expect(event.type).toBe('ERROR')
    expect(event.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' })
    expect(event.object.message).toStartWith('too old resource version: 1 (')
  })

  test('an admin watches tier=fe and relabels cm1 to tier=be → DELETED for cm1', async () => {
    const k = await emulator()
    const { body: l } = await list(k, '')
    const res = await k.get(`${CM}?watch=1&labelSelector=tier%3Dfe&resourceVersion=${l.metadata.resourceVersion}`)
    const events = readEvents(res, 1)
    await k.json('PATCH', `${CM}/cm1`, { metadata: { labels: { tier: 'be' } } }, { 'Content-Type': 'application/merge-patch+json' })
    const [event] = await events
    expect([event.type, event.object.metadata.name, event.object.metadata.labels.tier]).toEqual(['DELETED', 'cm1', 'be'])
  })

  test('an admin watches with bookmarks and timeoutSeconds=1 → BOOKMARK with only a resourceVersion, then the stream ends', async () => {
    const k = await emulator({ bookmarkIntervalMs: 200 })
    const { body: l } = await list(k, '')
    const started = Date.now()
    const res = await k.get(`${CM}?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=${l.metadata.resourceVersion}`)
    const text = await res.text()
    expect(Date.now() - started).toBeLessThan(2500)
    const events = text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
    expect(events.length).toBeGreaterThan(0)
    expect(events[0]).toEqual({
      type: 'BOOKMARK',
      object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: l.metadata.resourceVersion } },
    })
  })

  test("an admin watches one pod by fieldSelector metadata.name → only that pod's events", async () => {
    const k = await emulator()
    const { body: l } = await list(k, '')
    const res = await k.get(`${CM}?watch=1&fieldSelector=metadata.name%3Dcm2&resourceVersion=${l.metadata.resourceVersion}`)
    const events = readEvents(res, 1)
    await k.json('PATCH', `${CM}/cm1`, { data: { a: '1' } }, { 'Content-Type': 'application/merge-patch+json' })
    await k.json('PATCH', `${CM}/cm2`, { data: { a: '2' } }, { 'Content-Type': 'application/merge-patch+json' })
    const [event] = await events
    expect([event.type, event.object.metadata.name]).toEqual(['MODIFIED', 'cm2'])
  })

  test('an admin opens a watch with nothing to report → the response headers arrive at once', async () => {
    const k = await emulator()
    const { body: l } = await list(k, '')
    const started = Date.now()
    const res = await k.get(`${CM}?watch=1&resourceVersion=${l.metadata.resourceVersion}`)
    expect(res.status).toBe(200)
    expect(Date.now() - started).toBeLessThan(500)
    await res.body!.cancel()
  })

  test('kubectl-style watch asking for Tables → each event carries a one-row Table', async () => {
    const k = await emulator()
    const { body: l } = await list(k, '')
    const res = await k.request('GET', `${CM}?watch=1&resourceVersion=${l.metadata.resourceVersion}`, {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    })
    const events = readEvents(res, 1)
    await k.json('POST', CM, { metadata: { name: 'tabled' } })
    const [event] = await events
    expect(event.type).toBe('ADDED')
    expect(event.object).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' })
    expect(event.object.rows[0].cells[0]).toBe('tabled')
  })

  test('an idle watch without bookmarks → bare-newline keep-alives only, no events', async () => {
    const k = await emulator({ bookmarkIntervalMs: 100 })
    const { body: l } = await list(k, '')
    const text = await (await k.get(`${CM}?watch=1&timeoutSeconds=1&resourceVersion=${l.metadata.resourceVersion}`)).text()
    expect(text.length).toBeGreaterThanOrEqual(5)
    expect(text.trim()).toBe('')
  })
})
