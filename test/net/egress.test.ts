import { afterEach, describe, expect, test } from 'bun:test'
import { classifyAddress, EgressRefused, egressFetch, resolveChecked } from '../../src/net/egress'

const strict = { allowPrivate: false }
const lenient = { allowPrivate: true }

// Every spelling of the instance-metadata service that URL parsing or the resolver accepts.
const METADATA_URLS = [
  'http://169.254.169.254/latest/meta-data/',
  'http://2852039166/',
  'http://0xa9fea9fe/',
  'http://0251.0376.0251.0376/',
  'http://169.254.43518/',
  'http://[::ffff:169.254.169.254]/',
  'http://[::ffff:a9fe:a9fe]/',
  'http://[::169.254.169.254]/',
  'http://[64:ff9b::169.254.169.254]/',
  'http://[2002:a9fe:a9fe::1]/',
  'http://[fd00:ec2::254]/',
  // ECS task credentials and EKS Pod Identity (IPv4 and IPv6): credentials as well.
  'http://169.254.170.2/v2/credentials/x',
  'http://169.254.170.23/v1/credentials',
  'http://[fd00:ec2::23]/v1/credentials',
  'http://[::ffff:169.254.170.23]/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://METADATA.GOOGLE.INTERNAL./',
]

const PRIVATE_URLS = [
  'http://127.0.0.1/',
  'http://127.1/',
  'http://localhost/',
  'http://[::1]/',
  'http://0.0.0.0/',
  'http://10.0.0.1/',
  'http://172.16.5.4/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://[fc00::1]/',
  'http://[fe80::1]/',
  'http://224.0.0.1/',
  'http://[::ffff:127.0.0.1]/',
  'http://[64:ff9b::10.0.0.1]/',
]

describe('egress guard', () => {
  for (const url of METADATA_URLS)
    test(`${url} → refused even when private endpoints are allowed`, async () => {
      const refusal = await resolveChecked(new URL(url), lenient).catch((e: unknown) => e)
      expect(refusal).toBeInstanceOf(EgressRefused)
      expect((refusal as Error).message).toContain('metadata')
    })

  for (const url of PRIVATE_URLS) {
    test(`${url} → refused by default, naming the setting that allows it`, async () => {
      const refusal = await resolveChecked(new URL(url), strict).catch((e: unknown) => e)
      expect(refusal).toBeInstanceOf(EgressRefused)
      expect((refusal as Error).message).toContain('PLATFORM_ALLOW_PRIVATE_ENDPOINTS')
    })
  }

  test('a private address is allowed when the policy allows private endpoints', async () => {
    expect(await resolveChecked(new URL('http://127.0.0.1:9000/'), lenient)).toBe('127.0.0.1')
  })

  test('public addresses, IPv4 and IPv6, are public', () => {
    expect(classifyAddress('8.8.8.8')).toBe('public')
    expect(classifyAddress('2001:4860:4860::8888')).toBe('public')
  })

  test('a scheme other than http(s) and embedded credentials → refused', async () => {
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'https://user:pw@example.com/'])
      expect(await resolveChecked(new URL(url), lenient).catch((e: unknown) => e)).toBeInstanceOf(EgressRefused)
  })

  test('a name that does not resolve → refused naming DNS', async () => {
    const refusal = await resolveChecked(new URL('https://no-such-host.invalid/'), lenient).catch((e: unknown) => e)
    expect((refusal as Error).message).toContain('DNS')
  })
})

describe('egressFetch', () => {
  let server: ReturnType<typeof Bun.serve> | undefined
  afterEach(() => server?.stop(true))
  const hits: { host: string | null; path: string }[] = []
  const start = () => {
    hits.length = 0
    server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(request) {
        const url = new URL(request.url)
        hits.push({ host: request.headers.get('host'), path: url.pathname })
        return url.pathname === '/moved' ? Response.redirect('http://169.254.169.254/', 302) : new Response('ok')
      },
    })
    return server.port
  }

  test('a loopback target under the strict policy → refused, the listener sees no connection', async () => {
    const port = start()
    const refusal = await egressFetch(`http://localhost:${port}/`, {}, strict).catch((e: unknown) => e)
    expect(refusal).toBeInstanceOf(EgressRefused)
    expect(hits).toHaveLength(0)
  })

  test('an allowed target is reached at the checked address with the original Host header', async () => {
    const port = start()
    const res = await egressFetch(`http://localhost:${port}/x`, {}, lenient)
    expect(await res.text()).toBe('ok')
    expect(hits).toEqual([{ host: `localhost:${port}`, path: '/x' }])
  })

  test('a redirect is returned as it is, never followed', async () => {
    const port = start()
    const res = await egressFetch(`http://127.0.0.1:${port}/moved`, {}, lenient)
    expect(res.status).toBe(302)
    expect(hits).toHaveLength(1)
  })
})
