import { expect, test } from 'bun:test'
import { startEmulator } from '../../src/kube-emulator'
import { eventually } from '../support/wait'
import { importedCluster } from './support'

/** Reads `stream` until it ends or fails; resolves with how it finished. */
async function drain(stream: ReadableStream<Uint8Array>): Promise<'ended' | 'failed'> {
  const reader = stream.getReader()
  try {
    for (;;) if ((await reader.read()).done) return 'ended'
  } catch {
    return 'failed'
  }
}

test('a member that goes away in the middle of a watch: the watch ends cleanly, the platform keeps serving and logs no unexpected error', async () => {
  // What escapes the platform's handling surfaces here rather than as a failed request.
  const escaped: unknown[] = []
  const keep = (error: unknown) => {
    escaped.push(error)
  }
  process.on('unhandledRejection', keep)
  process.on('uncaughtException', keep)
  const member = await startEmulator({ tls: true, seed: true })
  const { t, alice } = await importedCluster(member)
  // Over a real socket: Bun's server pipes the relayed stream to the client.
  const base = await t.listen()
  const watch = await fetch(`${base}/api/v1/clusters/alice/dev/k8s/api/v1/namespaces/demo/configmaps?watch=true`, {
    headers: { authorization: `token ${alice.token}` },
  })
  expect(watch.status).toBe(200)
  const reader = watch.body!.getReader()
  expect(new TextDecoder().decode((await reader.read()).value)).toContain('"ADDED"')
  reader.releaseLock()
  const finished = drain(watch.body!)
  await member.stop()
  // Ended as the apiserver ends a watch (a client re-watches), not cut off mid-response.
  expect(await Promise.race([finished, Bun.sleep(5_000).then(() => 'still open')])).toBe('ended')
  expect((await fetch(`${base}/healthz`)).status).toBe(200)
  const after = await t.as(alice).get('/api/v1/clusters/alice/dev/k8s/api/v1/namespaces')
  expect(after.status).toBe(502)
  expect((await after.json()).message).toContain('cluster "dev"')
  // Waiting for an error that must not come: no event marks its absence, so a short grace period for a late one.
  await Bun.sleep(100)
  expect(t.logs.filter((line) => line.includes('unexpected error'))).toEqual([])
  process.off('unhandledRejection', keep)
  process.off('uncaughtException', keep)
  expect(escaped.map(String)).toEqual([])
}, 30_000)

test("a client that leaves a watch: the member's watch through the proxy ends with it", async () => {
  const member = await startEmulator({ tls: true, seed: true })
  const { t, alice } = await importedCluster(member)
  const base = await t.listen()
  const before = member.subscribers()
  const leaving = new AbortController()
  for (const path of ['/k8s/api/v1/namespaces/demo/configmaps?watch=true', '/proxy/core/v1/namespaces/demo/configmaps?watch=true']) {
    const watch = await fetch(`${base}/api/v1/clusters/alice/dev${path}`, {
      headers: { authorization: `token ${alice.token}` },
      signal: leaving.signal,
    })
    expect(watch.status).toBe(200)
    await watch.body!.getReader().read()
  }
  expect(member.subscribers()).toBe(before + 2)
  leaving.abort()
  await eventually(() => member.subscribers() === before, 2_000)
  expect(member.subscribers()).toBe(before)
  await member.stop()
}, 30_000)
