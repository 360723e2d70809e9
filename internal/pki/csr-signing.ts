// internal/pki/csr-signing owns PKCS#10 certificate requests: reading one from PEM with its
// self-signature checked (what CertificateSigningRequest validation needs, synchronously), and
// issuing the certificate a signer grants for it from a CA: the request's subject and public
// key, the key usages and extended key usages named by the CSR's `usages`, valid from five
// minutes back (clock skew, as upstream backdates) for the granted duration, never past the
// CA's own expiry. The certificate library (about 0.3 s of CPU and 11 MB to load) is required
// on first use, not at import: validation and admission import this module, and a server start
// that reads no certificate request must not pay for it. Imports: pki/certificates (types), lazy.

import { createPublicKey, randomBytes, verify } from 'node:crypto';
import type * as X509 from '@peculiar/x509';
import { lazyRequire } from '../lazy/lazy-require.js';
import type { CertificateAuthority } from './certificates.js';

/** @peculiar/x509, loaded synchronously on first use (validation is synchronous). */
// Its dependency injection needs the polyfill loaded first.
const x509 = lazyRequire<typeof X509>('@peculiar/x509', ['reflect-metadata']);

export interface ParsedRequest {
  csr: X509.Pkcs10CertificateRequest;
  commonName: string;
  organizations: string[];
}

/** Reads the first PEM block; throws with upstream's words when it is not a valid, self-signed request. */
export function parseCertificateRequest(pem: string): ParsedRequest {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/.exec(pem);
  if (!m) throw new Error('PEM block type must be CERTIFICATE REQUEST');
  if (m[1] !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  const der = Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64');
  let csr: X509.Pkcs10CertificateRequest;
  try {
    csr = new (x509().Pkcs10CertificateRequest)(der);
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

let usageTables: { keyUsage: Record<string, number>; extKeyUsage: Record<string, string> } | undefined;
/** The names of key usages and extended key usages as the library spells them. */
function usageTable(): { keyUsage: Record<string, number>; extKeyUsage: Record<string, string> } {
  if (usageTables) return usageTables;
  const x = x509();
  const KEY_USAGE: Record<string, number> = {
    'signing': x.KeyUsageFlags.digitalSignature,
    'digital signature': x.KeyUsageFlags.digitalSignature,
    'content commitment': x.KeyUsageFlags.nonRepudiation,
    'key encipherment': x.KeyUsageFlags.keyEncipherment,
    'key agreement': x.KeyUsageFlags.keyAgreement,
    'data encipherment': x.KeyUsageFlags.dataEncipherment,
    'cert sign': x.KeyUsageFlags.keyCertSign,
    'crl sign': x.KeyUsageFlags.cRLSign,
    'encipher only': x.KeyUsageFlags.encipherOnly,
    'decipher only': x.KeyUsageFlags.decipherOnly,
  };
  const EXT_KEY_USAGE: Record<string, string> = {
    'any': '2.5.29.37.0',
    'server auth': x.ExtendedKeyUsage.serverAuth,
    'client auth': x.ExtendedKeyUsage.clientAuth,
    'code signing': x.ExtendedKeyUsage.codeSigning,
    'email protection': x.ExtendedKeyUsage.emailProtection,
    's/mime': x.ExtendedKeyUsage.emailProtection,
    'ipsec end system': '1.3.6.1.5.5.7.3.5',
    'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
    'ipsec user': '1.3.6.1.5.5.7.3.7',
    'timestamping': x.ExtendedKeyUsage.timeStamping,
    'ocsp signing': x.ExtendedKeyUsage.ocspSigning,
    'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
    'netscape sgc': '2.16.840.1.113730.4.1',
  };
  return (usageTables = { keyUsage: KEY_USAGE, extKeyUsage: EXT_KEY_USAGE });
}

/** Upstream's KeyUsage values, in its order. */
export const KNOWN_USAGES: readonly string[] = [
  'signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement', 'data encipherment', 'cert sign', 'crl sign', 'encipher only',
  'decipher only', 'any', 'server auth', 'client auth', 'code signing', 'email protection', 's/mime', 'ipsec end system', 'ipsec tunnel', 'ipsec user',
  'timestamping', 'ocsp signing', 'microsoft sgc', 'netscape sgc',
];

/** Upstream's backdate of NotBefore against clock skew. */
const BACKDATE_MS = 5 * 60 * 1000;

export async function signCertificateRequest(ca: CertificateAuthority, request: ParsedRequest, usages: readonly string[], durationMs: number, now = new Date()): Promise<string> {
  const x = x509();
  const { keyUsage: KEY_USAGE, extKeyUsage: EXT_KEY_USAGE } = usageTable();
  let keyUsage = 0;
  const ekus: string[] = [];
  for (const u of usages) {
    if (KEY_USAGE[u] !== undefined) keyUsage |= KEY_USAGE[u]!;
    else if (EXT_KEY_USAGE[u] !== undefined && !ekus.includes(EXT_KEY_USAGE[u]!)) ekus.push(EXT_KEY_USAGE[u]!);
  }
  const extensions: X509.Extension[] = [new x.BasicConstraintsExtension(false, undefined, true)];
  if (keyUsage) extensions.push(new x.KeyUsagesExtension(keyUsage, true));
  if (ekus.length) extensions.push(new x.ExtendedKeyUsageExtension(ekus));
  extensions.push(await x.AuthorityKeyIdentifierExtension.create(ca.cert));
  const notAfter = new Date(Math.min(now.getTime() + durationMs, ca.cert.notAfter.getTime()));
  const publicKey = await request.csr.publicKey.export();
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const cert = await x.X509CertificateGenerator.create({
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
