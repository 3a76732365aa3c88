/**
 * A throw-away CA and a server certificate signed by it: ECDSA P-256 keys from WebCrypto, the
 * certificates built by `@peculiar/x509`, so HTTPS needs neither openssl nor a DER encoder of our own.
 */
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'

export interface ServerTls { caCertPem: string; certPem: string; keyPem: string }

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const
const TEN_YEARS_MS = 3650 * 86400_000
const ORGANIZATION = 'O=platform-api emulator'

x509.cryptoProvider.set(crypto)

/** 16 random bytes as hex, the top bit clear so the serial stays a positive INTEGER. */
function serialNumber(): string {
  const serial = crypto.getRandomValues(new Uint8Array(16))
  serial[0] &= 0x7f
  return Buffer.from(serial).toString('hex')
}

const isIp = (host: string) => /^[\d.]+$/.test(host) || host.includes(':')

const pem = (label: string, body: ArrayBuffer) =>
  `-----BEGIN ${label}-----\n${Buffer.from(body).toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END ${label}-----\n`

/** A fresh CA and a server certificate for `hosts` (DNS names or IP addresses), valid ten years. */
export async function generateServerTls(hosts: string[]): Promise<ServerTls> {
  const caKeys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair
  const serverKeys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair
  const notBefore = new Date(Date.now() - 3600_000)
  const notAfter = new Date(Date.now() + TEN_YEARS_MS)
  const caSubjectKeyId = await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey)
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(), name: `${ORGANIZATION}, CN=emulator-ca`, notBefore, notAfter, keys: caKeys, signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      caSubjectKeyId,
    ],
  })
  const server = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(), subject: `${ORGANIZATION}, CN=kube-apiserver`, issuer: ca.subject, notBefore, notAfter,
    publicKey: serverKeys.publicKey, signingKey: caKeys.privateKey, signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      await x509.SubjectKeyIdentifierExtension.create(serverKeys.publicKey),
      new x509.AuthorityKeyIdentifierExtension(caSubjectKeyId.keyId),
      new x509.SubjectAlternativeNameExtension(hosts.map((h) => ({ type: isIp(h) ? 'ip' as const : 'dns' as const, value: h }))),
    ],
  })
  const key = await crypto.subtle.exportKey('pkcs8', serverKeys.privateKey)
  return { caCertPem: ca.toString('pem') + '\n', certPem: server.toString('pem') + '\n', keyPem: pem('PRIVATE KEY', key) }
}
