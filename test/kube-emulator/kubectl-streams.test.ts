import { afterEach, describe, expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { attachLines, CP_TREE, cpRoundTrip, portForward } from '../support/kubectl-streams'
import { apiPod, scratch, stopAll, withKubectl } from './fixtures'

afterEach(stopAll)

describe('kubectl port-forward, cp and attach against the emulator over HTTPS', () => {
  test('port-forward pod/… and svc/web → HTTP on the local port names the pod and container, until interrupted', async () => {
    const { k, kubectl } = await withKubectl()
    const pod = await apiPod(k)
    const toPod = await portForward(kubectl.spawn, `pod/${pod}`, 8080, ['-n', 'demo'])
    const viaPod = await fetch(`http://127.0.0.1:${toPod.port}/hello`)
    expect(await viaPod.text()).toBe(
      `pod ${pod} (namespace demo), container api (image ghcr.io/example/api:1.4.2), port 8080 answered GET /hello\n`,
    )
    expect(await (await fetch(`http://127.0.0.1:${toPod.port}/healthz`)).text()).toBe('ok\n')
    const toService = await portForward(kubectl.spawn, 'svc/web', 80, ['-n', 'demo'])
    const viaService = await (await fetch(`http://127.0.0.1:${toService.port}/`)).text()
    expect(viaService).toMatch(/^pod web-\S+ \(namespace demo\), container app \(image nginx:1\.27\), port 80 answered GET \/\n$/)
    await toService.stop()
    await toPod.stop()
    await expect(fetch(`http://127.0.0.1:${toPod.port}/`)).rejects.toThrow()
  })

  test('port-forward to a port nobody listens on → kubectl reports the refused connection', async () => {
    const { k, kubectl } = await withKubectl()
    const forward = await portForward(kubectl.spawn, `pod/${await apiPod(k)}`, 9999, ['-n', 'demo'])
    await fetch(`http://127.0.0.1:${forward.port}/`).catch(() => undefined)
    const code = await forward.process.exited
    const stderr = await forward.stderr
    expect(code).toBe(1)
    expect(stderr).toContain('an error occurred forwarding')
    expect(stderr).toContain('dial tcp4 127.0.0.1:9999: connect: connection refused')
  })

  test('cp a file and a directory in and out: contents and (in the container) modes kept', async () => {
    const { k, kubectl } = await withKubectl()
    const pod = `demo/${await apiPod(k)}`
    const dir = scratch()
    const copied = await cpRoundTrip((args) => kubectl.run(args), pod, dir)
    expect(copied).toEqual({ codes: [0, 0, 0, 0], ...CP_TREE })
    const listed = await kubectl.run(['exec', pod.replace('demo/', ''), '-n', 'demo', '--', 'ls', '-l', '/tmp/site', '/tmp/site/assets'])
    expect(listed.stdout).toMatch(/-rw-r--r-- .* 16 .* index\.html/)
    expect(listed.stdout).toMatch(/-rwxr-x--- .* 10 .* run\.sh/)
    expect(statSync(join(dir, 'back/assets')).isDirectory()).toBe(true)
  })

  test("attach → the container's output as it prints it", async () => {
    const { k, kubectl } = await withKubectl()
    const pod = await apiPod(k)
    const lines = await attachLines(kubectl.spawn, [pod, '-n', 'demo'], 2)
    for (const line of lines) expect(line).toMatch(new RegExp(`^level=\\w+ pod=${pod} container=api seq=\\d+ msg=`))
  })
})
