import { expect, test } from 'bun:test'
import { chmodSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { openDeps } from '../../src/app'
import { startSandbox } from '../../src/clusters/sandbox'
import { loadConfig } from '../../src/config'
import { makeTestApp, tempDir } from '../support/app'

test('the sandbox starts → its kubeconfig (a cluster-admin bearer token) is readable by the owner only (0600), also when rewritten', async () => {
  const t = await makeTestApp()
  await t.admin()
  const path = join(t.config.dataDir, 'sandbox.kubeconfig')
  for (let run = 0; run < 2; run++) {
    const sandbox = await startSandbox(t.deps)
    try {
      expect((statSync(path).mode & 0o777).toString(8)).toBe('600')
    } finally {
      await sandbox.stop()
    }
    chmodSync(path, 0o644) // as an older version left it
  }
})

test('serve opens a data dir that does not exist yet → created readable by the owner only (0700)', async () => {
  const parent = tempDir()
  const dataDir = join(parent, 'fresh', 'data')
  const deps = await openDeps(loadConfig({ PLATFORM_DATA_DIR: dataDir, PLATFORM_SANDBOX_CLUSTER: 'false' }))
  try {
    expect((statSync(dataDir).mode & 0o777).toString(8)).toBe('700')
  } finally {
    await deps.db.close()
  }
})
