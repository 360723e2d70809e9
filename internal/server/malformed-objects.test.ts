// Forced deletion of objects that cannot be read back (spec §3.1), against a real server
// whose store holds a value that does not decode.
import { describe, it, expect, afterEach } from 'vitest';
import { FeatureGates } from '../config/feature-gates.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const KEY = '/registry/core/configmaps/default/broken';
const PATH = '/api/v1/namespaces/default/configmaps/broken';

async function corrupt(server: TestServer): Promise<void> {
  await server.server.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: KEY, value: Buffer.from('\u0000not json{') }] });
}

describe('malformed objects', () => {
  it('fail reads with 500 and a normal delete with 500 naming the option', async () => {
    t = await startTestServer();
    await corrupt(t);
    const get = await t.admin.get(PATH);
    expect(get.status).toBe(500);
    expect(get.json()).toMatchObject({ reason: 'InternalError', message: expect.stringContaining('unable to decode') });
    expect((await t.admin.get('/api/v1/namespaces/default/configmaps')).status).toBe(500);
    const del = await t.admin.delete(PATH);
    expect(del.status).toBe(500);
    expect(del.json<{ message: string }>().message).toContain('ignoreStoreReadErrorWithClusterBreakingPotential');
  });

  it('refuse the unsafe option while the gate is off', async () => {
    t = await startTestServer();
    await corrupt(t);
    const del = await t.admin.delete(PATH, { ignoreStoreReadErrorWithClusterBreakingPotential: true });
    expect(del.status).toBe(422);
    expect((await t.admin.get(PATH)).status).toBe(500);
  });

  it('are force-deleted with the option when the gate is on; the option excludes the other fields', async () => {
    t = await startTestServer({ featureGates: FeatureGates.parse('AllowUnsafeMalformedObjectDeletion=true') });
    await corrupt(t);
    const withOthers = await t.admin.delete(PATH, { ignoreStoreReadErrorWithClusterBreakingPotential: true, gracePeriodSeconds: 0, propagationPolicy: 'Background' });
    expect(withOthers.status).toBe(422);
    expect(withOthers.json<{ details: { causes: Array<{ field: string }> } }>().details.causes.map((c) => c.field).sort()).toEqual(['gracePeriodSeconds', 'propagationPolicy']);
    const del = await t.admin.delete(PATH, { ignoreStoreReadErrorWithClusterBreakingPotential: true });
    expect(del.status).toBe(200);
    expect((await t.admin.get(PATH)).status).toBe(404);
    expect((await t.admin.get('/api/v1/namespaces/default/configmaps')).status).toBe(200);
  });

  it('leave well-formed objects to the normal path even with the option', async () => {
    t = await startTestServer({ featureGates: FeatureGates.parse('AllowUnsafeMalformedObjectDeletion=true') });
    await t.admin.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fine', finalizers: ['x.io/hold'] } });
    const del = await t.admin.delete('/api/v1/namespaces/default/configmaps/fine', { ignoreStoreReadErrorWithClusterBreakingPotential: true });
    expect(del.status).toBe(200);
    // The object is well-formed, so its finalizer is honoured.
    expect((await t.admin.get('/api/v1/namespaces/default/configmaps/fine')).json<{ metadata: { deletionTimestamp?: string } }>().metadata.deletionTimestamp).toBeDefined();
  });
});

// A null label value is what `labels: {app: }` in YAML gives. It went to the store as null;
// the watch cache's label index then threw inside the store's apply, the store refused every
// later write (503) while reads waited for a revision the cache never reached (504), /readyz
// stayed green, and the server did not start again on that data directory.
describe('label and annotation values that are not strings', () => {
  const CMS = '/api/v1/namespaces/default/configmaps';
  it.each([
    ['a null label (YAML "app:")', 'application/yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n    app:\n', 201, { labels: { app: '' } }],
    ['a null annotation', 'application/json', JSON.stringify({ metadata: { name: 'x', annotations: { a: null } } }), 201, { annotations: { a: '' } }],
    ['a number label (built-in: Go decode error)', 'application/json', JSON.stringify({ metadata: { name: 'x', labels: { a: 5 } } }), 400, undefined],
  ])('creating a config map with %s leaves the server working', async (_label, contentType, body, code, meta) => {
    t = await startTestServer();
    const res = await t.admin.request('POST', CMS, { body, raw: true, headers: { 'content-type': contentType } });
    expect([code, code === 201 ? 200 : code]).toContain(res.status);
    if (meta) expect(res.json<{ metadata: unknown }>().metadata).toMatchObject(meta);
    else expect(res.json()).toMatchObject({ kind: 'Status', code });
    expect((await t.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' } })).status).toBeLessThan(300);
    expect((await t.admin.get(`${CMS}?labelSelector=app`)).status).toBe(200);
  });

  it('a JSON patch adding a null label stores ""', async () => {
    t = await startTestServer();
    await t.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p' } });
    const res = await t.admin.request('PATCH', `${CMS}/p`, { body: [{ op: 'add', path: '/metadata/labels', value: { a: null } }], headers: { 'content-type': 'application/json-patch+json' } });
    expect(res.status).toBe(200);
    expect(res.json<{ metadata: { labels: unknown } }>().metadata.labels).toEqual({ a: '' });
    expect((await t.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' } })).status).toBeLessThan(300);
  });

  it('a stored null label (written by an earlier version) does not stop the server or its selectors', async () => {
    t = await startTestServer({ storage: 'leveldb' });
    const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'old', namespace: 'default', uid: 'u', creationTimestamp: '2026-01-01T00:00:00Z', labels: { a: null, n: 5 } } };
    await t.server.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/registry/core/configmaps/default/old', value: Buffer.from(JSON.stringify(obj)) }] });
    expect((await t.admin.get(`${CMS}?labelSelector=a%3D`)).json<{ items: unknown[] }>().items).toHaveLength(1);
    const dataDir = t.dataDir;
    await t.server.shutdown();
    t = await startTestServer({ storage: 'leveldb', dataDir });
    expect((await t.admin.get(`${CMS}/old`)).status).toBe(200);
    expect((await t.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' } })).status).toBeLessThan(300);
  });
});

describe('resource versions newer than the store', () => {
  it('get waits briefly, then answers 504 "Too large resource version" with Retry-After', async () => {
    t = await startTestServer();
    const res = await t.admin.get('/api/v1/namespaces/default?resourceVersion=999999');
    expect(res.status).toBe(504);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toMatchObject({ reason: 'Timeout', message: expect.stringContaining('Too large resource version') });
  }, 15_000);
});

describe('overload', () => {
  it('answers 429 with Retry-After beyond --max-requests-inflight', async () => {
    t = await startTestServer({ maxRequestsInflight: 1 });
    const bob = await t.clientFor('bob');
    // A get of a future version holds its slot while it waits.
    const slow = t.admin.get('/api/v1/namespaces/default?resourceVersion=999999');
    await new Promise((r) => setTimeout(r, 200));
    const refused = await bob.get('/api/v1/namespaces');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'TooManyRequests', code: 429, message: 'Too many requests, please try again later.' });
    expect((await slow).status).toBe(504);
    expect((await t.admin.get('/api/v1/namespaces')).status).toBe(200);
  }, 15_000);

  // While every read slot is held: upstream's maxinflight.go lets system:masters through and
  // counts a non-resource POST as mutating; its default priority-and-fairness configuration
  // exempts GET of the probe paths (flow schema "probes"). Watches hold no slot.
  it.each([
    ['a probe, anonymous', 'anonymous', 'GET', '/readyz', 200],
    ['a probe, /livez', 'anonymous', 'GET', '/livez', 200],
    ['a probe, /healthz', 'anonymous', 'GET', '/healthz', 200],
    ['a single health check (not exempt)', 'anonymous', 'GET', '/readyz/ping', 429],
    ['/version, anonymous', 'anonymous', 'GET', '/version', 429],
    ['a read by a plain user', 'bob', 'GET', '/api/v1/namespaces/default/configmaps', 429],
    ['a read by system:masters', 'admin', 'GET', '/api/v1/namespaces/default/configmaps', 200],
    ['a non-resource POST (mutating, its own limit)', 'bob', 'POST', '/version', 403],
    ['a mutating request (its own limit)', 'bob', 'POST', '/api/v1/namespaces/default/configmaps', 403],
  ])('with the read limit reached: %s', async (_label, who, method, path, code) => {
    t = await startTestServer({ maxRequestsInflight: 1 });
    const client = who === 'admin' ? t.admin : who === 'anonymous' ? t.anonymous : await t.clientFor(who);
    const slow = t.admin.get('/api/v1/namespaces/default?resourceVersion=999999');
    await new Promise((r) => setTimeout(r, 200));
    const res = await client.request(method, path, method === 'POST' ? { body: {} } : {});
    expect(res.status).toBe(code);
    if (code === 429) expect(res.headers['retry-after']).toBe('1');
    expect((await slow).status).toBe(504);
  }, 15_000);
});

describe('history', () => {
  it('reads exactly at an older revision until it is compacted, then answers 410 Expired', async () => {
    t = await startTestServer();
    const created = (await t.admin.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'h' }, data: { v: '1' } })).json<{ metadata: { resourceVersion: string } }>();
    const rv = created.metadata.resourceVersion;
    await t.admin.put('/api/v1/namespaces/default/configmaps/h', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'h' }, data: { v: '2' } });
    const exact = await t.admin.get(`/api/v1/namespaces/default/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(exact.status).toBe(200);
    expect(exact.json<{ metadata: { resourceVersion: string }; items: Array<{ data: { v: string } }> }>()).toMatchObject({ metadata: { resourceVersion: rv }, items: [{ data: { v: '1' } }] });
    await t.server.store.compact(t.server.store.currentRevision());
    const gone = await t.admin.get(`/api/v1/namespaces/default/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(gone.status).toBe(410);
    expect(gone.json()).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
  });
});
