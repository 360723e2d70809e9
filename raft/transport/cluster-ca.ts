// raft/transport/cluster-ca.ts owns issuing the mutual-TLS material a Raft cluster's transport
// uses: one cluster CA and one certificate per member (ECDSA P-256 through WebCrypto and
// @peculiar/x509). A member certificate is both server and client certificate, names the member
// in its common name (memberCommonName) and carries the member's IPs and DNS names as SANs.
// Tests, the benchmark and single-machine setups call it; production may bring its own PKI.

// @peculiar/x509 resolves its internals through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { NodeId } from '../types.js';

/** PEM-encoded material one transport needs. */
export interface TlsMaterial {
  /** The cluster CA certificate: peers are trusted iff their certificate chains to it. */
  ca: string;
  /** This member's certificate. */
  cert: string;
  /** This member's PKCS#8 private key. */
  key: string;
}

export interface ClusterCa {
  certPem: string;
  /** Issues a member certificate; `ips` and `dnsNames` become subject alternative names. */
  issueMember(id: NodeId, opts?: { ips?: string[]; dnsNames?: string[] }): Promise<TlsMaterial>;
}

const ALGORITHM: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGNING: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
const DAY_MS = 24 * 3600 * 1000;

/** The crypto provider type @peculiar/x509's generators take. */
type X509Crypto = NonNullable<Parameters<typeof x509.X509CertificateGenerator.create>[1]> & webcrypto.Crypto;

/** The common name of member `id`'s certificate; the transport can require it of a peer. */
export function memberCommonName(id: NodeId): string {
  return `raft-member-${id}`;
}

function toPem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN ${label}-----\n${b64.trimEnd()}\n-----END ${label}-----\n`;
}

/** Creates a fresh cluster CA valid for `validDays` (default ten years, starting an hour ago). */
export async function createClusterCa(opts: { name?: string; validDays?: number } = {}): Promise<ClusterCa> {
  // Node's WebCrypto implements the standard Crypto interface @peculiar/x509 is typed against
  // (the DOM lib's), whose declarations differ only nominally.
  const crypto = webcrypto as unknown as X509Crypto;
  const notBefore = new Date(Date.now() - 3600_000);
  const notAfter = new Date(Date.now() + (opts.validDays ?? 3650) * DAY_MS);
  const caKeys = (await crypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const caCert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: `CN=${opts.name ?? 'clusterd raft CA'}`,
      keys: caKeys,
      notBefore,
      notAfter,
      signingAlgorithm: SIGNING,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  const certPem = caCert.toString('pem');

  return {
    certPem,
    async issueMember(id, memberOpts = {}) {
      const keys = (await crypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
      const ips = memberOpts.ips ?? ['127.0.0.1'];
      const dnsNames = memberOpts.dnsNames ?? ['localhost'];
      const cert = await x509.X509CertificateGenerator.create(
        {
          subject: `CN=${memberCommonName(id)}`,
          issuer: caCert.subject,
          publicKey: keys.publicKey,
          signingKey: caKeys.privateKey,
          notBefore,
          notAfter,
          signingAlgorithm: SIGNING,
          extensions: [
            new x509.BasicConstraintsExtension(false, undefined, true),
            new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyAgreement, true),
            new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
            new x509.SubjectAlternativeNameExtension([
              ...ips.map((value) => ({ type: 'ip' as const, value })),
              ...dnsNames.map((value) => ({ type: 'dns' as const, value })),
            ]),
            await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
          ],
        },
        crypto,
      );
      const pkcs8 = await crypto.subtle.exportKey('pkcs8', keys.privateKey);
      return { ca: certPem, cert: cert.toString('pem'), key: toPem('PRIVATE KEY', pkcs8) };
    },
  };
}
