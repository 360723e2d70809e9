// internal/pki/csr-signing owns PKCS#10 certificate requests: reading one from PEM with its
// self-signature checked (what CertificateSigningRequest validation needs, synchronously), and
// issuing the certificate a signer grants for it from a CA: the request's subject and public
// key, the key usages and extended key usages named by the CSR's `usages`, valid from five
// minutes back (clock skew, as upstream backdates) for the granted duration, never past the
// CA's own expiry. Imports: pki/certificates.

import 'reflect-metadata';
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { CertificateAuthority } from './certificates.js';

export interface ParsedRequest {
  csr: x509.Pkcs10CertificateRequest;
  commonName: string;
  organizations: string[];
}

/** Reads the first PEM block; throws with upstream's words when it is not a valid, self-signed request. */
export function parseCertificateRequest(pem: string): ParsedRequest {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/.exec(pem);
  if (!m) throw new Error('PEM block type must be CERTIFICATE REQUEST');
  if (m[1] !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  const der = Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64');
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(der);
  } catch (e) {
    throw new Error(`x509: malformed certificate request: ${e instanceof Error ? e.message : String(e)}`);
  }
  // The to-be-signed bytes are a private getter of the library's class; reading them keeps the
  // check synchronous (validation is), where the library's verify() is async.
  const tbs = (csr as unknown as { tbs: ArrayBuffer }).tbs;
  const hashName = (csr.signatureAlgorithm as { hash?: { name?: string } }).hash?.name ?? 'SHA-256';
  const key = createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' });
  const isRsaPss = key.asymmetricKeyType === 'rsa-pss';
  const ok = verify(hashName.replace('-', '').toLowerCase(), Buffer.from(tbs), isRsaPss ? { key } : key, Buffer.from(csr.signature));
  if (!ok) throw new Error(key.asymmetricKeyType === 'ec' ? 'x509: ECDSA verification failure' : key.asymmetricKeyType === 'ed25519' ? 'x509: Ed25519 verification failure' : 'crypto/rsa: verification error');
  return { csr, commonName: csr.subjectName.getField('CN')[0] ?? '', organizations: csr.subjectName.getField('O') };
}

const KEY_USAGE: Record<string, number> = {
  'signing': x509.KeyUsageFlags.digitalSignature,
  'digital signature': x509.KeyUsageFlags.digitalSignature,
  'content commitment': x509.KeyUsageFlags.nonRepudiation,
  'key encipherment': x509.KeyUsageFlags.keyEncipherment,
  'key agreement': x509.KeyUsageFlags.keyAgreement,
  'data encipherment': x509.KeyUsageFlags.dataEncipherment,
  'cert sign': x509.KeyUsageFlags.keyCertSign,
  'crl sign': x509.KeyUsageFlags.cRLSign,
  'encipher only': x509.KeyUsageFlags.encipherOnly,
  'decipher only': x509.KeyUsageFlags.decipherOnly,
};
const EXT_KEY_USAGE: Record<string, string> = {
  'any': '2.5.29.37.0',
  'server auth': x509.ExtendedKeyUsage.serverAuth,
  'client auth': x509.ExtendedKeyUsage.clientAuth,
  'code signing': x509.ExtendedKeyUsage.codeSigning,
  'email protection': x509.ExtendedKeyUsage.emailProtection,
  's/mime': x509.ExtendedKeyUsage.emailProtection,
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  'timestamping': x509.ExtendedKeyUsage.timeStamping,
  'ocsp signing': x509.ExtendedKeyUsage.ocspSigning,
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** Upstream's KeyUsage values, in its order. */
export const KNOWN_USAGES: readonly string[] = [
  'signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement', 'data encipherment', 'cert sign', 'crl sign', 'encipher only',
  'decipher only', 'any', 'server auth', 'client auth', 'code signing', 'email protection', 's/mime', 'ipsec end system', 'ipsec tunnel', 'ipsec user',
  'timestamping', 'ocsp signing', 'microsoft sgc', 'netscape sgc',
];

/** Upstream's backdate of NotBefore against clock skew. */
const BACKDATE_MS = 5 * 60 * 1000;

export async function signCertificateRequest(ca: CertificateAuthority, request: ParsedRequest, usages: readonly string[], durationMs: number, now = new Date()): Promise<string> {
  let keyUsage = 0;
  const ekus: string[] = [];
  for (const u of usages) {
    if (KEY_USAGE[u] !== undefined) keyUsage |= KEY_USAGE[u]!;
    else if (EXT_KEY_USAGE[u] !== undefined && !ekus.includes(EXT_KEY_USAGE[u]!)) ekus.push(EXT_KEY_USAGE[u]!);
  }
  const extensions: x509.Extension[] = [new x509.BasicConstraintsExtension(false, undefined, true)];
  if (keyUsage) extensions.push(new x509.KeyUsagesExtension(keyUsage, true));
  if (ekus.length) extensions.push(new x509.ExtendedKeyUsageExtension(ekus));
  extensions.push(await x509.AuthorityKeyIdentifierExtension.create(ca.cert));
  const notAfter = new Date(Math.min(now.getTime() + durationMs, ca.cert.notAfter.getTime()));
  const publicKey = await request.csr.publicKey.export();
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial.toString('hex'),
    subject: request.csr.subjectName,
    issuer: ca.cert.subject,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    publicKey,
    signingKey: ca.key,
    extensions,
  });
  return cert.toString('pem') + '\n';
}
