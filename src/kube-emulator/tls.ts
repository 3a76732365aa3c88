/**
 * A throw-away CA and a server certificate signed by it, generated with WebCrypto (ECDSA P-256)
 * and a minimal DER encoder, so HTTPS needs neither openssl nor an X.509 library.
 */

export interface ServerTls { caCertPem: string; certPem: string; keyPem: string }

const OID = {
  ecPublicKey: '1.2.840.10045.2.1', prime256v1: '1.2.840.10045.3.1.7', ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3', organization: '2.5.4.10', basicConstraints: '2.5.29.19', keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37', subjectAltName: '2.5.29.17', subjectKeyId: '2.5.29.14', authorityKeyId: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
}

function der(tag: number, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const n = body.length
  const len = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : n < 0x10000 ? [0x82, n >> 8, n & 0xff] : [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff]
  const out = new Uint8Array(1 + len.length + n)
  out[0] = tag
  out.set(len, 1)
  out.set(body, 1 + len.length)
  return out
}
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) { out.set(p, at); at += p.length }
  return out
}
const seq = (...parts: Uint8Array[]) => der(0x30, concat(...parts))
const set = (...parts: Uint8Array[]) => der(0x31, concat(...parts))
const utf8 = (s: string) => der(0x0c, new TextEncoder().encode(s))
const octets = (b: Uint8Array) => der(0x04, b)
const bits = (b: Uint8Array) => der(0x03, concat(new Uint8Array([0]), b))
const bool = (v: boolean) => der(0x01, new Uint8Array([v ? 0xff : 0]))
const explicit = (n: number, inner: Uint8Array) => der(0xa0 + n, inner)

/** A positive INTEGER from big-endian bytes (leading zeros trimmed, sign byte added when needed). */
function integer(bytes: Uint8Array): Uint8Array {
  let i = 0
  while (i < bytes.length - 1 && bytes[i] === 0) i++
  const trimmed = bytes.slice(i)
  return der(0x02, trimmed[0] & 0x80 ? concat(new Uint8Array([0]), trimmed) : trimmed)
}

function oid(text: string): Uint8Array {
  const [a, b, ...rest] = text.split('.').map(Number)
  const out = [40 * a + b]
  for (const n of rest) {
    const chunk = [n & 0x7f]
    for (let v = n >>> 7; v > 0; v >>>= 7) chunk.unshift((v & 0x7f) | 0x80)
    out.push(...chunk)
  }
  return der(0x06, new Uint8Array(out))
}

/** GeneralizedTime, valid for any year (UTCTime stops at 2049). */
function time(d: Date): Uint8Array {
  const s = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z'
  return der(0x18, new TextEncoder().encode(s))
}

const name = (cn: string) => seq(
  set(seq(oid(OID.organization), utf8('platform-api emulator'))),
  set(seq(oid(OID.commonName), utf8(cn))),
)

function ipBytes(ip: string): Uint8Array {
  if (ip.includes(':')) {
    const [head, tail = ''] = ip.split('::')
    const h = head ? head.split(':') : []
    const t = tail ? tail.split(':') : []
    const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t]
    return new Uint8Array(groups.flatMap((g) => { const n = parseInt(g, 16); return [n >> 8, n & 0xff] }))
  }
  return new Uint8Array(ip.split('.').map(Number))
}

const extension = (id: string, critical: boolean, value: Uint8Array) =>
  seq(oid(id), ...(critical ? [bool(true)] : []), octets(value))

/** ECDSA signatures from WebCrypto are r||s; X.509 wants SEQUENCE { INTEGER r, INTEGER s }. */
function derSignature(raw: Uint8Array): Uint8Array {
  return seq(integer(raw.slice(0, 32)), integer(raw.slice(32)))
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const

async function keyId(publicKey: CryptoKey): Promise<Uint8Array> {
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', publicKey))
  return new Uint8Array(await crypto.subtle.digest('SHA-1', raw))
}

interface CertInput { subject: string; issuer: string; publicKey: CryptoKey; signer: CryptoKey; issuerKeyId: Uint8Array; ca: boolean; hosts: string[] }

async function certificate(c: CertInput): Promise<Uint8Array> {
  const spki = new Uint8Array(await crypto.subtle.exportKey('spki', c.publicKey))
  const serial = crypto.getRandomValues(new Uint8Array(16))
  serial[0] &= 0x7f
  const ski = await keyId(c.publicKey)
  const sans = c.hosts.map((h) => (/^[\d.]+$/.test(h) || h.includes(':') ? der(0x87, ipBytes(h)) : der(0x82, new TextEncoder().encode(h))))
  const extensions = [
    extension(OID.basicConstraints, true, c.ca ? seq(bool(true)) : seq()),
    // keyUsage bits: digitalSignature (0x80), keyCertSign (0x04), cRLSign (0x02)
    extension(OID.keyUsage, true, der(0x03, new Uint8Array(c.ca ? [1, 0x86] : [7, 0x80]))),
    extension(OID.subjectKeyId, false, octets(ski)),
    extension(OID.authorityKeyId, false, seq(der(0x80, c.issuerKeyId))),
    ...(c.ca ? [] : [extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))), extension(OID.subjectAltName, false, seq(...sans))]),
  ]
  const algorithm = seq(oid(OID.ecdsaWithSha256))
  const now = Date.now()
  const tbs = seq(
    explicit(0, der(0x02, new Uint8Array([2]))),
    integer(serial),
    algorithm,
    name(c.issuer),
    seq(time(new Date(now - 3600_000)), time(new Date(now + 3650 * 86400_000))),
    name(c.subject),
    spki,
    explicit(3, seq(...extensions)),
  )
  const signature = new Uint8Array(await crypto.subtle.sign(SIGN, c.signer, tbs))
  return seq(tbs, algorithm, bits(derSignature(signature)))
}

const pem = (label: string, body: Uint8Array) =>
  `-----BEGIN ${label}-----\n${Buffer.from(body).toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END ${label}-----\n`

/** A fresh CA and a server certificate for `hosts` (DNS names or IP addresses), valid ten years. */
export async function generateServerTls(hosts: string[]): Promise<ServerTls> {
  const ca = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair
  const server = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair
  const caKeyId = await keyId(ca.publicKey)
  const caCert = await certificate({ subject: 'emulator-ca', issuer: 'emulator-ca', publicKey: ca.publicKey, signer: ca.privateKey, issuerKeyId: caKeyId, ca: true, hosts: [] })
  const serverCert = await certificate({ subject: 'kube-apiserver', issuer: 'emulator-ca', publicKey: server.publicKey, signer: ca.privateKey, issuerKeyId: caKeyId, ca: false, hosts })
  const key = new Uint8Array(await crypto.subtle.exportKey('pkcs8', server.privateKey))
  return { caCertPem: pem('CERTIFICATE', caCert), certPem: pem('CERTIFICATE', serverCert), keyPem: pem('PRIVATE KEY', key) }
}
