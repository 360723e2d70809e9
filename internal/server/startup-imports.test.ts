// What importing the server loads: libraries that a start does not use stay unloaded until
// something needs them (each costs start-up CPU and resident memory in every process), and the
// first use loads them synchronously, so the first request that needs one does not fail.

import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const loaded = (pkg: string): boolean => Object.keys(createRequire(import.meta.url).cache).some((p) => p.includes(`/node_modules/${pkg}/`));

describe('server start-up imports', () => {
  it('importing the server loads none of the libraries required on first use', async () => {
    await import('./server.js');
    for (const pkg of ['@peculiar/x509', 'protobufjs', 're2js', 'undici']) expect(loaded(pkg), pkg).toBe(false);
  });

  it('does not load the certificate library until a certificate is read or issued', async () => {
    await import('./server.js');
    expect(loaded('@peculiar/x509')).toBe(false);
    // Reading a certificate request loads it, synchronously.
    const { parseCertificateRequest } = await import('../pki/csr-signing.js');
    expect(() => parseCertificateRequest('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n')).toThrow(/malformed certificate request/);
    expect(loaded('@peculiar/x509')).toBe(true);
  });

  it('loads protobufjs when the OpenAPI v2 document is first encoded as protobuf, and the encoding reads back', async () => {
    await import('./server.js');
    expect(loaded('protobufjs')).toBe(false);
    const { decodeOpenApiV2, encodeOpenApiV2 } = await import('../openapi/openapi-v2-proto.js');
    const doc = { swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.35.0' }, paths: {} };
    const decoded = decodeOpenApiV2(encodeOpenApiV2(doc));
    expect(loaded('protobufjs')).toBe(true);
    expect(decoded).toMatchObject({ swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.35.0' } });
  });

  it('loads re2js when a schema pattern or a CEL regex is first compiled, with RE2 semantics and errors', async () => {
    await import('./server.js');
    expect(loaded('re2js')).toBe(false);
    const { compilePattern } = await import('../validation/value-rules.js');
    const compiled = compilePattern('^[a-z]+$');
    expect(loaded('re2js')).toBe(true);
    if (compiled instanceof Error) throw compiled;
    expect(compiled.re.matches('abc')).toBe(true);
    expect(compiled.re.matches('ab1')).toBe(false);
    // Go's error text, and RE2 refuses backreferences where JavaScript accepts them.
    expect(compilePattern('[')).toBeInstanceOf(Error);
    expect(String(compilePattern('(a)\\1'))).toMatch(/error parsing regexp/);
    const { compileRegex } = await import('../cel/lib/regex.js');
    expect(compileRegex('b+').test('abbb')).toBe(true);
  });
});
