import { afterAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AuditEvent } from '../../src/audit/schemas'
import { startEmulator } from '../../src/kube-emulator'
import { kubectlLab, runKubectl, spawnKubectl } from '../clusters/kubectl-lab'
import { tempDir } from '../support/app'
import { attachLines, portForward } from '../support/kubectl-streams'
import { eventually } from '../support/wait'
import { expectNoSecret, kubernetesEvents } from './support'

/**
 * The audit trail of kubectl's attach and port-forward sessions through the platform
 * (docs/decisions.md §8): one event each, written as the session opens and completed with its
 * end time when it ends; a refusal recorded as refused; what the session carries never recorded.
 */

const member = await startEmulator({ tls: true, logIntervalMs: 100 })
afterAll(() => member.stop())
const auditLog = join(tempDir(), 'audit.jsonl')
const lab = await kubectlLab(member, { PLATFORM_AUDIT_LOG: auditLog })

/** The names of the lab's two kubeconfig tokens, the write one and the read-only one. */
const WRITE_TOKEN = 'kubeconfig-alice-dev'
const READ_TOKEN = 'kubeconfig-alice-dev-readonly'
/** Secret-looking values only a session's stdin, or the bytes a forward relays, carry. */
const STDIN_SECRET = 'ghp_AttachStdinOnly4kQ9zW2mX7vB1nL5'
const FORWARDED_SECRET = 'AKIAFORWARDEDONLY7Q2XW9Z'

const tokenOf = (kubeconfig: string) => /token: (\S+)/.exec(readFileSync(kubeconfig, 'utf8'))![1]!

async function podOf(app: string): Promise<string> {
  const { out } = await runKubectl(
    lab,
    lab.kubeconfig,
    'get',
    'pods',
    '-n',
    'demo',
    '-l',
    `app=${app}`,
    '-o',
    'jsonpath={.items[0].metadata.name}',
  )
  return out
}

/** alice's events of `verb` by token `token`, once there is one and each satisfies `ready` (a session's: once it has its end). */
const eventsOf = (verb: string, token: string, ready: (event: AuditEvent) => boolean = () => true) =>
  eventually(async () => {
    const found = (await kubernetesEvents(lab.t, 'alice/dev')).filter((e) => e.verb === verb && e.credential.name === token)
    return found.length > 0 && found.every(ready) ? found : undefined
  }, 10_000)

type SessionVerb = 'attach' | 'portforward'

/** What every event of a session of `verb` on `pod` by token `token` says of who, where and what. */
const sessionEvent = (verb: SessionVerb, pod: string, token: string) => ({
  kind: 'kubernetes',
  actor: { login: 'alice' },
  credential: { kind: 'token', name: token },
  cluster: 'alice/dev',
  verb,
  objectRef: { apiGroup: '', apiVersion: 'v1', resource: 'pods', namespace: 'demo', name: pod, subresource: verb },
})

/** The audit log's lines of event `id`: a session's as it opened, then completed. */
const loggedLinesOf = (id: number) =>
  readFileSync(auditLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((event) => event.id === id)

/**
 * The one session of `verb` on `pod` by the write token, once completed: opened (101) at or after
 * `before`, ended once it had begun and before now, its last audit log line the stored event.
 * Neither a forward nor an attach has a command (the ports travel inside the tunnel; the event has no field for them).
 */
async function completedSession(verb: SessionVerb, pod: string, before: number): Promise<AuditEvent> {
  const sessions = await eventsOf(verb, WRITE_TOKEN, (e) => e.endTime !== undefined)
  expect(sessions).toHaveLength(1)
  const session = sessions[0]!
  expect(session).toMatchObject({ ...sessionEvent(verb, pod, WRITE_TOKEN), outcome: { status: 101, result: 'allowed' } })
  expect(session.credential.id).toBeInteger()
  for (const field of ['route', 'command']) expect(session).not.toHaveProperty(field)
  const [start, end] = [Date.parse(session.time), Date.parse(session.endTime!)]
  expect(start).toBeGreaterThanOrEqual(before)
  expect(end).toBeGreaterThanOrEqual(start)
  expect(end).toBeLessThanOrEqual(Date.now())
  expect(loggedLinesOf(session.id).at(-1)).toEqual(session)
  return session
}

/** The read-only token's requests for `verb` on `pod`, each recorded as refused (403), none with an end. */
async function expectRefused(verb: SessionVerb, pod: string): Promise<void> {
  // kubectl asks over WebSocket, then again over SPDY: each refused request is an event of its own.
  for (const event of await eventsOf(verb, READ_TOKEN)) {
    expect(event).toMatchObject({ ...sessionEvent(verb, pod, READ_TOKEN), outcome: { status: 403, result: 'refused' } })
    expect(event).not.toHaveProperty('endTime')
  }
}

describe('kubectl attach', () => {
  test('with stdin, interrupted: one event with verb attach, the pod, the token by name and the cluster, its end recorded once kubectl left; stdin never recorded', async () => {
    const pod = await podOf('api')
    const before = Date.now()
    const lines = await attachLines(spawnKubectl(lab, lab.kubeconfig, {}, 'pipe'), [pod, '-n', 'demo'], 2, `${STDIN_SECRET}\n`)
    expect(lines[1]).toMatch(new RegExp(`^level=\\w+ pod=${pod} container=api seq=\\d+ msg=`))
    // kubectl interrupted closes its WebSocket: the platform ends the member's session and completes the event.
    await eventually(() => member.sessions() === 0, 10_000)
    await completedSession('attach', pod, before)
    await expectNoSecret(lab.t, auditLog, [STDIN_SECRET, tokenOf(lab.kubeconfig), lab.alice.token, member.token])
  }, 30_000)

  test('by a read-only kubeconfig: refused (403) and recorded as refused with its token, no end', async () => {
    const pod = await podOf('api')
    expect((await runKubectl(lab, lab.readonlyKubeconfig, 'attach', '-n', 'demo', pod)).code).toBe(1)
    await expectRefused('attach', pod)
    await expectNoSecret(lab.t, auditLog, [tokenOf(lab.readonlyKubeconfig)])
  }, 30_000)
})

describe('kubectl port-forward', () => {
  test('one event with subresource portforward for the whole forward, its end recorded once kubectl was killed; the bytes relayed never recorded', async () => {
    const pod = await podOf('api')
    const before = Date.now()
    const forward = await portForward(spawnKubectl(lab, lab.kubeconfig), `pod/${pod}`, 8080, ['-n', 'demo'])
    // The secret goes through the tunnel both ways: in the request (path and header) and in the container's answer.
    for (const path of ['first', FORWARDED_SECRET]) {
      const answer = await fetch(`http://127.0.0.1:${forward.port}/${path}`, { headers: { 'x-api-key': FORWARDED_SECRET } })
      expect(await answer.text()).toEndWith(`answered GET /${path}\n`)
    }
    // Killed: no goodbye from kubectl, its connection just drops.
    await forward.stop('SIGKILL')
    await eventually(() => member.sessions() === 0, 10_000)
    const forwarded = await completedSession('portforward', pod, before)
    expect(forwarded).not.toHaveProperty('exitCode')
    await expectNoSecret(lab.t, auditLog, [FORWARDED_SECRET, tokenOf(lab.kubeconfig), lab.alice.token, member.token])
  }, 30_000)

  test('by a read-only kubeconfig: refused (403) and recorded as refused with its token', async () => {
    const pod = await podOf('api')
    const refused = await runKubectl(
      lab,
      lab.readonlyKubeconfig,
      'port-forward',
      '-n',
      'demo',
      `pod/${pod}`,
      ':8080',
      '--address',
      '127.0.0.1',
    )
    expect(refused.code).toBe(1)
    await expectRefused('portforward', pod)
  }, 30_000)
})
