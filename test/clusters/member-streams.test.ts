import { describe, expect, test } from 'bun:test'
import type { Socket } from 'bun'
import { callMember, MEMBER_TIMEOUT_MS, type Member, streamMember } from '../../src/clusters/member/client'
import * as store from '../../src/clusters/store'
import { AppError } from '../../src/errors'
import { MAX_CONNECTIONS_PER_ORIGIN } from '../../src/net/http1/pool'
import { makeOrg } from '../orgs/support'
import { makeTestApp } from '../support/app'
import { eventually } from '../support/wait'
import { clusterLab, type Hostile, hostile, registrationFixture } from './support'

// Watches and followed logs go over the member client's own HTTP/1.1 client, each on a connection of
// its own. The member here is a TLS server answering with raw bytes (hostile), so a test sees each
// request head line by line, writes a stream's pieces when it wants, and sees which connections close.

type MemberSocket = Socket<{ id: number; buffered: string }>

const STREAM_HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n'
const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`
const LAST_CHUNK = '0\r\n\r\n'
const event = (name: string) => `${JSON.stringify({ type: 'ADDED', object: { kind: 'Pod', metadata: { name } } })}\n`
const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes)

describe('a watch through the proxy', () => {
  test("bob watches pods of an impersonating org cluster granted to his team → the member's head names him and each group on a line of its own; events reach him as the member sends them", async () => {
    const lab = await clusterLab()
    const { alice, bob } = lab
    let watchSocket: MemberSocket | undefined
    const member = await hostile((_path, _id, socket) => {
      watchSocket = socket
      socket.write(STREAM_HEAD + chunk(event('first')))
    })
    try {
      const { org } = await makeOrg(lab.t, 'acme', { owner: alice, members: [bob] })
      const row = await registrationFixture(lab.t, org, 'shared', member.connection)
      await lab.t.deps.db.write((tx) => store.updateCluster(tx, row.id, { impersonate: true }))
      const team = (await (await lab.t.as(alice).send('POST', '/api/v1/orgs/acme/teams', { name: 'ops', permission: 'read' })).json()) as {
        id: number
      }
      expect((await lab.t.as(alice).send('PUT', `/api/v1/teams/${team.id}/members/bob`)).status).toBe(204)
      expect((await lab.t.as(alice).send('PUT', `/api/v1/teams/${team.id}/clusters/shared`)).status).toBe(204)
      const base = await lab.t.listen()
      const watch = await fetch(`${base}/api/v1/clusters/acme/shared/k8s/api/v1/namespaces/demo/pods?watch=true`, {
        headers: { authorization: `token ${bob.token}` },
      })
      expect(watch.status).toBe(200)
      const reader = watch.body!.getReader()
      expect(text((await reader.read()).value)).toBe(event('first'))

      const head = member.requests[0]!.split('\r\n')
      expect(head[0]).toBe('GET /api/v1/namespaces/demo/pods?watch=true HTTP/1.1')
      expect(head.filter((line) => line.startsWith('impersonate-'))).toEqual([
        'impersonate-user: bob',
        'impersonate-group: platform:org:acme',
        'impersonate-group: platform:team:acme:ops',
      ])
      expect(head).toContain('authorization: Bearer member-token')

      // The member's next event reaches the client while the watch is still open.
      watchSocket!.write(chunk(event('second')))
      expect(text((await reader.read()).value)).toBe(event('second'))
      watchSocket!.write(LAST_CHUNK)
      expect((await reader.read()).done).toBe(true)
    } finally {
      member.stop()
    }
  })
})

const t = await makeTestApp({ PLATFORM_ALLOW_PRIVATE_ENDPOINTS: 'true' })

describe('streams on the member client', () => {
  const memberOf = (raw: Hostile): Member => ({ name: 'member', connection: raw.connection })
  const watchOf = (raw: Hostile, path: string, signal = new AbortController().signal) =>
    streamMember(t.deps, memberOf(raw), { method: 'GET', path, headers: { accept: 'application/json' }, signal })

  test('more watches than the pool keeps connections → each on a connection of its own, and a finite call is still answered; a watch that ends or whose client leaves closes its connection', async () => {
    const watches = new Map<string, MemberSocket>()
    const member = await hostile((path, _id, socket) => {
      if (!path.includes('watch')) return void socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}')
      watches.set(path, socket)
      socket.write(STREAM_HEAD + chunk(event(path)))
    })
    try {
      const leaving = new AbortController()
      const count = MAX_CONNECTIONS_PER_ORIGIN + 1
      const streams = await Promise.all(Array.from({ length: count }, (_, i) => watchOf(member, `/w?watch=${i}`, leaving.signal)))
      expect(new Set([...watches.values()].map((socket) => socket.data.id)).size).toBe(count)
      const finite = await callMember(t.deps, memberOf(member), { path: '/version' })
      expect(finite.status).toBe(200)

      const ending = watches.get('/w?watch=0')!
      const reader = streams[0]!.body.getReader()
      expect(text((await reader.read()).value)).toBe(event('/w?watch=0'))
      ending.write(LAST_CHUNK)
      expect((await reader.read()).done).toBe(true)
      await eventually(() => member.closed.includes(ending.data.id))
      // The next finite call goes on the kept-alive connection, never on the stream's.
      expect((await callMember(t.deps, memberOf(member), { path: '/version' })).status).toBe(200)
      expect(member.requests.filter((head) => head.startsWith('GET /version'))).toHaveLength(2)

      leaving.abort()
      await eventually(() => member.closed.length === count)
      // Only the watches' connections: the kept-alive one stays for the next finite call.
      const watchIds = new Set([...watches.values()].map((socket) => socket.data.id))
      expect(member.closed.every((id) => watchIds.has(id))).toBe(true)
    } finally {
      member.stop()
    }
  })

  test('a member that never sends the head → upstream "did not answer in time" at MEMBER_TIMEOUT_MS; one that sent it may stay silent past that', async () => {
    let quiet: MemberSocket | undefined
    const member = await hostile((path, _id, socket) => {
      if (path.startsWith('/quiet')) {
        quiet = socket
        socket.write(STREAM_HEAD + chunk(event('first')))
      }
    })
    try {
      const never = watchOf(member, '/never?watch=true').catch((error: unknown) => error)
      await eventually(() => member.requests.length === 1)
      t.clock.advance(MEMBER_TIMEOUT_MS)
      const refused = await never
      expect(refused).toBeInstanceOf(AppError)
      expect((refused as AppError).kind).toBe('upstream')
      expect((refused as AppError).message).toBe('cluster "member" did not answer in time')

      const reader = (await watchOf(member, '/quiet?watch=true')).body.getReader()
      expect(text((await reader.read()).value)).toBe(event('first'))
      t.clock.advance(MEMBER_TIMEOUT_MS * 10)
      // Nothing marks a deadline that does not fire: a few sweeps (250 ms each) on the moved clock.
      await Bun.sleep(1_000)
      quiet!.write(chunk(event('after a long silence')))
      expect(text((await reader.read()).value)).toBe(event('after a long silence'))
      await reader.cancel()
    } finally {
      member.stop()
    }
  })

  test('a consumer that does not read → the connection is not read ahead: the member stalls; read later, every byte arrives', async () => {
    const total = 32 * 1024 * 1024
    const piece = `${'x'.repeat(1024 * 1024 - 1)}\n`
    let written = 0
    let stalled = false
    const member = await hostile((_path, _id, socket) => {
      let pending = Buffer.from(STREAM_HEAD)
      // Writes what the socket takes; what it does not is tried again shortly (the platform reads again).
      const more = () => {
        for (;;) {
          const sent = socket.write(pending)
          if (sent < pending.length) {
            stalled = true
            pending = pending.subarray(Math.max(0, sent))
            return void setTimeout(more, 5)
          }
          if (written === total) return
          written += piece.length
          pending = Buffer.from(written === total ? chunk(piece) + LAST_CHUNK : chunk(piece))
        }
      }
      more()
    })
    try {
      const answer = await watchOf(member, '/logs?follow=true')
      await eventually(() => stalled)
      // Nothing marks reading that does not happen: a member left unread for a second is still held.
      await Bun.sleep(1_000)
      expect(written).toBeLessThan(total / 2)
      let received = 0
      const reader = answer.body.getReader()
      for (let read = await reader.read(); !read.done; read = await reader.read()) received += read.value.length
      expect(received).toBe(total)
    } finally {
      member.stop()
    }
  })
})
