import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { silentLogger } from '../log/logger.js';
import { LevelRevisionStore } from '../store/revision-store.js';
import { clusterPkiPaths, generateClusterPki, type ClusterPkiPaths } from '../pki/cluster-pki.js';
import { caHashOf, hashJoinSecret, joinTokenId, makeJoinToken, parseJoinToken } from '../pki/join-token.js';
import type { RaftNodeStatus } from '../../raft/node/raft-node.js';
import { nodeIdOf } from './ids.js';
import { admitJoiner, joinHosts } from './join.js';
import { DEFAULT_TOKEN_TTL_MS, handleJoinTokens, JOIN_TOKEN_PREFIX, JoinTokens, refusalMessage, type JoinTokenRecord } from './join-tokens.js';

let dir: string;
let store: LevelRevisionStore;
let clock: number;
let tokens: JoinTokens;
const T0 = Date.parse('2026-11-28T10:00:00Z');

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'clusterd-join-tokens-'));
  store = await LevelRevisionStore.open({ storage: 'leveldb', path: join(dir, 'store') });
  clock = T0;
  tokens = new JoinTokens(store, silentLogger, () => clock);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const stored = async (id: string): Promise<JoinTokenRecord | undefined> => {
  const kv = await store.get(JOIN_TOKEN_PREFIX + id);
  return kv ? (JSON.parse(Buffer.from(kv.value).toString()) as JoinTokenRecord) : undefined;
};

describe('JoinTokens', () => {
  it('create stores a hash of the secret, the expiry TTL from now and the description; check accepts it until expiry', async () => {
    const { record, secret } = await tokens.create(60_000, 'for node d');
    expect(record).toEqual({ id: record.id, secretHash: hashJoinSecret(secret), created: '2026-11-28T10:00:00Z', expires: '2026-11-28T10:01:00Z', description: 'for node d' });
    const raw = Buffer.from((await store.get(JOIN_TOKEN_PREFIX + record.id))!.value).toString();
    expect(raw).not.toContain(secret);
    expect(await stored(record.id)).toEqual(record);
    expect(await tokens.check({ id: record.id, secret })).toEqual({ ok: true, id: record.id });
    clock = T0 + 59_999;
    expect((await tokens.check({ id: record.id, secret })).ok).toBe(true);
    clock = T0 + 60_000;
    expect(await tokens.check({ id: record.id, secret })).toEqual({ ok: false, id: record.id, reason: 'expired', expires: '2026-11-28T10:01:00Z' });
  });

  it('a TTL of 0 never expires', async () => {
    const { record, secret } = await tokens.create(0, '');
    expect(record.expires).toBeNull();
    clock = T0 + 100 * 365 * 86_400_000;
    expect((await tokens.check({ id: record.id, secret })).ok).toBe(true);
    expect(tokens.view(record).expired).toBe(false);
  });

  it('a wrong secret, an unknown id and a revoked token all read as unknown', async () => {
    const { record, secret } = await tokens.create(60_000, '');
    const wrong = secret.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'));
    expect(await tokens.check({ id: record.id, secret: wrong })).toEqual({ ok: false, id: record.id, reason: 'unknown' });
    expect(await tokens.check({ id: 'zzzzzz', secret })).toEqual({ ok: false, id: 'zzzzzz', reason: 'unknown' });
    // An expired token with a wrong secret does not say it expired (nor that the id exists).
    clock = T0 + 120_000;
    expect(await tokens.check({ id: record.id, secret: wrong })).toEqual({ ok: false, id: record.id, reason: 'unknown' });
    clock = T0;
    expect(await tokens.revoke(record.id)).toBe(true);
    expect(await tokens.check({ id: record.id, secret })).toEqual({ ok: false, id: record.id, reason: 'unknown' });
    expect(await tokens.revoke(record.id)).toBe(false);
  });

  it('list returns every token; the view hides the secret hash and says whether it expired', async () => {
    const a = await tokens.create(60_000, 'a');
    const b = await tokens.create(0, 'b');
    clock = T0 + 61_000;
    const list = await tokens.list();
    expect(list.map((r) => r.id).sort()).toEqual([a.record.id, b.record.id].sort());
    const views = Object.fromEntries(list.map((r) => [r.id, tokens.view(r)]));
    expect(views[a.record.id]).toEqual({ id: a.record.id, created: '2026-11-28T10:00:00Z', expires: '2026-11-28T10:01:00Z', expired: true, description: 'a' });
    expect(views[b.record.id]).toEqual({ id: b.record.id, created: '2026-11-28T10:00:00Z', expires: null, expired: false, description: 'b' });
    expect(JSON.stringify(views)).not.toContain('sha256');
  });

  it('removeExpired deletes tokens expired for the retention period, and nothing else', async () => {
    const short = await tokens.create(1000, '');
    const long = await tokens.create(3_600_000, '');
    const never = await tokens.create(0, '');
    clock = T0 + 1000 + 59_999;
    expect(await tokens.removeExpired(60_000)).toEqual([]);
    clock = T0 + 1000 + 60_000;
    expect(await tokens.removeExpired(60_000)).toEqual([short.record.id]);
    expect((await tokens.list()).map((r) => r.id).sort()).toEqual([long.record.id, never.record.id].sort());
  });

  it("the join-token file is recorded once with the default TTL from then; after revocation it stays revoked", async () => {
    const file = parseJoinToken(makeJoinToken((await import('../pki/certificates.js').then((m) => m.createCertificateAuthority('t'))).certPem));
    const id = joinTokenId(file);
    expect(await tokens.check(file)).toEqual({ ok: false, id, reason: 'unknown' });
    expect(await tokens.registerFileToken(file)).toBe(true);
    expect(await stored(id)).toEqual({
      id, secretHash: hashJoinSecret(file.secret), created: '2026-11-28T10:00:00Z', expires: new Date(T0 + DEFAULT_TOKEN_TTL_MS).toISOString().replace('.000', ''),
      description: 'the join-token file of the cluster PKI', source: 'file',
    });
    expect(await tokens.check(file)).toEqual({ ok: true, id });
    // A later leader (or a second call) does not move its expiry.
    clock = T0 + 3_600_000;
    expect(await tokens.registerFileToken(file)).toBe(false);
    expect((await stored(id))!.expires).toBe('2026-11-29T10:00:00Z');
    clock = T0 + DEFAULT_TOKEN_TTL_MS;
    expect(await tokens.check(file)).toMatchObject({ ok: false, reason: 'expired' });
    clock = T0;
    expect(await tokens.revoke(id)).toBe(true);
    expect(await tokens.registerFileToken(file)).toBe(false);
    expect(await tokens.check(file)).toMatchObject({ ok: false, reason: 'unknown' });
  });

  it('refusal messages say which: expired (with when) or unknown/revoked, and how to get a new token', () => {
    expect(refusalMessage({ ok: false, id: 'abc123', reason: 'expired', expires: '2026-11-28T10:01:00Z' })).toBe(
      'join token "abc123" expired at 2026-11-28T10:01:00Z: make a new one with `clusterd token create` on a member',
    );
    expect(refusalMessage({ ok: false, id: 'abc123', reason: 'unknown' })).toBe('join token "abc123" is unknown or was revoked: make a new one with `clusterd token create` on a member');
  });
});

describe('handleJoinTokens (/cluster/v1/tokens)', () => {
  const caHash = 'c'.repeat(64);
  const call = async (method: string, path: string, body = '') => {
    const res = await handleJoinTokens(method, path, async () => body, { tokens, caHash: () => caHash });
    return res && { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('POST creates a token (default TTL 24h) and answers it once, in full; GET lists it without the secret; DELETE revokes', async () => {
    const created = await call('POST', '/cluster/v1/tokens', JSON.stringify({ description: 'd' }));
    expect(created!.status).toBe(201);
    const body = created!.body as { token: string; id: string; expires: string };
    expect(body).toMatchObject({ kind: 'JoinToken', apiVersion: 'v1', description: 'd', expired: false, expires: '2026-11-29T10:00:00Z', created: '2026-11-28T10:00:00Z' });
    expect(body.token).toMatch(new RegExp(`^K10${caHash}::${body.id}\\.[a-z0-9]{16}$`));
    const parsed = parseJoinToken(body.token);
    expect(await tokens.check(parsed)).toEqual({ ok: true, id: body.id });

    const never = await call('POST', '/cluster/v1/tokens', JSON.stringify({ ttlSeconds: 0 }));
    expect(never!.body).toMatchObject({ expires: null, description: '' });

    const list = await call('GET', '/cluster/v1/tokens');
    expect(list!.status).toBe(200);
    expect(list!.body.kind).toBe('JoinTokenList');
    expect((list!.body.tokens as Array<{ id: string }>).map((t) => t.id).sort()).toEqual([body.id, (never!.body as { id: string }).id].sort());
    expect(JSON.stringify(list!.body)).not.toContain(parsed.secret);

    expect(await call('DELETE', `/cluster/v1/tokens/${body.id}`)).toEqual({
      status: 200,
      body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', message: `join token "${body.id}" revoked`, details: { name: body.id, kind: 'tokens' } },
    });
    expect(await call('DELETE', `/cluster/v1/tokens/${body.id}`)).toMatchObject({ status: 404, body: { reason: 'NotFound', message: `join token "${body.id}" not found` } });
  });

  it.each([
    ['POST', '/cluster/v1/tokens', '{', 400, 'the token request is not JSON'],
    ['POST', '/cluster/v1/tokens', '[]', 400, 'the token request must be a JSON object'],
    ['POST', '/cluster/v1/tokens', '{"ttlSeconds":-1}', 400, 'ttlSeconds must be a whole number of seconds, 0 or more (0: never expires), got -1'],
    ['POST', '/cluster/v1/tokens', '{"ttlSeconds":1.5}', 400, 'ttlSeconds must be a whole number of seconds, 0 or more (0: never expires), got 1.5'],
    ['POST', '/cluster/v1/tokens', '{"ttlSeconds":"1h"}', 400, 'ttlSeconds must be a whole number of seconds, 0 or more (0: never expires), got "1h"'],
    ['POST', '/cluster/v1/tokens', '{"description":7}', 400, 'description must be a string'],
    ['POST', '/cluster/v1/tokens', JSON.stringify({ description: 'x'.repeat(1025) }), 400, 'description must be at most 1024 characters, got 1025'],
    ['DELETE', '/cluster/v1/tokens/ABC', '', 400, 'invalid token id "ABC": 6 characters of a-z and 0-9'],
    ['PUT', '/cluster/v1/tokens', '', 405, 'the server does not allow this method on the requested resource'],
    ['GET', '/cluster/v1/tokens/abc123', '', 405, 'the server does not allow this method on the requested resource'],
  ])('%s %s %s → %i with a Status, storing nothing', async (method, path, body, code, message) => {
    expect(await call(method, path, body)).toMatchObject({ status: code, body: { kind: 'Status', status: 'Failure', code, message } });
    expect((await store.range(JOIN_TOKEN_PREFIX)).kvs).toEqual([]);
  });

  it('leaves other paths alone', async () => {
    expect(await call('GET', '/cluster/v1/members')).toBeUndefined();
    expect(await call('GET', '/cluster/v1/tokens/a/b')).toBeUndefined();
  });
});

describe('admitJoiner with recorded tokens', () => {
  let pkiDir: string;
  let paths: ClusterPkiPaths;
  beforeAll(async () => {
    pkiDir = mkdtempSync(join(tmpdir(), 'clusterd-admit-pki-'));
    await generateClusterPki(pkiDir, [{ name: 'a', hosts: ['127.0.0.1'] }]);
    paths = clusterPkiPaths(pkiDir, 'a');
  });
  afterAll(() => rmSync(pkiDir, { recursive: true, force: true }));

  const leaderStatus = (): RaftNodeStatus => ({
    id: nodeIdOf('a'), role: 'leader', leader: nodeIdOf('a'), term: 2, commit: 10, applied: 10, snapshotIndex: 0,
    membership: { voters: [nodeIdOf('a')], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false },
    peers: new Map([[nodeIdOf('a'), 'https://127.0.0.1:2380']]),
  });
  const admit = async (body: Record<string, unknown>, added: Array<[number, string]>) => {
    const res = await admitJoiner(JSON.stringify({ name: 'd', peerAddress: '127.0.0.1:2383', hosts: ['127.0.0.1'], ...body }), {
      pkiDir, paths, status: leaderStatus,
      addLearner: async (id, url) => {
        added.push([id, url]);
        return leaderStatus().membership;
      },
      checkToken: (t) => tokens.check(t), clusterId: '0123456789abcdef', log: silentLogger,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('admits a created token, refuses it 401 once expired or revoked, saying which, and adds no learner then', async () => {
    const { record, secret } = await tokens.create(60_000, '');
    const added: Array<[number, string]> = [];
    const ok = await admit({ tokenId: record.id, secret }, added);
    expect(ok.status).toBe(200);
    expect(Object.keys(ok.body.files as object)).toContain('replicas/d/peer.crt');
    expect(added).toEqual([[nodeIdOf('d'), 'https://127.0.0.1:2383']]);

    clock = T0 + 60_000;
    const expired = await admit({ tokenId: record.id, secret, name: 'e', peerAddress: '127.0.0.1:2384' }, added);
    expect(expired).toMatchObject({ status: 401, body: { reason: 'Unauthorized', message: `join token "${record.id}" expired at 2026-11-28T10:01:00Z: make a new one with \`clusterd token create\` on a member` } });
    clock = T0;
    await tokens.revoke(record.id);
    const revoked = await admit({ tokenId: record.id, secret, name: 'e', peerAddress: '127.0.0.1:2384' }, added);
    expect(revoked).toMatchObject({ status: 401, body: { message: `join token "${record.id}" is unknown or was revoked: make a new one with \`clusterd token create\` on a member` } });
    expect(added).toHaveLength(1);
  });

  it('names the hosts the joiner asks for in its serving certificate, and refuses what is not a host name or IP', async () => {
    const { record, secret } = await tokens.create(60_000, '');
    const added: Array<[number, string]> = [];
    // What a joiner started with --advertise-address sends (joinCluster's hosts).
    const hosts = joinHosts('127.0.0.1:2385', 'f.clusterd.example');
    expect(hosts).toEqual(['127.0.0.1', 'f.clusterd.example']);
    expect(joinHosts('[::1]:2385', '::1')).toEqual(['::1']);
    expect(joinHosts('10.0.0.6:2380')).toEqual(['10.0.0.6']);
    const ok = await admit({ tokenId: record.id, secret, name: 'f', peerAddress: '127.0.0.1:2385', hosts }, added);
    expect(ok.status).toBe(200);
    const cert = new X509Certificate((ok.body.files as Record<string, string>)['replicas/f/apiserver.crt']!);
    expect(cert.subjectAltName).toContain('DNS:f.clusterd.example');
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    for (const bad of [['f.example', 'bad host'], ['-x.example'], Array.from({ length: 17 }, (_, i) => `h${i}.example`)]) {
      const refused = await admit({ tokenId: record.id, secret, name: 'g', peerAddress: '127.0.0.1:2386', hosts: bad }, added);
      expect(refused, JSON.stringify(bad)).toMatchObject({ status: 400, body: { reason: 'BadRequest' } });
    }
    expect(added).toHaveLength(1);
  });

  it("admits the join-token file's form once it is recorded, and refuses malformed tokens", async () => {
    const file = parseJoinToken(readFileSync(paths.joinToken, 'utf8'));
    expect(file.caHash).toBe(caHashOf(readFileSync(paths.caCert, 'utf8')));
    const added: Array<[number, string]> = [];
    expect(await admit({ secret: file.secret }, added)).toMatchObject({ status: 401, body: { message: `join token "${joinTokenId(file)}" is unknown or was revoked: make a new one with \`clusterd token create\` on a member` } });
    await tokens.registerFileToken(file);
    expect((await admit({ secret: file.secret.toUpperCase() }, added)).status).toBe(200);
    for (const bad of [{ tokenId: 'abc123', secret: file.secret }, { tokenId: 'ABC123', secret: '0123456789abcdef' }, { secret: '0123456789abcdef' }, { tokenId: 5, secret: file.secret }]) {
      expect(await admit(bad, added), JSON.stringify(bad)).toMatchObject({ status: 401, body: { message: "the join request's token is malformed" } });
    }
    expect(added).toHaveLength(1);
  });
});
