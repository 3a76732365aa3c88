import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { makeTestApp } from '../support/app'
import { buildChart, gzipBomb, serveHelmRepo, tgzOf } from '../support/charts'

/** Hostile chart archives and addresses are refused cleanly: 4xx JSON, nothing written outside the cache, no 500. */

const ENV = { PLATFORM_ALLOW_PRIVATE_REGISTRIES: 'true' }
const CHART_YAML = 'apiVersion: v2\nname: demo\nversion: 0.1.0\n'
const template = buildChart('demo', '0.1.0')

async function orderServing(archive: Uint8Array) {
  const repo = serveHelmRepo([template])
  repo.override('demo-0.1.0.tgz', archive)
  const t = await makeTestApp(ENV)
  const admin = await t.admin()
  await t.as(admin).send('POST', '/api/v1/admin/chart-sources', { name: 'evil', url: repo.url })
  const [alice] = await t.users('alice')
  const res = await t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
    spec: {
      packages: [{ chart: { name: 'demo', version: '0.1.0', releaseName: 'demo', namespace: 'default', sourceRef: { name: 'evil' } } }],
    },
  })
  return { res, dataDir: t.config.dataDir }
}

describe('hostile chart archives', () => {
  test('an archive with a ../ path → 422 JSON naming the path; nothing is written outside the chart cache', async () => {
    const { res, dataDir } = await orderServing(
      tgzOf([
        { path: 'demo/Chart.yaml', data: CHART_YAML },
        { path: 'demo/../../escaped.yaml', data: 'kind: Pwned\n' },
      ]),
    )
    expect(res.status).toBe(422)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect((await res.json()).message).toContain('a path leaving the chart')
    expect(existsSync(join(dataDir, '..', 'escaped.yaml'))).toBe(false)
    expect(existsSync(join(dataDir, 'charts')) ? readdirSync(join(dataDir, 'charts')) : []).toEqual([])
  })

  test('an archive with an absolute path → 422', async () => {
    const { res } = await orderServing(
      tgzOf([
        { path: 'demo/Chart.yaml', data: CHART_YAML },
        { path: '/etc/cron.d/x', data: 'x' },
      ]),
    )
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('absolute path')
  })

  test('an archive with a symlink → 422 naming the link', async () => {
    const { res } = await orderServing(
      tgzOf([
        { path: 'demo/Chart.yaml', data: CHART_YAML },
        { path: 'demo/templates/passwd.yaml', type: '2', linkname: '/etc/passwd' },
      ]),
    )
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('a link')
  })

  test('an archive with a hard link → 422', async () => {
    const { res } = await orderServing(
      tgzOf([
        { path: 'demo/Chart.yaml', data: CHART_YAML },
        { path: 'demo/values.yaml', type: '1', linkname: 'demo/Chart.yaml' },
      ]),
    )
    expect(res.status).toBe(422)
  })

  test('a 1 MB gzip expanding to 1 GB → 422 about the expansion limit, refused without expanding it', async () => {
    const bomb = await gzipBomb(1024 * 1024 * 1024)
    expect(bomb.byteLength).toBeLessThan(2 * 1024 * 1024)
    const started = performance.now()
    const { res } = await orderServing(bomb)
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('expands past')
    expect(performance.now() - started).toBeLessThan(10_000)
  }, 60_000)

  test('something that is not gzip at all → 422', async () => {
    const { res } = await orderServing(new TextEncoder().encode('<html>not a chart</html>'))
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('not a valid gzip')
  })

  test('an archive with two top directories → 422', async () => {
    const { res } = await orderServing(
      tgzOf([
        { path: 'demo/Chart.yaml', data: CHART_YAML },
        { path: 'other/x.yaml', data: 'x' },
      ]),
    )
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('more than one top directory')
  })
})

describe('size caps and private addresses', () => {
  test('an archive past the 20 MiB cap → 422 naming the cap', async () => {
    const { res } = await orderServing(new Uint8Array(21 * 1024 * 1024))
    expect(res.status).toBe(422)
    expect((await res.json()).message).toContain('the chart archive is larger than 20971520 bytes')
  })

  test('a package URL on loopback without PLATFORM_ALLOW_PRIVATE_REGISTRIES → 422 naming that setting', async () => {
    const repo = serveHelmRepo([template])
    const t = await makeTestApp()
    const [alice] = await t.users('alice')
    for (const chart of [{ url: repo.url }, { sourceRef: { kind: 'Legacy', name: repo.url } }]) {
      const res = await t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
        spec: { packages: [{ chart: { name: 'demo', releaseName: 'demo', namespace: 'default', ...chart } }] },
      })
      expect(res.status).toBe(422)
      expect((await res.json()).message).toContain('PLATFORM_ALLOW_PRIVATE_REGISTRIES=true')
    }
    expect(repo.requests).toEqual([])
  })

  test('a sourceRef of kind Legacy names the repository URL itself → 200 when private registries are allowed', async () => {
    const repo = serveHelmRepo([template])
    const t = await makeTestApp(ENV)
    const [alice] = await t.users('alice')
    const res = await t.as(alice!).send('POST', '/api/v1/user/deploy/orders', {
      spec: {
        packages: [{ chart: { name: 'demo', releaseName: 'demo', namespace: 'default', sourceRef: { kind: 'Legacy', name: repo.url } } }],
      },
    })
    expect(res.status).toBe(200)
  })
})
