// internal/pki/certificates owns X.509 issuance: a self-signed CA, serving certificates with
// SANs, and client certificates whose CN is the user and O entries the groups. Keys are ECDSA
// P-256 (fast to make, accepted by kubectl, Go, Python and Node TLS). @peculiar/x509 builds the
// certificates over WebCrypto; its dependency injection needs the reflect-metadata polyfill.
// Imports: nothing from the project.

import 'reflect-metadata';
import { webcrypto, randomBytes, createPrivateKey } from 'node:crypto';
import * as x509 from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;

// @peculiar/x509 types its provider as the DOM Crypto, which this Node-only build does not declare.
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

export interface CertificateAuthority extends KeyPairPem {
  cert: x509.X509Certificate;
  key: CryptoKey;
}

/** Escapes a value for an X.500 name string (`CN=...`). */
function rdn(value: string): string {
  return value.replace(/([,+"\\<>;=])/g, '\\$1');
}

async function exportKeyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  // Re-export through node so the PEM is the plain "PRIVATE KEY" form every client reads.
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs8' }).toString();
}

const serial = (): string => {
  const b = randomBytes(16);
  b[0]! &= 0x7f; // positive
  return b.toString('hex');
};

export async function createCertificateAuthority(commonName: string, validDays = 3650): Promise<CertificateAuthority> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${rdn(commonName)}`,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + validDays * DAY_MS),
    signingAlgorithm: ALGORITHM,
    keys: keys as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'],
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, key: keys.privateKey, certPem: cert.toString('pem') + '\n', keyPem: await exportKeyPem(keys.privateKey) };
}

/** Loads a CA from PEM (the key must be an unencrypted PKCS#8 or SEC1 EC key). */
export async function loadCertificateAuthority(certPem: string, keyPem: string): Promise<CertificateAuthority> {
  const cert = new x509.X509Certificate(certPem);
  const der = createPrivateKey(keyPem).export({ format: 'der', type: 'pkcs8' });
  const key = await webcrypto.subtle.importKey('pkcs8', der, ALGORITHM, true, ['sign']);
  return { cert, key, certPem, keyPem };
}

export interface IssueOptions {
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  usage: 'server' | 'client' | 'both';
  validDays?: number;
}

export async function issueCertificate(ca: CertificateAuthority, options: IssueOptions): Promise<KeyPairPem> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const subject = [`CN=${rdn(options.commonName)}`, ...(options.organizations ?? []).map((o) => `O=${rdn(o)}`)].join(', ');
  const ekus =
    options.usage === 'server'
      ? [x509.ExtendedKeyUsage.serverAuth]
      : options.usage === 'client'
        ? [x509.ExtendedKeyUsage.clientAuth]
        : [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(ekus),
    await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
  ];
  const names: x509.JsonGeneralName[] = [
    ...(options.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(options.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  if (names.length) extensions.push(new x509.SubjectAlternativeNameExtension(names));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject,
    issuer: ca.cert.subject,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + (options.validDays ?? 365) * DAY_MS),
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: ca.key,
    extensions,
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportKeyPem(keys.privateKey) };
}
