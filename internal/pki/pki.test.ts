import { describe, it, expect } from 'vitest';
import { mkdtempSync, readFileSync, statSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { ensurePki, writeAdminKubeconfig } from './pki.js';

describe('ensurePki', () => {
  it('generates the CA, serving, admin and service-account keys once, private keys 0600', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clusterd-pki-'));
    try {
      const p = await ensurePki(dir, '127.0.0.2');
      const ca = new X509Certificate(readFileSync(p.caCert));
      const server = new X509Certificate(readFileSync(p.serverCert));
      const admin = new X509Certificate(readFileSync(p.adminCert));
      expect(ca.ca).toBe(true);
      expect(server.verify(ca.publicKey)).toBe(true);
      expect(admin.verify(ca.publicKey)).toBe(true);
      expect(server.subjectAltName).toContain('DNS:localhost');
      expect(server.subjectAltName).toContain('IP Address:127.0.0.1');
      expect(server.subjectAltName).toContain('IP Address:0:0:0:0:0:0:0:1');
      expect(server.subjectAltName).toContain('IP Address:127.0.0.2');
      // In-cluster clients dial the kubernetes Service by its cluster IP or its full DNS name.
      expect(server.subjectAltName).toContain('IP Address:10.96.0.1');
      expect(server.subjectAltName).toContain('DNS:kubernetes.default.svc.cluster.local');
      expect(admin.subject).toContain('CN=admin');
      expect(admin.subject).toContain('O=system:masters');
      for (const key of [p.caKey, p.serverKey, p.adminKey, p.saKey]) expect(statSync(key).mode & 0o777).toBe(0o600);
      expect(readFileSync(p.saPub, 'utf8')).toContain('BEGIN PUBLIC KEY');
      const before = readFileSync(p.caCert, 'utf8');
      await ensurePki(dir, '127.0.0.2');
      expect(readFileSync(p.caCert, 'utf8')).toBe(before);
      const kubeconfig = readFileSync(writeAdminKubeconfig(dir, p, 'https://127.0.0.1:6443'), 'utf8');
      expect(kubeconfig).toContain('server: https://127.0.0.1:6443');
      expect(kubeconfig).toContain('client-certificate-data: ');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
