// Unit tests of the in-server token methods through the authentication chain: service-account
// JWTs (RSA and ECDSA), the static token file and bootstrap tokens, with hostile input, and
// that nothing logged on a refusal contains the token.
import { describe, it, expect } from 'vitest';
import { generateKeyPairSync, createHmac, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { CompactSign } from 'jose';
import { authenticate, isThenable, type Authenticator } from './authenticator.js';
import { bearerTokenAuthenticator } from './token-authenticator.js';
import { algorithmOf, keyIdOf, publicKeysFromPem, type SigningKey } from './serviceaccount-keys.js';
import { serviceAccountNames, serviceAccountTokenAuthenticator, ServiceAccountTokenSigner, type LookedUpObject, type MintRequest } from './serviceaccount-token.js';
import { parseTokenFile, tokenFileAuthenticator, TokenFileError } from './token-file.js';
import { bootstrapTokenAuthenticator, detachedSignature, type BootstrapSecret } from './bootstrap-token.js';
import { createNaming } from '../naming/naming.js';
import { createLogger } from '../log/logger.js';
import { withAuthentication } from '../http/filters/with-authentication.js';
import type { Env } from '../http/context.js';

const ISSUER = 'https://issuer.test';
const API = ['https://issuer.test'];
const NOW = new Date('2026-03-01T12:00:00Z');
const b64url = (s: string) => Buffer.from(s).toString('base64url');

function keyPair(kind: 'rsa' | 'ec'): { signing: SigningKey; publicKey: KeyObject } {
  const { privateKey, publicKey } = kind === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { signing: { key: privateKey, alg: algorithmOf(privateKey, 'test'), kid: keyIdOf(publicKey) }, publicKey };
}

const world = () => {
  const objects = new Map<string, LookedUpObject>([
    ['ServiceAccount/ns/sa', { uid: 'sa-uid', deleting: false, labels: {} }],
    ['Pod/ns/p', { uid: 'pod-uid', deleting: false, labels: {} }],
  ]);
  return { objects, lookup: { get: async (kind: string, ns: string, name: string) => objects.get(`${kind}/${ns}/${name}`) } };
};

describe.each(['rsa', 'ec'] as const)('service-account tokens signed with %s keys', (kind) => {
  const { signing, publicKey } = keyPair(kind);
  const names = serviceAccountNames(createNaming('kubernetes'));
  const signer = new ServiceAccountTokenSigner(signing, ISSUER, names);
  const base: MintRequest = { namespace: 'ns', serviceAccount: { name: 'sa', uid: 'sa-uid' }, audiences: API, expirationSeconds: 3600 };
  const setup = () => {
    const w = world();
    const auth = bearerTokenAuthenticator(
      [serviceAccountTokenAuthenticator({ issuers: [ISSUER], keys: [{ key: publicKey, alg: signing.alg, kid: signing.kid }], apiAudiences: API, names, lookup: w.lookup, now: () => NOW, cacheTtlMs: 0 })],
      API,
    );
    return { w, auth };
  };
  const run = (auth: Authenticator, token: string, audiences?: string[]) =>
    authenticate([auth], { header: (n) => (n === 'authorization' ? `Bearer ${token}` : undefined), peerCertificate: undefined, ...(audiences ? { audiences } : {}) }, { anonymous: true });

  it('a valid token bound to a pod is the service account, with uid, groups and extra', async () => {
    const { auth } = setup();
    const { token, jti } = await signer.mint({ ...base, pod: { name: 'p', uid: 'pod-uid' }, node: { name: 'n1', uid: 'node-uid' } }, NOW);
    expect(await run(auth, token)).toEqual({
      authenticator: 'bearer-token',
      audiences: API,
      user: {
        name: 'system:serviceaccount:ns:sa',
        uid: 'sa-uid',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:ns', 'system:authenticated'],
        extra: {
          'authentication.kubernetes.io/pod-name': ['p'],
          'authentication.kubernetes.io/pod-uid': ['pod-uid'],
          'authentication.kubernetes.io/node-name': ['n1'],
          'authentication.kubernetes.io/node-uid': ['node-uid'],
          'authentication.kubernetes.io/credential-id': [`JTI=${jti}`],
        },
      },
    });
  });

  const forge = async (header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject | Uint8Array) =>
    new CompactSign(Buffer.from(JSON.stringify(payload))).setProtectedHeader(header as { alg: string }).sign(key);
  const claims = (over: Record<string, unknown> = {}) => ({
    iss: ISSUER, sub: 'system:serviceaccount:ns:sa', aud: API, iat: NOW.getTime() / 1000, nbf: NOW.getTime() / 1000, exp: NOW.getTime() / 1000 + 600,
    'kubernetes.io': { namespace: 'ns', serviceaccount: { name: 'sa', uid: 'sa-uid' } }, ...over,
  });

  it.each<[string, (w: ReturnType<typeof world>) => Promise<string>, string]>([
    ['expired', async () => (await signer.mint({ ...base, expirationSeconds: 600 }, new Date(NOW.getTime() - 3600_000))).token, 'has expired'],
    ['not valid yet', async () => (await signer.mint(base, new Date(NOW.getTime() + 3600_000))).token, 'not valid yet'],
    ['for another audience', async () => (await signer.mint({ ...base, audiences: ['other'] }, NOW)).token, 'invalid for the target audiences'],
    ['from another issuer', async () => (await new ServiceAccountTokenSigner(signing, 'https://elsewhere', names).mint(base, NOW)).token, 'invalid bearer token'],
    ['whose service account was deleted', async (w) => { w.objects.delete('ServiceAccount/ns/sa'); return (await signer.mint(base, NOW)).token; }, 'has been deleted'],
    ['whose service account was recreated', async (w) => { w.objects.set('ServiceAccount/ns/sa', { uid: 'new', deleting: false, labels: {} }); return (await signer.mint(base, NOW)).token; }, 'recreated'],
    ['bound to a deleted pod', async (w) => { w.objects.delete('Pod/ns/p'); return (await signer.mint({ ...base, pod: { name: 'p', uid: 'pod-uid' } }, NOW)).token; }, 'pod ns/p'],
    ['malformed', async () => 'abc.def.ghi', 'invalid bearer token'],
    ['with alg none', async () => `${b64url('{"alg":"none"}')}.${b64url(JSON.stringify(claims()))}.`, 'refused signing algorithm'],
    ['HS256 with the public key as secret', async () => {
      const secret = publicKey.export({ format: 'pem', type: 'spki' });
      const input = `${b64url(JSON.stringify({ alg: 'HS256', kid: signing.kid }))}.${b64url(JSON.stringify(claims()))}`;
      return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
    }, 'refused signing algorithm'],
    ['signed by another key', async () => forge({ alg: signing.alg, kid: signing.kid }, claims(), keyPair(kind).signing.key), 'signature is invalid'],
    ['with a subject that is not its service account', async () => forge({ alg: signing.alg, kid: signing.kid }, claims({ sub: 'system:serviceaccount:kube-system:admin' }), signing.key), 'subject'],
    ['oversized', async () => `${b64url('{"alg":"RS256"}')}.${'A'.repeat(200_000)}.x`, 'invalid bearer token'],
  ])('a token %s is refused (401) even with anonymous on', async (_name, make, reason) => {
    const { w, auth } = setup();
    const token = await make(w);
    const result = await run(auth, token);
    expect(result).toEqual({ error: expect.stringContaining(reason) });
    expect(JSON.stringify(result)).not.toContain(token);
  });

  it('a cached verification still checks lookup, audience and time on every use', async () => {
    const w = world();
    let now = NOW;
    const auth = bearerTokenAuthenticator(
      [serviceAccountTokenAuthenticator({ issuers: [ISSUER], keys: [{ key: publicKey, alg: signing.alg, kid: signing.kid }], apiAudiences: API, names, lookup: w.lookup, now: () => now, cacheTtlMs: 60_000 })],
      API,
    );
    const { token } = await signer.mint({ ...base, expirationSeconds: 600 }, NOW);
    expect(await run(auth, token)).toMatchObject({ user: { name: 'system:serviceaccount:ns:sa' } });
    expect(await run(auth, token, ['other'])).toEqual({ error: expect.stringContaining('invalid for the target audiences') });
    now = new Date(NOW.getTime() + 3600_000);
    expect(await run(auth, token)).toEqual({ error: expect.stringContaining('has expired') });
    now = NOW;
    w.objects.delete('ServiceAccount/ns/sa');
    expect(await run(auth, token)).toEqual({ error: expect.stringContaining('has been deleted') });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['no expiry and another audience', { exp: undefined, aud: ['other'] }, 'has no expiration'],
    ['expired, with a subject not its account', { exp: NOW.getTime() / 1000 - 3600, sub: 'system:serviceaccount:x:y' }, 'has expired'],
    ['another audience, with a subject not its account', { aud: ['other'], sub: 'system:serviceaccount:x:y' }, 'invalid for the target audiences'],
    ['another audience, without the private claim', { aud: ['other'], 'kubernetes.io': undefined }, 'invalid for the target audiences'],
    ['no private claim, with a subject not its account', { 'kubernetes.io': undefined, sub: 'x' }, 'lacks the kubernetes.io claim'],
    ['no service account uid, with a subject not its account', { 'kubernetes.io': { namespace: 'ns', serviceaccount: { name: 'sa' } }, sub: 'x' }, 'lacks its namespace or service account'],
  ])('a token with several faults reports the first in upstream order: %s', async (_name, over, reason) => {
    const w = world();
    const auth = bearerTokenAuthenticator(
      [serviceAccountTokenAuthenticator({ issuers: [ISSUER], keys: [{ key: publicKey, alg: signing.alg, kid: signing.kid }], apiAudiences: API, names, lookup: w.lookup, now: () => NOW, cacheTtlMs: 60_000 })],
      API,
    );
    const token = await forge({ alg: signing.alg, kid: signing.kid }, claims(over), signing.key);
    // Twice: the second answer comes from the verified-token memo and must not differ.
    for (let i = 0; i < 2; i++) expect(await run(auth, token)).toEqual({ error: expect.stringContaining(reason) });
  });

  it('a remembered token answers each audience list asked for, in any order, with one user object', async () => {
    const w = world();
    const auth = bearerTokenAuthenticator(
      [serviceAccountTokenAuthenticator({ issuers: [ISSUER], keys: [{ key: publicKey, alg: signing.alg, kid: signing.kid }], apiAudiences: API, names, lookup: w.lookup, now: () => NOW, cacheTtlMs: 60_000 })],
      API,
    );
    const { token } = await signer.mint({ ...base, audiences: [...API, 'vault'] }, NOW);
    const first = await run(auth, token);
    expect(first).toMatchObject({ audiences: API });
    expect(await run(auth, token, ['vault', 'other'])).toMatchObject({ audiences: ['vault'] });
    expect(await run(auth, token, ['other'])).toEqual({ error: expect.stringContaining('invalid for the target audiences') });
    const again = await run(auth, token);
    expect(again).toMatchObject({ audiences: API });
    expect('user' in again && 'user' in first && again.user === first.user).toBe(true);
  });

  it('an extended token (warnafter) keeps working after warnafter, counted and annotated as stale; before it, nothing is added', async () => {
    const w = world();
    let now = NOW;
    let stale = 0;
    const auth = bearerTokenAuthenticator(
      [serviceAccountTokenAuthenticator({ issuers: [ISSUER], keys: [{ key: publicKey, alg: signing.alg, kid: signing.kid }], apiAudiences: API, names, lookup: w.lookup, now: () => now, cacheTtlMs: 0, onStaleToken: () => stale++ })],
      API,
    );
    const { token } = await signer.mint({ ...base, pod: { name: 'p', uid: 'pod-uid' }, expirationSeconds: 365 * 86400, warnAfterSeconds: 3607 }, NOW);
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { iat: number; exp: number; 'kubernetes.io': { warnafter: number } };
    expect(claims['kubernetes.io'].warnafter - claims.iat).toBe(3607);
    expect(claims.exp - claims.iat).toBe(365 * 86400);
    const fresh = await run(auth, token);
    expect(fresh).toMatchObject({ user: { name: 'system:serviceaccount:ns:sa' } });
    expect(fresh).not.toHaveProperty('auditAnnotations');
    now = new Date(NOW.getTime() + 3700_000);
    expect(await run(auth, token)).toMatchObject({
      user: { name: 'system:serviceaccount:ns:sa' },
      auditAnnotations: { 'authentication.k8s.io/stale-token': 'subject: system:serviceaccount:ns:sa, seconds after warning threshold: 93' },
    });
    expect(stale).toBe(1);
  });

  it('every configured issuer is accepted (the first issues): rotating the issuer keeps old tokens valid', async () => {
    const w = world();
    const auth = bearerTokenAuthenticator(
      [serviceAccountTokenAuthenticator({ issuers: ['https://new.test', ISSUER], keys: [{ key: publicKey, alg: signing.alg, kid: signing.kid }], apiAudiences: API, names, lookup: w.lookup, now: () => NOW })],
      API,
    );
    const old = await signer.mint(base, NOW);
    const fresh = await new ServiceAccountTokenSigner(signing, 'https://new.test', names).mint(base, NOW);
    expect(await run(auth, old.token)).toMatchObject({ user: { name: 'system:serviceaccount:ns:sa' } });
    expect(await run(auth, fresh.token)).toMatchObject({ user: { name: 'system:serviceaccount:ns:sa' } });
  });

  it('TokenReview audiences: the token answers the audiences asked for that it holds', async () => {
    const { auth } = setup();
    const { token } = await signer.mint({ ...base, audiences: ['a', 'b'] }, NOW);
    expect(await run(auth, token, ['b', 'c'])).toMatchObject({ audiences: ['b'] });
    expect(await run(auth, token, ['c'])).toEqual({ error: expect.stringContaining('invalid for the target audiences') });
  });

  it('a legacy secret token is valid while its secret holds it and its account exists', async () => {
    const { w, auth } = setup();
    const token = await signer.mintLegacy('ns', { name: 'sa', uid: 'sa-uid' }, 'sa-token');
    w.objects.set('Secret/ns/sa-token', { uid: 's', deleting: false, labels: {}, data: { token: Buffer.from(token).toString('base64') } });
    expect(await run(auth, token)).toMatchObject({ user: { name: 'system:serviceaccount:ns:sa', uid: 'sa-uid' }, audiences: API });
    w.objects.set('Secret/ns/sa-token', { uid: 's', deleting: false, labels: {}, data: { token: 'b3RoZXI=' } });
    expect(await run(auth, token)).toEqual({ error: expect.stringContaining('does not match') });
    w.objects.delete('Secret/ns/sa-token');
    expect(await run(auth, token)).toEqual({ error: expect.stringContaining('has been deleted') });
  });
});

describe('answering without a promise', () => {
  const { signing, publicKey } = keyPair('ec');
  const names = serviceAccountNames(createNaming('kubernetes'));
  const signer = new ServiceAccountTokenSigner(signing, ISSUER, names);
  const base: MintRequest = { namespace: 'ns', serviceAccount: { name: 'sa', uid: 'sa-uid' }, audiences: API, expirationSeconds: 3600 };
  // A lookup that answers at once for the kinds in `cached` (the watch cache holds them) and
  // with a promise for the rest (a store read).
  const mixed = (objects: Map<string, LookedUpObject>, cached: ReadonlySet<string>) => ({
    get: (kind: string, ns: string, name: string) => (cached.has(kind) ? objects.get(`${kind}/${ns}/${name}`) : Promise.resolve(objects.get(`${kind}/${ns}/${name}`))),
  });
  // A static token file first, as the server orders them: it answers at once that the token is not its.
  const tokenFile = join(mkdtempSync(join(tmpdir(), 'sync-tokens-')), 'tokens.csv');
  writeFileSync(tokenFile, 'other-token,bob,u-bob\n');
  const chain = (lookup: ReturnType<typeof mixed>) =>
    bearerTokenAuthenticator(
      [
        tokenFileAuthenticator(tokenFile, () => undefined),
        serviceAccountTokenAuthenticator({ issuers: [ISSUER], keys: [{ key: publicKey, alg: signing.alg, kid: signing.kid }], apiAudiences: API, names, lookup, now: () => NOW, cacheTtlMs: 60_000 }),
      ],
      API,
    );
  const req = (token: string) => ({ header: (n: string) => (n === 'authorization' ? `Bearer ${token}` : undefined), peerCertificate: undefined });

  it('a token verified a moment ago whose objects the lookup holds answers at once; its first use (the signature) and a store lookup take a promise', async () => {
    const w = world();
    const { token } = await signer.mint({ ...base, pod: { name: 'p', uid: 'pod-uid' } }, NOW);
    const auth = chain(mixed(w.objects, new Set(['ServiceAccount', 'Pod'])));
    const first = auth.authenticate(req(token));
    expect(isThenable(first)).toBe(true);
    const user = { name: 'system:serviceaccount:ns:sa', uid: 'sa-uid' };
    expect(await first).toMatchObject({ user, audiences: API });
    const again = auth.authenticate(req(token));
    expect(isThenable(again)).toBe(false);
    expect(again).toMatchObject({ user, audiences: API });
    expect(authenticate([auth], req(token), { anonymous: false })).toMatchObject({ user: { name: user.name }, authenticator: 'bearer-token' });

    // The pod from the store: a promise, with the same answer.
    const viaStore = chain(mixed(w.objects, new Set(['ServiceAccount'])));
    await viaStore.authenticate(req(token));
    const later = viaStore.authenticate(req(token));
    expect(isThenable(later)).toBe(true);
    expect(await later).toMatchObject({ user, audiences: API });
  });

  it.each<[string, string[], string[], string]>([
    ['both at once, the account gone', ['ServiceAccount', 'Pod'], ['ServiceAccount/ns/sa'], 'service account ns/sa has been deleted'],
    ['the account at once, the pod from the store, both gone', ['ServiceAccount'], ['ServiceAccount/ns/sa', 'Pod/ns/p'], 'service account ns/sa has been deleted'],
    ['the account from the store, the pod at once, both gone', ['Pod'], ['ServiceAccount/ns/sa', 'Pod/ns/p'], 'service account ns/sa has been deleted'],
    ['the account at once, the pod from the store and gone', ['ServiceAccount'], ['Pod/ns/p'], 'pod ns/p the token is bound to has been deleted'],
    ['both at once, the pod gone', ['ServiceAccount', 'Pod'], ['Pod/ns/p'], 'pod ns/p the token is bound to has been deleted'],
  ])('lookups answer in order, the first failure reported, however they answer: %s', async (_name, cached, gone, reason) => {
    const w = world();
    const { token } = await signer.mint({ ...base, pod: { name: 'p', uid: 'pod-uid' } }, NOW);
    const auth = chain(mixed(w.objects, new Set(cached)));
    expect(await auth.authenticate(req(token))).toMatchObject({ user: { name: 'system:serviceaccount:ns:sa' } });
    for (const k of gone) w.objects.delete(k);
    const settle = async () => {
      try {
        await auth.authenticate(req(token));
        return 'accepted';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(await settle()).toBe(`invalid bearer token, ${reason}`);
    const union = await authenticate([auth], req(token), { anonymous: true });
    expect(union).toEqual({ error: `invalid bearer token, ${reason}` });
    expect(JSON.stringify(union)).not.toContain(token);
  });

  it('a token authenticator that throws at once is a failure like a rejected one, and the next is still asked', async () => {
    const throwsNow = { name: 'now', authenticateToken: (): null => { throw new Error('refused at once'); } };
    const rejects = { name: 'later', authenticateToken: async (): Promise<null> => { throw new Error('refused later'); } };
    const accepts = { name: 'ok', authenticateToken: () => ({ name: 'alice', groups: [] }) };
    const syncChain = bearerTokenAuthenticator([throwsNow, accepts], API);
    const r = syncChain.authenticate(req('t'));
    expect(isThenable(r)).toBe(false);
    expect(r).toEqual({ user: { name: 'alice', groups: [] }, audiences: API });
    expect(() => bearerTokenAuthenticator([throwsNow], API).authenticate(req('t'))).toThrow('invalid bearer token, refused at once');
    await expect(bearerTokenAuthenticator([throwsNow, rejects], API).authenticate(req('t'))).rejects.toThrow('invalid bearer token, refused at once; refused later');
    await expect(bearerTokenAuthenticator([rejects, throwsNow, accepts], API).authenticate(req('t'))).resolves.toEqual({ user: { name: 'alice', groups: [] }, audiences: API });
  });
});

describe('service-account key files', () => {
  it('reads public keys, private keys and certificates; several per file', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const pem = `${rsa.publicKey.export({ format: 'pem', type: 'spki' })}${ec.privateKey.export({ format: 'pem', type: 'pkcs8' })}`;
    expect(publicKeysFromPem(pem, 'f').map((k) => k.alg)).toEqual(['RS256', 'ES384']);
    expect(() => publicKeysFromPem('nothing', 'f')).toThrow('no public keys');
  });
});

describe('static token file', () => {
  it.each<[string, string, Record<string, unknown> | string]>([
    ['three columns', 't1,alice,u1\n', { name: 'alice', uid: 'u1', groups: [] }],
    ['quoted groups', 't1,alice,u1,"dev,ops"\n', { name: 'alice', uid: 'u1', groups: ['dev', 'ops'] }],
    ['quotes inside a quoted field, CRLF and blank lines', '\r\n"t1","al""ice",u1,g\r\n\r\n', { name: 'al"ice', uid: 'u1', groups: ['g'] }],
    ['a later duplicate wins', 't1,alice,u1\nt1,bob,u2\n', { name: 'bob', uid: 'u2', groups: [] }],
    ['too few columns', 't0,x,y\nt1,alice\n', "line 2: must have at least 3 columns"],
    ['a bare quote', 't1,al"ice,u1\n', 'parse error on line 1, column 6: bare " in non-quoted-field'],
    ['an unterminated quote', 't0,a,b\n"t1,alice,u1\n', 'parse error on line 2'],
  ])('%s', (_name, text, want) => {
    if (typeof want === 'string') {
      expect(() => parseTokenFile(text, 'tokens.csv')).toThrow(TokenFileError);
      expect(() => parseTokenFile(text, 'tokens.csv')).toThrow(want);
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'tokens-'));
    writeFileSync(join(dir, 'tokens.csv'), text);
    expect(tokenFileAuthenticator(join(dir, 'tokens.csv')).authenticateToken('t1', API)).toEqual(want);
    expect(tokenFileAuthenticator(join(dir, 'tokens.csv')).authenticateToken('t2', API)).toBeNull();
  });
});

describe('bootstrap tokens', () => {
  const TYPE = 'bootstrap.kubernetes.io/token';
  const secret = (data: Record<string, string>, over: Partial<BootstrapSecret> = {}): BootstrapSecret => ({
    type: TYPE, deleting: false, data: { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', ...data }, ...over,
  });
  const auth = (s: BootstrapSecret | undefined) =>
    bootstrapTokenAuthenticator({ secretType: TYPE, getSecret: (name) => (name === 'bootstrap-token-abcdef' ? s : undefined), now: () => NOW });

  it.each<[string, BootstrapSecret | undefined, string, unknown]>([
    ['valid, with extra groups', secret({ 'auth-extra-groups': 'system:bootstrappers:worker,system:bootstrappers:a' }), 'abcdef.0123456789abcdef',
      { name: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:a', 'system:bootstrappers:worker'] }],
    ['not yet expired', secret({ expiration: '2026-03-01T13:00:00Z' }), 'abcdef.0123456789abcdef', { name: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'] }],
    ['expired', secret({ expiration: '2026-03-01T11:00:00Z' }), 'abcdef.0123456789abcdef', null],
    ['an unparsable expiration', secret({ expiration: 'tomorrow' }), 'abcdef.0123456789abcdef', null],
    ['the wrong secret', secret({}), 'abcdef.0123456789abcdee', null],
    ['no authentication usage', secret({ 'usage-bootstrap-authentication': 'false' }), 'abcdef.0123456789abcdef', null],
    ['an extra group outside system:bootstrappers:', secret({ 'auth-extra-groups': 'system:masters' }), 'abcdef.0123456789abcdef', null],
    ['another secret type', secret({}, { type: 'Opaque' }), 'abcdef.0123456789abcdef', null],
    ['a secret being deleted', secret({}, { deleting: true }), 'abcdef.0123456789abcdef', null],
    ['no secret', undefined, 'abcdef.0123456789abcdef', null],
    ['a malformed token', secret({}), 'ABCDEF.0123456789abcdef', null],
  ])('%s', async (_name, s, token, want) => {
    expect(await auth(s).authenticateToken(token, API)).toEqual(want);
  });

  it('signs cluster-info detached, verifiable with HS256 and the full token (spec §2.4)', async () => {
    const content = 'apiVersion: v1\nkind: Config\n';
    const sig = await detachedSignature(content, 'abcdef', '0123456789abcdef');
    const [header, empty, signature] = sig.split('.');
    expect(empty).toBe('');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({ alg: 'HS256', kid: 'abcdef' });
    const input = `${header}.${Buffer.from(content).toString('base64url')}`;
    expect(signature).toBe(createHmac('sha256', 'abcdef.0123456789abcdef').update(input).digest('base64url'));
  });
});

describe('a refused token over HTTP', () => {
  it('is a 401 Status (reason Unauthorized) and the debug log never contains the token', async () => {
    const lines: string[] = [];
    const log = createLogger('debug', (l) => lines.push(l));
    const dir = mkdtempSync(join(tmpdir(), 'tokens-'));
    writeFileSync(join(dir, 't.csv'), 'good-token,alice,u1\n');
    const chain = [bearerTokenAuthenticator([tokenFileAuthenticator(join(dir, 't.csv'))], API)];
    const app = new Hono<Env>();
    app.use('*', withAuthentication(chain, true, log));
    app.get('*', (c) => c.json({ user: c.get('user') }));
    const secret = `s3cr3t-${'x'.repeat(100_000)}`;
    const res = await app.request('/api', { headers: { authorization: `Bearer ${secret}` } });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401, message: 'Unauthorized' });
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).not.toContain('s3cr3t');
    const ok = await app.request('/api', { headers: { authorization: 'Bearer good-token' } });
    expect(await ok.json()).toEqual({ user: { name: 'alice', uid: 'u1', groups: ['system:authenticated'] } });
    const anon = await app.request('/api');
    expect(await anon.json()).toEqual({ user: { name: 'system:anonymous', groups: ['system:unauthenticated'] } });
  });
});
