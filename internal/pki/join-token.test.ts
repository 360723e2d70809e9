import { describe, it, expect, beforeAll } from 'vitest';
import { X509Certificate } from 'node:crypto';
import { createCertificateAuthority } from './certificates.js';
import { caHashOf, joinSecretMatches, JoinTokenError, makeJoinToken, parseJoinToken, verifyCaHash } from './join-token.js';

let caPem: string;
let otherCaPem: string;

beforeAll(async () => {
  caPem = (await createCertificateAuthority('test-peer-ca')).certPem;
  otherCaPem = (await createCertificateAuthority('test-peer-ca')).certPem;
});

// The certificate's SHA-256 fingerprint as Node computes it, as an independent check of the hash.
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256.replace(/:/g, '').toLowerCase();

describe('makeJoinToken / parseJoinToken', () => {
  it('pins the CA by the SHA-256 of its DER and carries a 128-bit hex secret', () => {
    const token = makeJoinToken(caPem);
    expect(token).toMatch(/^K10[0-9a-f]{64}::[0-9a-f]{32}$/);
    const parsed = parseJoinToken(token);
    expect(parsed.caHash).toBe(fingerprint(caPem));
    expect(caHashOf(caPem)).toBe(parsed.caHash);
    expect(token).toBe(`K10${parsed.caHash}::${parsed.secret}`);
  });

  it('makes a different secret every time', () => {
    const a = parseJoinToken(makeJoinToken(caPem));
    const b = parseJoinToken(makeJoinToken(caPem));
    expect(a.caHash).toBe(b.caHash);
    expect(a.secret).not.toBe(b.secret);
  });

  it('ignores surrounding white space (a token read from a file) and normalizes hex case', () => {
    const token = makeJoinToken(caPem);
    const upper = `K10${token.slice(3).toUpperCase()}`;
    expect(parseJoinToken(`  ${upper}\n`)).toEqual(parseJoinToken(token));
  });

  const hash = 'a'.repeat(64);
  const secret = 'b'.repeat(32);
  it.each([
    ['', /empty/],
    ['   \n', /empty/],
    [`K11${hash}::${secret}`, /must start with "K10"/],
    [`${hash}::${secret}`, /must start with "K10"/],
    [`K10${hash}:${secret}`, /no "::"/],
    [`K10${hash}${secret}`, /no "::"/],
    [`K10${hash.slice(1)}::${secret}`, /CA hash must be 64 hex digits .*got 63 characters$/],
    [`K10${'g'.repeat(64)}::${secret}`, /CA hash must be 64 hex digits .*non-hex/],
    [`K10::${secret}`, /CA hash must be 64 hex digits .*got 0 characters/],
    [`K10${hash}::${secret}0`, /secret must be 32 hex digits, got 33 characters$/],
    [`K10${hash}::`, /secret must be 32 hex digits, got 0 characters/],
    // k3s' full format K10<hash>::<user>:<password> is not this cluster's format.
    [`K10${hash}::server:${secret}`, /secret must be 32 hex digits.*non-hex/],
    [`K10${hash}::${secret}::${secret}`, /secret must be 32 hex digits.*non-hex/],
  ])('rejects %j with a clear message', (token, message) => {
    let error: unknown;
    try {
      parseJoinToken(token);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(JoinTokenError);
    expect((error as Error).message).toMatch(message);
    // The token is a credential: messages must not repeat it.
    if (token.trim().length > 8) expect((error as Error).message).not.toContain(token.trim());
  });
});

describe('verifyCaHash', () => {
  it('accepts the pinned CA and nothing else', () => {
    const { caHash } = parseJoinToken(makeJoinToken(caPem));
    expect(verifyCaHash(caPem, caHash)).toBe(true);
    expect(verifyCaHash(caPem, caHash.toUpperCase())).toBe(true);
    expect(verifyCaHash(otherCaPem, caHash)).toBe(false);
    expect(verifyCaHash(caPem, caHash.slice(1) + '0')).toBe(false);
  });

  it('answers false for a hash or PEM that does not parse', () => {
    const { caHash } = parseJoinToken(makeJoinToken(caPem));
    expect(verifyCaHash(caPem, 'not-a-hash')).toBe(false);
    expect(verifyCaHash(caPem, caHash.slice(2))).toBe(false);
    expect(verifyCaHash('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', caHash)).toBe(false);
    expect(verifyCaHash('', caHash)).toBe(false);
  });
});

describe('joinSecretMatches', () => {
  it('compares the secret, in either hex case, and refuses anything malformed', () => {
    const token = parseJoinToken(makeJoinToken(caPem));
    expect(joinSecretMatches(token, token.secret)).toBe(true);
    expect(joinSecretMatches(token, token.secret.toUpperCase())).toBe(true);
    expect(joinSecretMatches(token, token.secret.replace(/^./, (c) => (c === '0' ? '1' : '0')))).toBe(false);
    expect(joinSecretMatches(token, token.secret.slice(1))).toBe(false);
    expect(joinSecretMatches(token, '')).toBe(false);
  });
});
