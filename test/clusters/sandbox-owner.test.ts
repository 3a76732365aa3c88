import { expect, test } from 'bun:test'
import { startSandbox } from '../../src/clusters/sandbox'
import { makeTestApp } from '../support/app'

test('PLATFORM_ADMIN_USERNAME names an ordinary user on a later start → the sandbox (a cluster-admin credential) stays with the site admin, not that user', async () => {
  const t = await makeTestApp({ PLATFORM_ADMIN_USERNAME: 'bob' })
  const root = await t.admin()
  const [bob] = await t.users('bob')
  const sandbox = await startSandbox(t.deps)
  try {
    const bobs = await (await t.as(bob).get('/api/v1/user/clusters')).json()
    expect(bobs).toEqual([])
    const roots = await (await t.as(root).get('/api/v1/user/clusters')).json()
    expect(roots.map((c: { ownerName: string; name: string }) => `${c.ownerName}/${c.name}`)).toEqual(['root/sandbox'])
  } finally {
    await sandbox.stop()
  }
})
