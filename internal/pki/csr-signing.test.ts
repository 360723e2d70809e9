// Certificate requests made by the real openssl (EC and RSA keys): read with their
// self-signature checked, a tampered one refused, and the issued certificate carrying the
// request's subject and key, the asked usages, the duration (capped by the CA) and the CA as
// issuer (verified with node:crypto).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority } from './certificates.js';
import { parseCertificateRequest, signCertificateRequest } from './csr-signing.js';

const dir = mkdtempSync(join(tmpdir(), 'csr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function openssl(kind: 'ec' | 'rsa', subject: string): string {
  const key = join(dir, `${kind}.key`);
  const csr = join(dir, `${kind}.csr`);
  const newkey = kind === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'] : ['-newkey', 'rsa:2048'];
  execFileSync('openssl', ['req', '-new', ...newkey, '-nodes', '-keyout', key, '-out', csr, '-subj', subject], { stdio: 'ignore' });
  return readFileSync(csr, 'utf8');
}

describe('certificate requests', () => {
  for (const kind of ['ec', 'rsa'] as const) {
    it(`reads and signs an openssl ${kind} request`, async () => {
      const pem = openssl(kind, '/CN=alice/O=devs/O=ops');
      const req = parseCertificateRequest(pem);
      expect(req.commonName).toBe('alice');
      expect(req.organizations).toEqual(['devs', 'ops']);
      const ca = await createCertificateAuthority('test-ca');
      const now = new Date();
      const certPem = await signCertificateRequest(ca, req, ['digital signature', 'key encipherment', 'client auth'], 3600_000, now);
      const cert = new X509Certificate(certPem);
      expect(cert.subject.split('\n')).toEqual(['CN=alice', 'O=devs', 'O=ops']);
      expect(cert.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
      expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
      expect(Date.parse(cert.validTo) - now.getTime()).toBeGreaterThan(3590_000);
      expect(Date.parse(cert.validTo) - now.getTime()).toBeLessThanOrEqual(3600_000);
      expect(cert.publicKey.export({ format: 'pem', type: 'spki' })).toBe(execFileSync('openssl', ['pkey', '-in', join(dir, `${kind}.key`), '-pubout']).toString());
    });
  }
  it('refuses other PEM blocks and a request whose signature does not match', () => {
    expect(() => parseCertificateRequest('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')).toThrow('PEM block type must be CERTIFICATE REQUEST');
    expect(() => parseCertificateRequest('garbage')).toThrow('PEM block type must be CERTIFICATE REQUEST');
    const pem = openssl('ec', '/CN=bob');
    const der = Buffer.from(pem.split('\n').filter((l) => l && !l.startsWith('-----')).join(''), 'base64');
    // Flip a byte of the subject (inside the signed part).
    const i = der.indexOf(Buffer.from('bob'));
    der[i] = 'c'.charCodeAt(0);
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    expect(() => parseCertificateRequest(tampered)).toThrow(/verification failure/);
  });
  it('never issues past the CA expiry', async () => {
    const ca = await createCertificateAuthority('short-ca', 1);
    const cert = new X509Certificate(await signCertificateRequest(ca, parseCertificateRequest(openssl('ec', '/CN=carol')), ['client auth'], 365 * 86400_000));
    expect(Date.parse(cert.validTo)).toBeLessThanOrEqual(ca.cert.notAfter.getTime());
  });
});
