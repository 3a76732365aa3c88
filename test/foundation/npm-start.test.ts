import { expect, test } from 'bun:test'
import { resolve } from 'node:path'
import { tempDir } from '../support/app'
import { eventually } from '../support/wait'

const ROOT = resolve(import.meta.dir, '../..')

test('an operator stops `npm start` with SIGTERM (docker stop, a process manager) → the server itself shuts down and its port closes', async () => {
  const npm = Bun.spawn(['npm', 'start', '--silent'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      PLATFORM_DATA_DIR: tempDir(),
      PLATFORM_SANDBOX_CLUSTER: 'false',
      PLATFORM_REQUEST_LOG: 'false',
      PLATFORM_ADMIN_PASSWORD: 'admin-password-1',
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const reader = npm.stdout.getReader()
  let seen = ''
  while (!/"event":"listening"/.test(seen)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`npm start exited before listening: ${seen}`)
    seen += new TextDecoder().decode(value)
  }
  const base = `http://127.0.0.1:${/"url":"http:\/\/[^:]+:(\d+)"/.exec(seen)![1]}`
  expect((await fetch(`${base}/api/v1/swagger.json`)).status).toBe(200)
  npm.kill('SIGTERM')
  await npm.exited
  const closed = await eventually(
    () =>
      fetch(`${base}/api/v1/swagger.json`).then(
        () => false,
        () => true,
      ),
    5000,
  )
  reader.releaseLock()
  expect(closed).toBe(true)
}, 30_000)
