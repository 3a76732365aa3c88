import { afterAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { startEmulator } from '../../src/kube-emulator'
import { scratch } from '../kube-emulator/fixtures'

const MAIN = join(import.meta.dir, '../../src/kube-emulator/main.ts')
const running = await startEmulator({ seed: false })
afterAll(() => running.stop())

test('a second emulator on a port already in use → one line naming the port, exit 1, no stack trace and no kubeconfig written', async () => {
  const port = new URL(running.url).port
  const out = join(scratch(), 'kc')
  const p = Bun.spawn([process.execPath, MAIN, '--port', port, '--no-seed', '--kubeconfig-out', out], { stdout: 'pipe', stderr: 'pipe' })
  const timer = setTimeout(() => p.kill('SIGKILL'), 10_000)
  const code = await p.exited
  clearTimeout(timer)
  const stderr = await new Response(p.stderr).text()
  expect(code).toBe(1)
  expect(stderr).toContain(`port ${port}`)
  expect(stderr).toContain('in use')
  expect(stderr).not.toContain('    at ')
  expect(stderr.trim().split('\n')).toHaveLength(1)
  expect(existsSync(out)).toBe(false)
})
