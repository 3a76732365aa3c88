/**
 * A throw-away CA and a server certificate signed by it: ECDSA P-256 keys from WebCrypto, the
 * certificates built by `@peculiar/x509`, so HTTPS needs neither openssl nor a DER encoder of our own.
 */
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'

export interface ServerTls {
  caCertPem: string
  certPem: string
  keyPem: string
  /** A client certificate the same CA signed (CN=emulator-client, O=system:masters), for mutual TLS. */
  clientCertPem: string
  clientKeyPem: string
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const
const TEN_YEARS_MS = 3650 * 86400_000
/** Who the certificates name: the emulator's by default; `serve` names the platform (cli/server-tls.ts). */
export interface TlsSubjects {
  organization: string
  ca: string
  server: string
}
const EMULATOR: TlsSubjects = { organization: 'platform-api emulator', ca: 'emulator-ca', server: 'kube-apiserver' }

x509.cryptoProvider.set(crypto)

/** 16 random bytes as hex, the top bit clear so the serial stays a positive INTEGER. */
function serialNumber(): string {
  const serial = crypto.getRandomValues(new Uint8Array(16))
  serial[0] &= 0x7f
  return Buffer.from(serial).toString('hex')
}

const isIp = (host: string) => /^[\d.]+$/.test(host) || host.includes(':')

const pem = (label: string, body: ArrayBuffer) =>
  `-----BEGIN ${label}-----\n${Buffer.from(body)
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END ${label}-----\n`

/** A fresh CA, a server certificate for `hosts` (DNS names or IP addresses) and a client certificate, valid ten years. */
export async function generateServerTls(hosts: string[], subjects: TlsSubjects = EMULATOR): Promise<ServerTls> {
  const caKeys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair
  const notBefore = new Date(Date.now() - 3600_000)
  const notAfter = new Date(Date.now() + TEN_YEARS_MS)
  const caSubjectKeyId = await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey)
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `O=${subjects.organization}, CN=${subjects.ca}`,
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      caSubjectKeyId,
    ],
  })
  /** A leaf certificate signed by the CA: its PEM and its private key's. */
  const issue = async (subject: string, usage: x509.ExtendedKeyUsage, extra: x509.Extension[]) => {
    const keys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serialNumber(),
      subject,
      issuer: ca.subject,
      notBefore,
      notAfter,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([usage]),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        new x509.AuthorityKeyIdentifierExtension(caSubjectKeyId.keyId),
        ...extra,
      ],
    })
    return { certPem: `${cert.toString('pem')}\n`, keyPem: pem('PRIVATE KEY', await crypto.subtle.exportKey('pkcs8', keys.privateKey)) }
  }
  const server = await issue(`O=${subjects.organization}, CN=${subjects.server}`, x509.ExtendedKeyUsage.serverAuth, [
    new x509.SubjectAlternativeNameExtension(hosts.map((h) => ({ type: isIp(h) ? ('ip' as const) : ('dns' as const), value: h }))),
  ])
  // Kubernetes reads a client certificate's O as groups: system:masters is cluster-admin.
  const client = await issue('O=system:masters, CN=emulator-client', x509.ExtendedKeyUsage.clientAuth, [])
  return { caCertPem: `${ca.toString('pem')}\n`, ...server, clientCertPem: client.certPem, clientKeyPem: client.keyPem }
}
