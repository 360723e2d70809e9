// Integration tests of the authentication chain as the server builds it from flags: a client
// CA file holding several CAs, and the TokenRequest sub-resource's validation, defaults and
// bound objects (in-process server, real TLS).
import { describe, it, expect, beforeAll, afterAll, vi } from 'vitest';
import { once } from 'node:events';
import { connect as h2connect } from 'node:http2';
import { TLSSocket } from 'node:tls';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateAuthority, issueCertificate } from '../pki/certificates.js';
import { generatePki, pkiPaths } from '../pki/pki.js';
import { ApiClient } from '../testserver/api-client.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies are free-form JSON
const WHOAMI = '/apis/authentication.cluster.io/v1/selfsubjectreviews';
const whoamiBody = { apiVersion: 'authentication.cluster.io/v1', kind: 'SelfSubjectReview' };

describe('--client-ca-file with several CAs', () => {
  let t: TestServer;
  let caPem: string;
  let other: Awaited<ReturnType<typeof createCertificateAuthority>>;
  const clients: ApiClient[] = [];
  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'clusterd-authn-'));
    await generatePki(dataDir, '127.0.0.1');
    other = await createCertificateAuthority('other-ca');
    caPem = readFileSync(pkiPaths(dataDir).caCert, 'utf8');
    writeFileSync(join(dataDir, 'client-cas.pem'), `${caPem}${other.certPem}`);
    t = await startTestServer({ dataDir, clientCaFile: join(dataDir, 'client-cas.pem') });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await t?.stop();
  });

  it('accepts certificates of either CA (CN = user, O = groups) and refuses an unknown CA', async () => {
    const bob = await issueCertificate(other, { commonName: 'bob', organizations: ['team-a', 'team-b'], usage: 'client' });
    const bobClient = new ApiClient(t.server.url, { caPem, ...bob });
    clients.push(bobClient);
    expect((await bobClient.post(WHOAMI, whoamiBody)).json<Obj>().status.userInfo).toEqual({ username: 'bob', groups: ['team-a', 'team-b', 'system:authenticated'] });
    expect((await t.admin.post(WHOAMI, whoamiBody)).json<Obj>().status.userInfo.username).toBe('admin');
    const stranger = await issueCertificate(await createCertificateAuthority('stranger-ca'), { commonName: 'mallory', organizations: ['system:masters'], usage: 'client' });
    const strangerClient = new ApiClient(t.server.url, { caPem, ...stranger });
    clients.push(strangerClient);
    const refused = await strangerClient.get('/version');
    expect(refused.status).toBe(401);
    expect(refused.json<Obj>()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });
});

describe('TokenRequest', () => {
  let t: TestServer;
  const sa = '/api/v1/namespaces/default/serviceaccounts';
  const tr = (spec: Obj) => ({ apiVersion: 'authentication.cluster.io/v1', kind: 'TokenRequest', spec });
  const claimsOf = (token: string): Obj => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Obj;
  beforeAll(async () => {
    t = await startTestServer({ serviceAccountMaxTokenExpirationMs: 2 * 3600_000, apiAudiences: ['api-a', 'api-b'] });
    expect((await t.admin.post(sa, { metadata: { name: 'robot' } })).status).toBeLessThan(300);
    expect((await t.admin.post('/api/v1/namespaces/default/pods', { metadata: { name: 'mine' }, spec: { serviceAccountName: 'robot', containers: [{ name: 'c', image: 'x' }] } })).status).toBeLessThan(300);
    expect((await t.admin.post('/api/v1/namespaces/default/pods', { metadata: { name: 'theirs' }, spec: { containers: [{ name: 'c', image: 'x' }] } })).status).toBeLessThan(300);
    expect((await t.admin.post('/api/v1/namespaces/default/secrets', { metadata: { name: 's' } })).status).toBeLessThan(300);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('defaults audiences to the API audiences and the expiration to an hour, and caps it at the maximum', async () => {
    const res = await t.admin.post(`${sa}/robot/token`, tr({}));
    expect(res.status).toBe(201);
    const body = res.json<Obj>();
    expect(body.spec).toEqual({ audiences: ['api-a', 'api-b'], expirationSeconds: 3600, boundObjectRef: null });
    const claims = claimsOf(body.status.token);
    expect(claims.exp - claims.iat).toBe(3600);
    expect(new Date(body.status.expirationTimestamp).getTime() / 1000).toBe(claims.exp);
    const capped = (await t.admin.post(`${sa}/robot/token`, tr({ expirationSeconds: 86400 }))).json<Obj>();
    expect(capped.spec.expirationSeconds).toBe(7200);
  });

  it('binds to a pod of the account, a secret, with the uid checked', async () => {
    const podUid = (await t.admin.get('/api/v1/namespaces/default/pods/mine')).json<Obj>().metadata.uid;
    const bound = (await t.admin.post(`${sa}/robot/token`, tr({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'mine', uid: podUid } }))).json<Obj>();
    expect(claimsOf(bound.status.token)['cluster.io'].pod).toEqual({ name: 'mine', uid: podUid });
    const secret = (await t.admin.post(`${sa}/robot/token`, tr({ boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 's' } }))).json<Obj>();
    expect(claimsOf(secret.status.token)['cluster.io'].secret.name).toBe('s');
  });

  it('extends a pod-bound token for the API audiences requested for 3607 s to a year with warnafter, and nothing else', async () => {
    const pod = { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'mine' } };
    const extended = (await t.admin.post(`${sa}/robot/token`, tr({ ...pod, expirationSeconds: 3607 }))).json<Obj>();
    const claims = claimsOf(extended.status.token);
    expect(claims.exp - claims.iat).toBe(365 * 24 * 3600);
    expect(claims['cluster.io'].warnafter - claims.iat).toBe(3607);
    // The answer gives the requested expiry: when the kubelet refreshes the token.
    expect(extended.spec.expirationSeconds).toBe(3607);
    expect(new Date(extended.status.expirationTimestamp).getTime() / 1000).toBe(claims.iat + 3607);
    for (const [why, spec] of [
      ['not bound to a pod', { expirationSeconds: 3607 }],
      ['another duration', { ...pod, expirationSeconds: 3600 }],
      ['an audience that is not the API', { ...pod, expirationSeconds: 3607, audiences: ['api-a', 'vault'] }],
    ] as const) {
      const c = claimsOf((await t.admin.post(`${sa}/robot/token`, tr(spec))).json<Obj>().status.token);
      expect(c['cluster.io'].warnafter, why).toBeUndefined();
      expect(c.exp - c.iat, why).toBe(spec.expirationSeconds);
    }
  });

  it.each<[string, Obj, string, number, string]>([
    ['a too short expiration', {}, 'robot', 422, 'spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes'],
    ['a missing account', {}, 'nobody', 404, 'serviceaccounts "nobody" not found'],
    ['a pod of another account', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'theirs' } }, 'robot', 400, 'cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.'],
    ['a stale uid', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'mine', uid: 'stale' } }, 'robot', 409, 'the UID in the bound object reference (stale) does not match the UID in record'],
    ['an unsupported kind', { boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' } }, 'robot', 400, 'cannot bind token for serviceaccount "robot" to object of kind "v1, Kind=ConfigMap"'],
    ['a missing pod', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'gone' } }, 'robot', 404, 'pods "gone" not found'],
  ])('refuses %s', async (name, spec, account, code, message) => {
    const res = await t.admin.post(`${sa}/${account}/token`, tr(name === 'a too short expiration' ? { expirationSeconds: 599 } : spec));
    expect(res.status).toBe(code);
    expect(res.json<Obj>().message).toContain(message);
  });
});

describe('--service-account-extend-token-expiration=false', () => {
  it('issues a pod-bound 3607 s token for 3607 s, without warnafter', async () => {
    const t = await startTestServer({ serviceAccountExtendTokenExpiration: false });
    try {
      const sa = '/api/v1/namespaces/default/serviceaccounts';
      expect((await t.admin.post(sa, { metadata: { name: 'robot' } })).status).toBeLessThan(300);
      expect((await t.admin.post('/api/v1/namespaces/default/pods', { metadata: { name: 'mine' }, spec: { serviceAccountName: 'robot', containers: [{ name: 'c', image: 'x' }] } })).status).toBeLessThan(300);
      const res = await t.admin.post(`${sa}/robot/token`, { apiVersion: 'authentication.cluster.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3607, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'mine' } } });
      const claims = JSON.parse(Buffer.from(res.json<Obj>().status.token.split('.')[1], 'base64url').toString()) as Obj;
      expect(claims.exp - claims.iat).toBe(3607);
      expect(claims['cluster.io'].warnafter).toBeUndefined();
    } finally {
      await t.stop();
    }
  });
});

describe('legacy service-account token secrets', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ controllers: ['*'] });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('the token controller fills the secret; the token authenticates and marks the secret with the day it was used', async () => {
    expect((await t.admin.post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'old' } })).status).toBeLessThan(300);
    const secret = { metadata: { name: 'old-token', annotations: { 'cluster.io/service-account.name': 'old' } }, type: 'cluster.io/service-account-token' };
    expect((await t.admin.post('/api/v1/namespaces/default/secrets', secret)).status).toBeLessThan(300);
    const read = async (): Promise<Obj> => (await t.admin.get('/api/v1/namespaces/default/secrets/old-token')).json<Obj>();
    let filled: Obj = {};
    for (let i = 0; i < 100 && !filled.data?.token; i++) {
      filled = await read();
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(Object.keys(filled.data).sort()).toEqual(['ca.crt', 'namespace', 'token']);
    const token = Buffer.from(filled.data.token, 'base64').toString();
    expect(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())).toMatchObject({ iss: 'cluster/serviceaccount', 'cluster.io/serviceaccount/secret.name': 'old-token' });
    const who = await t.anonymous.request('POST', WHOAMI, { body: whoamiBody, headers: { authorization: `Bearer ${token}` } });
    expect(who.json<Obj>().status.userInfo).toMatchObject({ username: 'system:serviceaccount:default:old' });
    const today = new Date().toISOString().slice(0, 10);
    let label: string | undefined;
    for (let i = 0; i < 100 && label === undefined; i++) {
      label = (await read()).metadata.labels?.['cluster.io/legacy-token-last-used'];
      if (label === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    expect(label).toBe(today);
  });
});

describe('client certificates over HTTP/2', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.stop();
  });

  // kubectl and client-go multiplex their requests over one HTTP/2 connection. Each request's
  // own socket is a proxy node:http2 makes per stream; the certificate must be parsed once per
  // connection, not once per request (twice the server's CPU for a GET, measured).
  it('reads the certificate once per connection and still identifies every request', async () => {
    const p = pkiPaths(t.dataDir);
    const session = h2connect(t.server.url, { ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) });
    await once(session, 'connect');
    const clientPort = (session.socket as TLSSocket).localPort;
    let reads = 0;
    const original = TLSSocket.prototype.getPeerCertificate;
    const spy = vi.spyOn(TLSSocket.prototype, 'getPeerCertificate').mockImplementation(function (this: TLSSocket, ...args: [boolean?]) {
      // Only the server's end of this test's connection: the client checks the server's too.
      if (this.remotePort === clientPort) reads++;
      return original.apply(this, args as [boolean]);
    } as typeof original);
    try {
      const request = (path: string, body?: unknown): Promise<{ status: number; json: Obj }> =>
        new Promise((resolve, reject) => {
          const headers: Record<string, string> = { ':path': path, ':method': body ? 'POST' : 'GET', accept: 'application/json' };
          if (body) headers['content-type'] = 'application/json';
          const req = session.request(headers);
          let status = 0;
          const chunks: Buffer[] = [];
          req.on('response', (h) => (status = Number(h[':status'])));
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => resolve({ status, json: JSON.parse(Buffer.concat(chunks).toString()) as Obj }));
          req.on('error', reject);
          req.end(body ? JSON.stringify(body) : undefined);
        });
      for (let i = 0; i < 5; i++) {
        const r = await request(WHOAMI, whoamiBody);
        expect(r.status).toBe(200);
        expect(r.json.status.userInfo).toEqual({ username: 'admin', groups: ['system:masters', 'system:authenticated'] });
      }
      const list = await request('/api/v1/namespaces');
      expect(list.status).toBe(200);
      expect(reads).toBe(1);
    } finally {
      spy.mockRestore();
      session.close();
    }
  });
});
