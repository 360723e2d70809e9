import { describe, it, expect, beforeAll } from 'vitest';
import { X509Certificate } from 'node:crypto';
import { createCertificateAuthority } from './certificates.js';
import {
  caHashOf, formatJoinToken, hashJoinSecret, joinSecretHashMatches, joinTokenId, JoinTokenError, makeJoinToken, newTokenParts, parseJoinToken, TOKEN_ID, verifyCaHash,
} from './join-token.js';

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

describe('created tokens (kubeadm form <id>.<secret>)', () => {
  it('newTokenParts draws a 6-character id and a 16-character secret of [a-z0-9], different every time', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const { id, secret } = newTokenParts();
      expect(id).toMatch(TOKEN_ID);
      expect(secret).toMatch(/^[a-z0-9]{16}$/);
      seen.add(`${id}.${secret}`);
    }
    expect(seen.size).toBe(200);
  });

  it('uses the whole alphabet (no modulo bias that drops letters or digits)', () => {
    const chars = new Set(Array.from({ length: 200 }, () => newTokenParts().secret).join(''));
    expect([...chars].sort().join('')).toBe('0123456789abcdefghijklmnopqrstuvwxyz');
  });

  it('formats as K10<ca hash>::<id>.<secret> and parses back with its id', () => {
    const caHash = caHashOf(caPem);
    const token = formatJoinToken(caHash, 'abc123', '0123456789abcdef');
    expect(token).toBe(`K10${caHash}::abc123.0123456789abcdef`);
    expect(parseJoinToken(`${token}\n`)).toEqual({ caHash, id: 'abc123', secret: '0123456789abcdef' });
    expect(joinTokenId(parseJoinToken(token))).toBe('abc123');
  });

  const hash = 'a'.repeat(64);
  it.each([
    [`K10${hash}::abc12.0123456789abcdef`],
    [`K10${hash}::abc123.0123456789abcde`],
    [`K10${hash}::ABC123.0123456789abcdef`],
    [`K10${hash}::abc123.0123456789abcdef.x`],
    [`K10${hash}::.`],
  ])('rejects the malformed created form %j, naming the expected shape and not the token', (token) => {
    expect(() => parseJoinToken(token)).toThrow(/secret must be <id>\.<secret> with 6 and 16 characters of a-z and 0-9/);
    try {
      parseJoinToken(token);
    } catch (e) {
      const secret = token.slice(token.indexOf('::') + 2);
      if (secret.length > 2) expect((e as Error).message).not.toContain(secret);
    }
  });
});

describe('joinTokenId', () => {
  it("derives the join-token file's id from its secret: stable, 6 characters, independent of hex case", () => {
    const file = parseJoinToken(makeJoinToken(caPem));
    expect(file.id).toBeUndefined();
    const id = joinTokenId(file);
    expect(id).toMatch(TOKEN_ID);
    expect(joinTokenId({ secret: file.secret.toUpperCase() })).toBe(id);
    expect(joinTokenId(parseJoinToken(makeJoinToken(caPem)))).not.toBe(id);
  });
});

describe('hashJoinSecret / joinSecretHashMatches', () => {
  it('stores sha256:<hex> and matches only the same secret', () => {
    const h = hashJoinSecret('0123456789abcdef');
    expect(h).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(h).not.toContain('0123456789abcdef');
    expect(joinSecretHashMatches(h, '0123456789abcdef')).toBe(true);
    expect(joinSecretHashMatches(h, '0123456789abcdeg')).toBe(false);
    expect(joinSecretHashMatches(h, '')).toBe(false);
    // The file's hex secret, in either case.
    const file = parseJoinToken(makeJoinToken(caPem));
    expect(joinSecretHashMatches(hashJoinSecret(file.secret), file.secret.toUpperCase())).toBe(true);
  });

  it('answers false for a malformed stored hash instead of throwing', () => {
    expect(joinSecretHashMatches('sha256:abcd', 'x')).toBe(false);
    expect(joinSecretHashMatches('', 'x')).toBe(false);
  });
});
