import { afterAll, expect, test } from 'bun:test'
import { MemberMessages } from '../../src/clusters/member/failures'
import { importedCluster } from './support'

// A member whose ConfigMap list is 12 MiB, sent in two halves: the second only once the test says.
// The platform's buffer is 16 MiB here, 4 MiB for one user.
const MiB = 1024 * 1024
const item = (i: number) => `{"metadata":{"name":"cm-${String(i).padStart(6, '0')}"},"data":{"v":"${'x'.repeat(1000)}"}}`
const items = Array.from({ length: Math.ceil((12 * MiB) / item(0).length) }, (_, i) => item(i))
const list = new TextEncoder().encode(
  `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[${items.join(',')}]}`,
)
const half = Math.floor(list.length / 2)

let releaseSecondHalf: () => void = () => undefined
const member = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch(request) {
    const path = new URL(request.url).pathname
    if (path === '/version') return Response.json({ major: '1', minor: '30', gitVersion: 'v1.30.0' })
    if (path === '/api/v1/nodes') return Response.json({ kind: 'NodeList', items: [], metadata: {} })
    if (path === '/api/v1/namespaces/kube-system') return Response.json({ metadata: { name: 'kube-system', uid: 'large-answers' } })
    const secondHalf = new Promise<void>((release) => {
      releaseSecondHalf = release
    })
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(list.subarray(0, half))
        await secondHalf
        controller.enqueue(list.subarray(half))
        controller.close()
      },
    })
    return new Response(body, { headers: { 'content-type': 'application/json', 'content-length': String(list.length) } })
  },
})
afterAll(() => member.stop(true))

const lab = await importedCluster(
  { url: `http://127.0.0.1:${member.port}`, token: 'member-token' },
  { PLATFORM_MEMBER_BUFFER_BYTES: String(16 * MiB) },
)

test('a 12 MiB answer through /k8s/ is passed on as it arrives: the client reads its beginning while the member still holds its end, then gets every byte', async () => {
  const res = await lab.t.as(lab.alice).get('/api/v1/clusters/alice/dev/k8s/api/v1/namespaces/big/configmaps')
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  const pieces: Uint8Array[] = []
  let received = 0
  while (received < MiB) {
    const { value } = await reader.read()
    pieces.push(value!)
    received += value!.length
  }
  releaseSecondHalf()
  for (let read = await reader.read(); !read.done; read = await reader.read()) pieces.push(read.value)
  expect(Buffer.concat(pieces).equals(Buffer.from(list))).toBe(true)
})

test("the same list through /proxy/, which reads an answer whole (its ETag covers every byte) → 502: it is larger than one user's share of the buffer", async () => {
  // Refused from its declared length: the member's second half is never needed.
  const res = await lab.t.as(lab.alice).get('/api/v1/clusters/alice/dev/proxy/core/v1/namespaces/big/configmaps/')
  expect(res.status).toBe(502)
  expect(((await res.json()) as { message: string }).message).toBe(MemberMessages.tooLarge('dev', 4 * MiB))
})
