import { afterEach, describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { packTar } from 'modern-tar'
import { MAX_CONTAINER_BYTES } from '../../src/kube-emulator/filesystem'
import { apiPod, type Client, channelSocket, channelText, emulator, scratch, stopAll } from './fixtures'

afterEach(stopAll)

/** Runs `command` in the api pod over exec (v5), `stdin` sent then closed; its stdout bytes, stderr text and exit code. */
async function run(k: Client, pod: string, command: string[], stdin?: Uint8Array, container = '') {
  const query = `${container ? `container=${container}&` : ''}${command.map((c) => `command=${encodeURIComponent(c)}`).join('&')}&stdout=true&stderr=true${stdin ? '&stdin=true' : ''}`
  const s = await channelSocket(k, `/api/v1/namespaces/demo/pods/${pod}/exec?${query}`, ['v5.channel.k8s.io'])
  if (stdin) {
    for (let at = 0; at < stdin.length; at += 64 * 1024) s.send(0, stdin.subarray(at, at + 64 * 1024))
    s.send(255, [0])
  }
  await s.closed
  const status = JSON.parse(channelText(s, 3))
  const code = status.status === 'Success' ? 0 : Number(status.details?.causes?.[0]?.message)
  const stdout = Buffer.concat(s.frames.flatMap((f, i) => (f.channel === 1 ? [s.payloads[i]] : [])))
  return { stdout, stderr: channelText(s, 2), code }
}

/** GNU tar on the host, reading or writing an archive on stdin/stdout. */
async function hostTar(args: string[], stdin?: Uint8Array): Promise<string | Uint8Array> {
  const p = Bun.spawn(['tar', ...args], { stdin: stdin ?? 'ignore', stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(p.stdout).bytes(), new Response(p.stderr).text(), p.exited])
  if (code !== 0) throw new Error(`tar ${args.join(' ')}: ${err}`)
  return args[0].includes('t') ? new TextDecoder().decode(out) : out
}

describe('tar in the emulated shell', () => {
  test('a GNU tar archive (nested dirs, a 150-character name, modes) extracted with -xmf - -C /tmp, then archived again with cf - → the same tree, modes kept, readable by GNU tar', async () => {
    const k = await emulator()
    const pod = await apiPod(k)
    const dir = scratch()
    const long = 'n'.repeat(150)
    mkdirSync(join(dir, 'src/sub'), { recursive: true })
    writeFileSync(join(dir, 'src/run.sh'), '#!/bin/sh\necho hi\n')
    chmodSync(join(dir, 'src/run.sh'), 0o750)
    writeFileSync(join(dir, `src/sub/${long}`), 'long name\n')
    chmodSync(join(dir, 'src/sub'), 0o700)
    const archive = (await hostTar(['cf', '-', '-C', dir, 'src'])) as Uint8Array
    const extracted = await run(k, pod, ['tar', '-xmf', '-', '-C', '/tmp'], archive)
    expect([extracted.code, extracted.stderr]).toEqual([0, ''])
    const listed = await run(k, pod, ['ls', '-l', '/tmp/src', '/tmp/src/sub'])
    expect(listed.stdout.toString()).toMatch(/-rwxr-x--- .* 18 .* run\.sh\n/)
    expect(listed.stdout.toString()).toMatch(/drwx------ .* sub\n/)
    expect(listed.stdout.toString()).toContain(`${long}\n`)
    expect((await run(k, pod, ['cat', `/tmp/src/sub/${long}`])).stdout.toString()).toBe('long name\n')
    const out = await run(k, pod, ['tar', 'cf', '-', '/tmp/src'])
    expect([out.code, out.stderr]).toEqual([0, "tar: Removing leading `/' from member names\n"])
    const again = (await hostTar(['tvf', '-'], out.stdout)) as string
    expect(again).toMatch(/^drwxr-xr-x root\/root +0 .* tmp\/src\/$/m)
    expect(again).toMatch(/^-rwxr-x--- root\/root +18 .* tmp\/src\/run\.sh$/m)
    expect(again).toMatch(/^drwx------ root\/root +0 .* tmp\/src\/sub\/$/m)
    expect(again).toContain(`tmp/src/sub/${long}`)
  })

  test('czf and xzf: a gzipped archive of the container goes through GNU tar both ways', async () => {
    const k = await emulator()
    const pod = await apiPod(k)
    const out = await run(k, pod, ['tar', 'czf', '-', '-C', '/app', 'config.yaml'])
    expect(out.code).toBe(0)
    expect((await hostTar(['tzf', '-'], out.stdout)) as string).toBe('config.yaml\n')
    const dir = scratch()
    writeFileSync(join(dir, 'note'), 'zipped\n')
    const back = await run(k, pod, ['tar', 'xzf', '-', '-C', '/root'], (await hostTar(['czf', '-', '-C', dir, 'note'])) as Uint8Array)
    expect(back.code).toBe(0)
    expect((await run(k, pod, ['cat', '/root/note'])).stdout.toString()).toBe('zipped\n')
  })

  test('what tar refuses: no archive, a missing -C directory, a missing path to archive, a member with .. → exit 2 with GNU wording; the rest is extracted', async () => {
    const k = await emulator()
    const pod = await apiPod(k)
    const garbage = await run(k, pod, ['tar', 'xf', '-'], new TextEncoder().encode('not a tar archive at all'.repeat(40)))
    expect([garbage.code, garbage.stderr]).toEqual([
      2,
      'tar: This does not look like a tar archive\ntar: Exiting with failure status due to previous errors\n',
    ])
    const dir = scratch()
    writeFileSync(join(dir, 'ok'), 'fine\n')
    const archive = (await hostTar(['cf', '-', '-C', dir, 'ok'])) as Uint8Array
    const missingDir = await run(k, pod, ['tar', 'xf', '-', '-C', '/nope'], archive)
    expect([missingDir.code, missingDir.stderr]).toEqual([2, 'tar: /nope: Cannot open: No such file or directory\n'])
    const missingPath = await run(k, pod, ['tar', 'cf', '-', '/nope'])
    expect(missingPath.code).toBe(2)
    expect(missingPath.stderr).toStartWith('tar: /nope: Cannot stat: No such file or directory\n')
    // GNU tar strips `../` when it archives, so this archive is made by a library that writes what it is told.
    const both = await packTar([
      { header: { name: '../escaped', size: 5 }, body: 'evil\n' },
      { header: { name: 'ok', size: 5 }, body: 'fine\n' },
    ])
    const refused = await run(k, pod, ['tar', 'xf', '-', '-C', '/tmp'], both)
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain("tar: ../escaped: Member name contains '..'")
    expect((await run(k, pod, ['cat', '/tmp/ok'])).stdout.toString()).toBe('fine\n')
    expect((await run(k, pod, ['test', '-e', '/escaped'])).code).toBe(1)
  })

  test(`an archive beyond the container's ${MAX_CONTAINER_BYTES / 1024 / 1024} MiB → No space left on device, nothing half-written beyond the limit`, async () => {
    const k = await emulator()
    const pod = await apiPod(k)
    const dir = scratch()
    writeFileSync(join(dir, 'a'), Buffer.alloc(MAX_CONTAINER_BYTES / 2 + 1, 1))
    writeFileSync(join(dir, 'b'), Buffer.alloc(MAX_CONTAINER_BYTES / 2 + 1, 2))
    const r = await run(k, pod, ['tar', 'xf', '-', '-C', '/tmp'], (await hostTar(['cf', '-', '-C', dir, 'a', 'b'])) as Uint8Array)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('tar: b: Cannot open: No space left on device')
    expect((await run(k, pod, ['test', '-f', '/tmp/a'])).code).toBe(0)
    expect((await run(k, pod, ['test', '-e', '/tmp/b'])).code).toBe(1)
  })

  test('the filesystem is per container and outlives an exec: mkdir, chmod, test, rm', async () => {
    const k = await emulator()
    const pod = await apiPod(k)
    expect((await run(k, pod, ['sh', '-c', 'mkdir -p /data/x && chmod 700 /data/x && test -d /data/x && [ -d /data ]'])).code).toBe(0)
    expect((await run(k, pod, ['ls', '-l', '/data'])).stdout.toString()).toMatch(/^drwx------ .* x\n$/)
    expect((await run(k, pod, ['rm', '/data'])).stderr).toBe("rm: '/data' is a directory\n")
    expect((await run(k, pod, ['rm', '-r', '/data'])).code).toBe(0)
    expect((await run(k, pod, ['test', '-e', '/data'])).code).toBe(1)
    const { body } = await k.json('GET', '/api/v1/namespaces/demo/pods?labelSelector=app%3Dweb')
    const other = await run(k, body.items[0].metadata.name, ['sh', '-c', 'mkdir /mine && ls /'], undefined, 'app')
    expect(other.stdout.toString()).toContain('mine\n')
    expect((await run(k, pod, ['ls', '/'])).stdout.toString()).not.toContain('mine')
  })
})
