import { expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { startSandbox } from '../../src/clusters/sandbox'
import { makeTestApp } from '../support/app'

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
  }
})
