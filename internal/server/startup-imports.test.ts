// What importing the server loads: libraries that a start does not use stay unloaded until
// something needs them (each costs start-up CPU and resident memory in every process).

import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

describe('server start-up imports', () => {
  it('does not load the certificate library until a certificate is read or issued', async () => {
    await import('./server.js');
    const cache = createRequire(import.meta.url).cache;
    const loaded = Object.keys(cache).filter((p) => p.includes('/node_modules/@peculiar/x509/'));
    expect(loaded).toEqual([]);
    // Reading a certificate request loads it, synchronously.
    const { parseCertificateRequest } = await import('../pki/csr-signing.js');
    expect(() => parseCertificateRequest('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n')).toThrow(/malformed certificate request/);
    expect(Object.keys(cache).some((p) => p.includes('/node_modules/@peculiar/x509/'))).toBe(true);
  });
});
