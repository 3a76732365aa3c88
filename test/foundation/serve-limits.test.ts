import { afterAll, describe, expect, test } from 'bun:test'
import { tempDir } from '../support/app'
import { createTokenOnCommandLine, type RunningServer, startServer } from '../support/process'

/** Body limits of the real `serve` process, where Bun's own cap and ours meet. */
describe('serve: body limits', () => {
  const servers: RunningServer[] = []
  afterAll(() => {
    for (const s of servers) s.child.kill('SIGTERM')
  })

  test('an admin sends bodies over PLATFORM_MAX_BODY_BYTES chunked, with Content-Length, and as multipart → 413 each; the server keeps serving', async () => {
    const dataDir = tempDir()
    const server = await startServer(dataDir, { PLATFORM_ADMIN_PASSWORD: 'admin-password-1', PLATFORM_MAX_BODY_BYTES: '65536' })
    servers.push(server)
    const token = createTokenOnCommandLine(dataDir, 'admin')
    const big = JSON.stringify({ username: 'big', email: 'big@example.com', password: 'password123', full_name: 'x'.repeat(200_000) })
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = new TextEncoder().encode(big)
        for (let i = 0; i < bytes.length; i += 16_384) controller.enqueue(bytes.subarray(i, i + 16_384))
        controller.close()
      },
    })
    const headers = { authorization: `token ${token}`, 'content-type': 'application/json' }
    const chunked = await fetch(`${server.base}/api/v1/admin/users`, { method: 'POST', headers, body: chunks })
    expect(chunked.status).toBe(413)
    const sized = await fetch(`${server.base}/api/v1/admin/users`, { method: 'POST', headers, body: big })
    expect(sized.status).toBe(413)
    const form = new FormData()
    form.append('avatar', new Blob([new Uint8Array(200_000)], { type: 'image/png' }), 'a.png')
    const multipart = await fetch(`${server.base}/api/v1/user/settings/avatar`, {
      method: 'POST',
      headers: { authorization: `token ${token}` },
      body: form,
    })
    expect(multipart.status).toBe(413)
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200)
    const users = await (await fetch(`${server.base}/api/v1/users/search?q=big`)).json()
    expect(users.data).toEqual([])
  }, 30_000)
})
