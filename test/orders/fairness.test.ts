import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { makeTestApp, type TestApp, type TestUser } from '../support/app'
import { buildRawChart, serveHelmRepo } from '../support/charts'
import { eventually } from '../support/wait'

/** Helm slots are shared by share: one user's endless renders cannot keep another user's render waiting. */

// The timeout only bounds how long an endless render could hold a slot; no test waits for it.
const ENV = { PLATFORM_ALLOW_PRIVATE_REGISTRIES: 'true', PLATFORM_HELM_TIMEOUT_SECONDS: '25' }
const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n'
const repo = serveHelmRepo([
  buildRawChart('endless', '1.0.0', { 'templates/cm.yaml': '{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}\n' }),
  buildRawChart('quick', '1.0.0', { 'templates/cm.yaml': CM }),
])

/** Helm processes this test process started, as /proc shows them. */
function helmChildren(): number {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
        const [, comm, rest] = /^\d+ \((.*)\) (.*)$/s.exec(stat) ?? []
        return comm === 'helm' && Number(rest?.split(' ')[1]) === process.pid
      } catch {
        return false
      }
    }).length
}

async function orderOf(t: TestApp, who: TestUser, name: string, values: Record<string, unknown>): Promise<string> {
  const res = await t.as(who).send('POST', '/api/v1/user/deploy/orders', {
    spec: { packages: [{ chart: { name, releaseName: 'r', namespace: 'default', url: repo.url, values } }] },
  })
  expect(res.status).toBe(200)
  return (await res.json()).metadata.uid
}

const renderPath = (uid: string) => `/api/v1/user/deploy/orders/${uid}/render/manifest`

describe('Helm slots', () => {
  test("alice's four endless renders hold only her share of the slots: bob's render is answered while all of hers still run or wait", async () => {
    const t = await makeTestApp(ENV)
    const [alice, bob] = await t.users('alice', 'bob')
    const endless = await Promise.all([0, 1, 2, 3].map((i) => orderOf(t, alice!, 'endless', { i })))
    const quick = await orderOf(t, bob!, 'quick', {})
    let settled = 0
    const hers = endless.map((uid) =>
      t
        .as(alice!)
        .get(renderPath(uid))
        .finally(() => settled++),
    )
    await eventually(() => helmChildren() >= 2, 10_000)
    const his = await t.as(bob!).get(renderPath(quick))
    expect(his.status).toBe(200)
    expect(settled).toBe(0)
    // Closing the app ends her renders (killed, or refused while they waited).
    await t.deps.runtimes.close()
    expect((await Promise.all(hers)).map((r) => r.status).sort()).toEqual([422, 422, 503, 503])
  }, 60_000)
})
