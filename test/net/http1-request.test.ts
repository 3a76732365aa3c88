import { describe, expect, test } from 'bun:test'
import { encodeRequest, type Origin, UnsafeRequest } from '../../src/net/http1/request'

// The bytes the member client writes: nothing a caller puts in a path or header may change the
// request line or add a header on the wire.

const origin: Origin = {
  dial: async () => ({ address: '127.0.0.1', port: 1 }),
  tls: undefined,
  hostHeader: 'member:6443',
  basePath: '',
  fixedHeaders: '',
}

const encode = (path: string, headers: Record<string, string> = {}) =>
  Buffer.from(encodeRequest(origin, { method: 'GET', path, headers, body: null, timeoutMs: 0 })).toString('latin1')

describe('encodeRequest', () => {
  test('a percent-encoded path is written as it is, in one request line', () => {
    expect(encode('/apis/%F0%9F%98%80/v1?x=a%20b')).toStartWith('GET /apis/%F0%9F%98%80/v1?x=a%20b HTTP/1.1\r\nhost: member:6443\r\n')
  })

  test('a path with a space, a line break, a control or a character outside ASCII is refused', () => {
    for (const path of ['/a b', '/a\r\nx-injected: 1', '/a\u0000', '/a\u007f', '/😀', '/é', 'relative'])
      expect(() => encode(path)).toThrow(UnsafeRequest)
  })

  test('a header value with a line break is refused', () => {
    expect(() => encode('/', { 'x-a': 'b\r\nimpersonate-user: admin' })).toThrow(UnsafeRequest)
  })
})
