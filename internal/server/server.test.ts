// Integration tests: a real server in-process on a free port, real TLS, real HTTP clients.
import { connect as tlsConnect } from 'node:tls';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createCertificateAuthority, issueCertificate } from '../pki/certificates.js';
import { ApiClient } from '../testserver/api-client.js';
import { parseExposition, valueOf } from '../testserver/prometheus-text.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test bodies are free-form JSON

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({}, {});
});
afterAll(async () => {
  await t.stop();
});

const cm = (name: string, extra: Obj = {}): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra.metadata }, data: { a: '1' }, ...extra.rest });
const expectStatus = (body: Obj, code: number, reason: string) =>
  expect(body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason });

describe('transport and identity', () => {
  it('serves HTTP/2 and HTTP/1.1 over TLS, negotiated by ALPN', async () => {
    const h2 = await t.admin.http2Get('/version');
    expect(h2).toMatchObject({ status: 200, alpn: 'h2' });
    expect(JSON.parse(h2.body)).toMatchObject({ major: '1', gitVersion: expect.stringMatching(/^v1\./) });
    expect((await t.admin.get('/version')).status).toBe(200);
  });

  // The server picks the suite, in upstream's order (AES-128-GCM first; ChaCha20 for a client
  // naming it first), whatever order the client lists them in.
  it.each([
    ['Node/OpenSSL default (AES-256-GCM listed first)', {}, 'TLS_AES_128_GCM_SHA256'],
    ['ChaCha20 first (no AES hardware)', { ciphers: 'TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256' }, 'TLS_CHACHA20_POLY1305_SHA256'],
    ['AES-256-GCM only', { ciphers: 'TLS_AES_256_GCM_SHA384' }, 'TLS_AES_256_GCM_SHA384'],
    ['TLS 1.2, default list', { maxVersion: 'TLSv1.2' as const }, /^TLS_ECDHE_(RSA|ECDSA)_WITH_AES_128_GCM_SHA256$/],
  ])('negotiates its own cipher preference: %s', async (_label, client, expected) => {
    const port = Number(new URL(t.server.url).port);
    const cipher = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2'], ...client }, () => {
        resolve(socket.getCipher().standardName);
        socket.destroy();
      });
      socket.on('error', reject);
    });
    if (typeof expected === 'string') expect(cipher).toBe(expected);
    else expect(cipher).toMatch(expected);
  });

  it.each([
    ['/livez', 200],
    ['/readyz', 200],
    ['/healthz', 200],
    ['/version', 200],
    // system:public-info-viewer names the health paths exactly, as upstream's bootstrap policy.
    ['/livez/ping', 403],
    ['/version/', 200],
    ['/api', 403],
    ['/apis', 403],
    ['/api/v1/namespaces', 403],
    ['/metrics', 403],
  ])('anonymous GET %s → %i', async (path, code) => {
    const res = await t.anonymous.get(path);
    expect(res.status).toBe(code);
    if (code === 403) expectStatus(res.json(), 403, 'Forbidden');
  });

  it('authenticates client certificates (CN user, O groups) and authorizes only system:masters', async () => {
    const alice = await t.clientFor('alice', ['dev']);
    const res = await alice.get('/api/v1/namespaces/default/pods');
    expect(res.status).toBe(403);
    expect(res.json()).toMatchObject({
      reason: 'Forbidden',
      message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"',
      details: { kind: 'pods' },
    });
    const root = await t.clientFor('root', ['system:masters']);
    expect((await root.get('/api/v1/namespaces/default/pods')).status).toBe(200);
  });

  it('rejects a certificate from another CA with 401', async () => {
    const other = await createCertificateAuthority('someone-else');
    const { certPem, keyPem } = await issueCertificate(other, { commonName: 'admin', organizations: ['system:masters'], usage: 'client' });
    const caPem = (t.admin as unknown as { creds: { caPem: string } }).creds.caPem;
    const forged = new ApiClient(t.server.url, { caPem, certPem, keyPem });
    const res = await forged.get('/api/v1/namespaces');
    forged.close();
    expect(res.status).toBe(401);
    expectStatus(res.json(), 401, 'Unauthorized');
  });

  it('lets system:masters impersonate and authorizes the impersonated user', async () => {
    const res = await t.admin.get('/api/v1/namespaces', { 'impersonate-user': 'bob' });
    expect(res.status).toBe(403);
    expect(res.json<Obj>().message).toContain('User "bob" cannot list');
    const alice = await t.clientFor('alice');
    expect((await alice.get('/version', { 'impersonate-user': 'admin', 'impersonate-group': 'system:masters' })).status).toBe(403);
  });
});

describe('bootstrap and discovery', () => {
  it('has the four system namespaces, Active, labelled with their name', async () => {
    const list = (await t.admin.get('/api/v1/namespaces')).json<Obj>();
    expect(list.kind).toBe('NamespaceList');
    const names = list.items.map((n: Obj) => n.metadata.name).sort();
    expect(names).toEqual(['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    const def = list.items.find((n: Obj) => n.metadata.name === 'default');
    expect(def.status.phase).toBe('Active');
    expect(def.spec.finalizers).toEqual(['cluster']);
    expect(def.metadata.labels['cluster.io/metadata.name']).toBe('default');
  });

  it('serves discovery documents with cluster group names', async () => {
    expect((await t.admin.get('/api')).json()).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const groups = (await t.admin.get('/apis')).json<Obj>();
    expect(groups.groups.map((g: Obj) => g.name)).toContain('rbac.authorization.cluster.io');
    expect((await t.admin.get('/apis/apps')).json()).toMatchObject({ kind: 'APIGroup', name: 'apps', preferredVersion: { version: 'v1' } });
    const apps = (await t.admin.get('/apis/apps/v1')).json<Obj>();
    expect(apps.resources.map((r: Obj) => r.name)).toEqual(expect.arrayContaining(['deployments', 'deployments/status', 'deployments/scale']));
    const agg = await t.admin.get('/apis', { accept: 'application/json;g=apidiscovery.cluster.io;v=v2;as=APIGroupDiscoveryList,application/json' });
    expect(agg.headers['content-type']).toContain('as=APIGroupDiscoveryList');
    expect(agg.json()).toMatchObject({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.cluster.io/v2' });
    expect((await t.admin.get('/apis/nope.cluster.io/v1')).status).toBe(404);
  });

  it.each(['/api', '/apis'])("answers aggregated discovery of %s asked for in upstream's apidiscovery.k8s.io too, in that group", async (path) => {
    const res = await t.admin.get(path, { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' });
    expect(res.headers['content-type']).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    const body = res.json<Obj>();
    expect(body).toMatchObject({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2' });
    // The same groups as in the naming's own form.
    const own = (await t.admin.get(path, { accept: 'application/json;g=apidiscovery.cluster.io;v=v2;as=APIGroupDiscoveryList' })).json<Obj>();
    expect(body.items).toEqual(own.items);
    expect(own.apiVersion).toBe('apidiscovery.cluster.io/v2');
  });

  it("answers an upstream group name (served here under the naming's) with a 404 that says --naming=kubernetes serves it", async () => {
    const hint = 'the server could not find the requested resource; this server runs with --naming=cluster and serves authorization.k8s.io as authorization.cluster.io; --naming=kubernetes serves authorization.k8s.io';
    const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } };
    for (const res of [await t.admin.post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', review), await t.admin.get('/apis/authorization.k8s.io/v1'), await t.admin.get('/apis/authorization.k8s.io')]) {
      expect(res.status).toBe(404);
      expect(res.json<Obj>()).toMatchObject({ kind: 'Status', reason: 'NotFound', message: hint });
    }
    // A group served under no spelling, or a missing resource of a served group: upstream's text alone.
    for (const path of ['/apis/nope.k8s.io/v1/things', '/apis/authorization.cluster.io/v1/nothings']) {
      expect((await t.admin.get(path)).json<Obj>().message).toBe('the server could not find the requested resource');
    }
  });

  it('serves OpenAPI v2 and v3 with the naming applied', async () => {
    const index = (await t.admin.get('/openapi/v3')).json<Obj>();
    const url = index.paths['apis/apps/v1'].serverRelativeURL as string;
    const doc = (await t.admin.get(url)).json<Obj>();
    expect(doc.openapi).toBe('3.0.0');
    expect(doc.components.schemas['io.k8s.api.apps.v1.Deployment']['x-cluster-group-version-kind']).toBeDefined();
    expect(doc.components.schemas['io.k8s.api.apps.v1.Deployment']['x-kubernetes-group-version-kind']).toEqual([{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
    expect((await t.admin.get('/openapi/v2')).json<Obj>().swagger).toBe('2.0');
  });

  it('answers health checks verbosely and with exclusions', async () => {
    const verbose = await t.admin.get('/readyz?verbose');
    expect(verbose.text()).toMatch(/^\[\+\]ping ok\n/);
    expect(verbose.text()).toContain('[+]store ok');
    expect(verbose.text()).toContain('[+]watch-cache ok');
    expect(verbose.text()).toContain('[+]poststarthook/bootstrap-namespaces ok');
    expect(verbose.text()).toMatch(/readyz check passed\n$/);
    expect((await t.admin.get('/livez?verbose&exclude=store')).text()).toContain('[+]store excluded: ok');
    expect((await t.admin.get('/readyz/nope')).status).toBe(404);
  });
});

describe('create, read, update, delete', () => {
  it('creates with server-owned metadata and answers 200 with the object', async () => {
    const res = await t.admin.post('/api/v1/namespaces/default/configmaps', {
      ...cm('c1'),
      // A resourceVersion is refused on create, as upstream (writes.test.ts); uid and time are replaced.
      metadata: { name: 'c1', uid: 'client-uid', creationTimestamp: '2001-01-01T00:00:00Z' },
    });
    expect(res.status).toBe(200);
    const obj = res.json<Obj>();
    expect(obj.metadata.uid).not.toBe('client-uid');
    expect(obj.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(obj.metadata.creationTimestamp).not.toBe('2001-01-01T00:00:00Z');
    expect(obj.metadata).toMatchObject({ namespace: 'default' });
    // ConfigMaps have no spec, so no generation (as upstream).
    expect(obj.metadata.generation).toBeUndefined();
    expect(Number(obj.metadata.resourceVersion)).toBeGreaterThan(0);
    const got = (await t.admin.get('/api/v1/namespaces/default/configmaps/c1')).json<Obj>();
    expect(got).toEqual(obj);
  });

  it('answers 409 AlreadyExists, and generateName picks a fresh five-character suffix', async () => {
    await t.admin.post('/api/v1/namespaces/default/configmaps', cm('dup'));
    const again = await t.admin.post('/api/v1/namespaces/default/configmaps', cm('dup'));
    expect(again.status).toBe(409);
    expectStatus(again.json(), 409, 'AlreadyExists');
    const generated = await t.admin.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } });
    expect(generated.json<Obj>().metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
  });

  it('lists one namespace and all namespaces', async () => {
    await t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
    await t.admin.post('/api/v1/namespaces/other/configmaps', cm('o1'));
    const one = (await t.admin.get('/api/v1/namespaces/other/configmaps')).json<Obj>();
    expect(one.items.map((i: Obj) => i.metadata.name)).toEqual(['o1']);
    const all = (await t.admin.get('/api/v1/configmaps')).json<Obj>();
    expect(all.kind).toBe('ConfigMapList');
    expect(all.items.map((i: Obj) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual(expect.arrayContaining(['other/o1', 'default/c1']));
    expect(Number(all.metadata.resourceVersion)).toBeGreaterThan(0);
  });

  it('updates conditionally: a stale resourceVersion is 409 Conflict, none is unconditional', async () => {
    const created = (await t.admin.post('/api/v1/namespaces/default/configmaps', cm('u1'))).json<Obj>();
    const updated = await t.admin.put('/api/v1/namespaces/default/configmaps/u1', { ...created, data: { a: '2' } });
    expect(updated.status).toBe(200);
    const stale = await t.admin.put('/api/v1/namespaces/default/configmaps/u1', { ...created, data: { a: '3' } });
    expect(stale.status).toBe(409);
    expect(stale.json()).toMatchObject({ reason: 'Conflict', message: expect.stringContaining('the object has been modified') });
    const { resourceVersion: _rv, ...meta } = created.metadata;
    const unconditional = await t.admin.put('/api/v1/namespaces/default/configmaps/u1', { ...created, metadata: meta, data: { a: '4' } });
    expect(unconditional.json<Obj>().data).toEqual({ a: '4' });
  });

  it('creates by PUT only where upstream allows it', async () => {
    const lease = { apiVersion: 'coordination.cluster.io/v1', kind: 'Lease', metadata: { name: 'l1' }, spec: { holderIdentity: 'me' } };
    const res = await t.admin.put('/apis/coordination.cluster.io/v1/namespaces/default/leases/l1', lease);
    expect(res.status).toBe(201);
    const missing = await t.admin.put('/api/v1/namespaces/default/configmaps/nope', cm('nope'));
    expect(missing.status).toBe(404);
    expect(missing.json()).toMatchObject({ reason: 'NotFound', message: 'configmaps "nope" not found', details: { name: 'nope', kind: 'configmaps' } });
  });

  it('fills kind and apiVersion from the endpoint when the body leaves them out', async () => {
    const res = await t.admin.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'typeless' }, data: { a: 'b' } });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'typeless' } });
  });

  it('rejects bodies whose kind, apiVersion, namespace or name disagree with the URL', async () => {
    const cases: Array<[string, string, Obj]> = [
      ['POST', '/api/v1/namespaces/default/configmaps', { ...cm('x'), kind: 'Secret' }],
      ['POST', '/api/v1/namespaces/default/configmaps', { ...cm('x'), apiVersion: 'apps/v1' }],
      ['POST', '/api/v1/namespaces/default/configmaps', { ...cm('x'), metadata: { name: 'x', namespace: 'other' } }],
      ['PUT', '/api/v1/namespaces/default/configmaps/c1', cm('different')],
    ];
    for (const [method, path, body] of cases) {
      const res = await t.admin.request(method, path, { body });
      expect(res.status, `${method} ${JSON.stringify(body)}`).toBe(400);
      expectStatus(res.json(), 400, 'BadRequest');
    }
  });

  it('keeps status and spec apart for kinds with a status sub-resource; generation follows spec', async () => {
    const d = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd1' },
      spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
      status: { replicas: 7 },
    };
    const created = (await t.admin.post('/apis/apps/v1/namespaces/default/deployments', d)).json<Obj>();
    // A create starts with an empty status whatever the body said (status is the status sub-resource's).
    expect(created.status).toEqual({});
    expect(created.metadata.generation).toBe(1);
    const withStatus = (await t.admin.put('/apis/apps/v1/namespaces/default/deployments/d1/status', { ...created, spec: { ...created.spec, replicas: 5 }, status: { replicas: 3 } })).json<Obj>();
    expect(withStatus.status).toEqual({ replicas: 3 });
    expect(withStatus.spec.replicas).toBe(1);
    expect(withStatus.metadata.generation).toBe(1);
    const scaled = (await t.admin.put('/apis/apps/v1/namespaces/default/deployments/d1', { ...withStatus, spec: { ...withStatus.spec, replicas: 4 }, status: { replicas: 0 } })).json<Obj>();
    expect(scaled.status).toEqual({ replicas: 3 });
    expect(scaled.spec.replicas).toBe(4);
    expect(scaled.metadata.generation).toBe(2);
    const labelled = (await t.admin.put('/apis/apps/v1/namespaces/default/deployments/d1', { ...scaled, metadata: { ...scaled.metadata, labels: { x: 'y' } } })).json<Obj>();
    expect(labelled.metadata.generation).toBe(2);
    const scale = (await t.admin.get('/apis/apps/v1/namespaces/default/deployments/d1/scale')).json<Obj>();
    expect(scale).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 4 }, status: { replicas: 3, selector: 'a=b' } });
  });

  it('deletes at once with a Success Status, or marks Terminating while finalizers remain', async () => {
    const created = (await t.admin.post('/api/v1/namespaces/default/configmaps', cm('del1'))).json<Obj>();
    const del = await t.admin.delete('/api/v1/namespaces/default/configmaps/del1');
    expect(del.status).toBe(200);
    expect(del.json()).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'del1', kind: 'configmaps', uid: created.metadata.uid } });
    expect((await t.admin.get('/api/v1/namespaces/default/configmaps/del1')).status).toBe(404);

    const fin = (await t.admin.post('/api/v1/namespaces/default/configmaps', { ...cm('fin'), metadata: { name: 'fin', finalizers: ['example.com/hold'] } })).json<Obj>();
    const marked = await t.admin.delete('/api/v1/namespaces/default/configmaps/fin');
    expect(marked.status).toBe(200);
    const terminating = marked.json<Obj>();
    expect(terminating.metadata.deletionTimestamp).toBeDefined();
    expect(terminating.metadata.deletionGracePeriodSeconds).toBe(0);
    const again = (await t.admin.delete('/api/v1/namespaces/default/configmaps/fin')).json<Obj>();
    expect(again.metadata.deletionTimestamp).toBe(terminating.metadata.deletionTimestamp);
    const released = await t.admin.put('/api/v1/namespaces/default/configmaps/fin', { ...terminating, metadata: { ...terminating.metadata, finalizers: [] } });
    expect(released.status).toBe(200);
    expect((await t.admin.get('/api/v1/namespaces/default/configmaps/fin')).status).toBe(404);
    void fin;
  });

  it('checks delete preconditions and options', async () => {
    const created = (await t.admin.post('/api/v1/namespaces/default/configmaps', cm('pre'))).json<Obj>();
    const wrongUid = await t.admin.delete('/api/v1/namespaces/default/configmaps/pre', { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'nope' } });
    expect(wrongUid.status).toBe(409);
    // Upstream's rest.BeforeDelete words these and names the kind.
    expect(wrongUid.json<Obj>().message).toBe(
      `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (nope) does not match the UID in record (${created.metadata.uid}). The object might have been deleted and then recreated`,
    );
    expect(wrongUid.json<Obj>().details).toEqual({ name: 'pre', kind: 'ConfigMap' });
    const wrongRv = await t.admin.delete('/api/v1/namespaces/default/configmaps/pre', { preconditions: { resourceVersion: '1' } });
    expect(wrongRv.status).toBe(409);
    expect(wrongRv.json<Obj>().message).toBe(
      `Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${created.metadata.resourceVersion}). The object might have been modified`,
    );
    const sideways = await t.admin.delete('/api/v1/namespaces/default/configmaps/pre?propagationPolicy=Sideways');
    expect(sideways.status).toBe(422);
    expect(sideways.json<Obj>().message).toContain('supported values: "Foreground", "Background", "Orphan", "nil"');
    expect((await t.admin.delete('/api/v1/namespaces/default/configmaps/pre', { orphanDependents: true, propagationPolicy: 'Background' })).status).toBe(422);
    // In the query a boolean reads as upstream's parameter codec reads it; in the body it must be a JSON boolean.
    expect((await t.admin.delete('/api/v1/namespaces/default/configmaps/pre?orphanDependents=True&propagationPolicy=Background')).status).toBe(422);
    const notBool = await t.admin.delete('/api/v1/namespaces/default/configmaps/pre', { orphanDependents: 'yes' });
    expect(notBool.status).toBe(400);
    expect(notBool.json<{ message: string }>().message).toContain('orphanDependents must be a boolean');
    const dry = await t.admin.delete('/api/v1/namespaces/default/configmaps/pre?dryRun=All');
    expect(dry.status).toBe(200);
    expect((await t.admin.get('/api/v1/namespaces/default/configmaps/pre')).status).toBe(200);
    const ok = await t.admin.delete('/api/v1/namespaces/default/configmaps/pre', { preconditions: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion }, gracePeriodSeconds: 0, propagationPolicy: 'Background' });
    expect(ok.status).toBe(200);
    // A negative grace period is read as 1 second, not refused (upstream rest.BeforeDelete).
    await t.admin.post('/api/v1/namespaces/default/configmaps', cm('negative-grace'));
    expect((await t.admin.delete('/api/v1/namespaces/default/configmaps/negative-grace', { gracePeriodSeconds: -1 })).status).toBe(200);
    expect((await t.admin.get('/api/v1/namespaces/default/configmaps/negative-grace')).status).toBe(404);
  });

  it('deletes collections by label and field selector', async () => {
    await t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dc' } });
    for (const [name, tier] of [['a', 'web'], ['b', 'web'], ['c', 'db']]) {
      await t.admin.post('/api/v1/namespaces/dc/configmaps', { ...cm(name!), metadata: { name, labels: { tier } } });
    }
    const byLabel = await t.admin.delete('/api/v1/namespaces/dc/configmaps?labelSelector=tier%3Dweb');
    expect(byLabel.status).toBe(200);
    expect(byLabel.json<Obj>().items.map((i: Obj) => i.metadata.name).sort()).toEqual(['a', 'b']);
    const byField = await t.admin.delete('/api/v1/namespaces/dc/configmaps?fieldSelector=metadata.name%3Dc');
    expect(byField.json<Obj>().items.map((i: Obj) => i.metadata.name)).toEqual(['c']);
    expect((await t.admin.get('/api/v1/namespaces/dc/configmaps')).json<Obj>().items).toEqual([]);
    expect((await t.admin.delete('/api/v1/namespaces/dc/configmaps?fieldSelector=spec.nope%3Dc')).status).toBe(400);
  });

  it('deletes a collection larger than its workers in list order, marks what finalizers hold, and stops at a failure', async () => {
    await t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dc-many' } });
    const names = Array.from({ length: 50 }, (_, i) => `m${String(i).padStart(2, '0')}`);
    for (const name of names) {
      const finalizers = name === 'm07' || name === 'm33' ? ['example.com/hold'] : undefined;
      expect((await t.admin.post('/api/v1/namespaces/dc-many/configmaps', { ...cm(name), metadata: { name, finalizers } })).status).toBe(200);
    }
    // Every delete fails its precondition: the request answers the failure and deletes nothing.
    const refused = await t.admin.delete('/api/v1/namespaces/dc-many/configmaps', { preconditions: { uid: 'not-this-one' } });
    expect(refused.status).toBe(409);
    expect(refused.json<Obj>().reason).toBe('Conflict');
    expect((await t.admin.get('/api/v1/namespaces/dc-many/configmaps')).json<Obj>().items).toHaveLength(50);

    const all = await t.admin.delete('/api/v1/namespaces/dc-many/configmaps');
    expect(all.status).toBe(200);
    const items = all.json<Obj>().items as Obj[];
    expect(items.map((i) => i.metadata.name)).toEqual(names);
    expect(items.filter((i) => i.metadata.deletionTimestamp).map((i) => i.metadata.name)).toEqual(['m07', 'm33']);
    const left = (await t.admin.get('/api/v1/namespaces/dc-many/configmaps')).json<Obj>().items as Obj[];
    expect(left.map((i) => i.metadata.name)).toEqual(['m07', 'm33']);
    for (const name of ['m07', 'm33']) {
      const held = (await t.admin.get(`/api/v1/namespaces/dc-many/configmaps/${name}`)).json<Obj>();
      await t.admin.put(`/api/v1/namespaces/dc-many/configmaps/${name}`, { ...held, metadata: { ...held.metadata, finalizers: [] } });
    }
    expect((await t.admin.get('/api/v1/namespaces/dc-many/configmaps')).json<Obj>().items).toEqual([]);
  });
});

describe('namespaces', () => {
  it('refuses creates in a missing namespace (404) and in a terminating one (403), then removes the namespace and its content', async () => {
    const missing = await t.admin.post('/api/v1/namespaces/ghost/configmaps', cm('x'));
    expect(missing.status).toBe(404);
    expect(missing.json()).toMatchObject({ reason: 'NotFound', message: 'namespaces "ghost" not found' });

    await t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    await t.admin.post('/api/v1/namespaces/doomed/configmaps', { ...cm('held'), metadata: { name: 'held', finalizers: ['example.com/hold'] } });
    await t.admin.post('/api/v1/namespaces/doomed/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } });
    const del = await t.admin.delete('/api/v1/namespaces/doomed');
    expect(del.status).toBe(200);
    expect(del.json<Obj>().status.phase).toBe('Terminating');
    const refused = await t.admin.post('/api/v1/namespaces/doomed/configmaps', cm('late'));
    expect(refused.status).toBe(403);
    expect(refused.json<Obj>().message).toContain('because it is being terminated');

    await waitFor(async () => (await t.admin.get('/api/v1/namespaces/doomed/secrets/s')).status === 404);
    // The finalizer on `held` keeps the namespace until someone removes it.
    expect((await t.admin.get('/api/v1/namespaces/doomed')).status).toBe(200);
    const held = (await t.admin.get('/api/v1/namespaces/doomed/configmaps/held')).json<Obj>();
    await t.admin.put('/api/v1/namespaces/doomed/configmaps/held', { ...held, metadata: { ...held.metadata, finalizers: [] } });
    await waitFor(async () => (await t.admin.get('/api/v1/namespaces/doomed')).status === 404);
  });

  it('refuses to delete the system namespaces', async () => {
    const res = await t.admin.delete('/api/v1/namespaces/kube-system');
    expect(res.status).toBe(403);
  });
});

describe('errors are Status objects with the right code', () => {
  it.each([
    ['unknown path', 'GET', '/nope', undefined, {}, 404, 'NotFound'],
    ['unknown resource', 'GET', '/api/v1/widgets', undefined, {}, 404, 'NotFound'],
    ['unknown sub-resource', 'GET', '/api/v1/namespaces/default/configmaps/c1/status', undefined, {}, 404, 'NotFound'],
    ['missing object', 'GET', '/api/v1/namespaces/default/configmaps/none', undefined, {}, 404, 'NotFound'],
    ['PUT on a collection', 'PUT', '/api/v1/namespaces/default/configmaps', {}, {}, 405, 'MethodNotAllowed'],
    ['POST across namespaces', 'POST', '/api/v1/configmaps', cm('z'), {}, 405, 'MethodNotAllowed'],
    ['unsupported Accept', 'GET', '/api/v1/namespaces/default/configmaps', undefined, { accept: 'text/html' }, 406, 'NotAcceptable'],
    ['unsupported Content-Type', 'POST', '/api/v1/namespaces/default/configmaps', 'x', { 'content-type': 'text/plain' }, 415, 'UnsupportedMediaType'],
    ['bad resourceVersion', 'GET', '/api/v1/namespaces/default/configmaps?resourceVersion=abc', undefined, {}, 400, 'BadRequest'],
    ['bad dryRun', 'POST', '/api/v1/namespaces/default/configmaps?dryRun=Some', cm('q'), {}, 400, 'BadRequest'],
  ] as Array<[string, string, string, unknown, Record<string, string>, number, string]>)('%s → %i', async (_name, method, path, body, headers, code, reason) => {
    const res = await t.admin.request(method, path, { ...(body !== undefined ? { body } : {}), headers, raw: typeof body === 'string' });
    expect(res.status).toBe(code);
    expectStatus(res.json(), code, reason);
  });

  it('answers 400 with the position for malformed JSON and stores nothing', async () => {
    const before = (await t.admin.get('/api/v1/namespaces/default/configmaps')).json<Obj>().items.length;
    const res = await t.admin.request('POST', '/api/v1/namespaces/default/configmaps', { body: '{"apiVersion":"v1",\n "kind": "ConfigMap", "metadata": {"name": "broken"},, }', raw: true });
    expect(res.status).toBe(400);
    expect(res.json<Obj>().message).toMatch(/line 2/);
    expect((await t.admin.get('/api/v1/namespaces/default/configmaps')).json<Obj>().items.length).toBe(before);
  });

  it('answers 413 for bodies over 3 MiB', async () => {
    const big = { ...cm('big'), data: { a: 'x'.repeat(3 * 1024 * 1024) } };
    const res = await t.admin.post('/api/v1/namespaces/default/configmaps', big);
    expect(res.status).toBe(413);
    expectStatus(res.json(), 413, 'RequestEntityTooLarge');
    expect((await t.admin.get('/api/v1/namespaces/default/configmaps/big')).status).toBe(404);
  });
});

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('JSON bytes as Go writes them', () => {
  it('a Status error keeps upstream\'s field order and ends with a newline', async () => {
    const res = await t.admin.get('/api/v1/namespaces/default/configmaps/no-such');
    expect(res.text()).toBe('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"no-such\\" not found","reason":"NotFound","details":{"name":"no-such","kind":"configmaps"},"code":404}\n');
  });

  it('objects and lists end with a newline; the indented form does not', async () => {
    await t.admin.post('/api/v1/namespaces/default/configmaps', cm('newline-check'));
    for (const path of ['/api/v1/namespaces/default/configmaps/newline-check', '/api/v1/namespaces/default/configmaps', '/api/v1/namespaces/default/configmaps?limit=1']) {
      const text = (await t.admin.get(path)).text();
      expect(text.endsWith('}\n')).toBe(true);
      expect(text.endsWith('}\n\n')).toBe(false);
    }
    const pretty = (await t.admin.get('/api/v1/namespaces/default/configmaps/newline-check?pretty=true')).text();
    expect(pretty.endsWith('}')).toBe(true);
    const prettyError = (await t.admin.get('/api/v1/namespaces/default/configmaps/none?pretty=1')).text();
    expect(prettyError.endsWith('}')).toBe(true);
  });
});

describe('validation, defaulting, field validation', () => {
  const deployment = (name: string, spec: Obj = {}): Obj => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }, ...spec },
  });

  it('answers 422 with one cause per invalid field', async () => {
    const badName = await t.admin.post('/api/v1/namespaces/default/configmaps', cm('Bad_Name'));
    expect(badName.status).toBe(422);
    expect(badName.json()).toMatchObject({ reason: 'Invalid', details: { name: 'Bad_Name', kind: 'ConfigMap', causes: [{ field: 'metadata.name', reason: 'FieldValueInvalid' }] } });
    const broken = await t.admin.post('/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'broken', labels: { 'bad label!': 'x' } },
      spec: { template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c' }] } } },
    });
    expect(broken.status).toBe(422);
    const fields = broken.json<Obj>().details.causes.map((c: Obj) => c.field);
    expect(fields).toEqual(expect.arrayContaining(['metadata.labels', 'spec.selector', 'spec.template.spec.containers[0].image']));
    expect(broken.json<Obj>().message).toMatch(/^Deployment\.apps "broken" is invalid: \[/);
    expect((await t.admin.get('/apis/apps/v1/namespaces/default/deployments/broken')).status).toBe(404);
  });

  it('applies upstream defaults on create', async () => {
    const d = (await t.admin.post('/apis/apps/v1/namespaces/default/deployments', deployment('defaulted'))).json<Obj>();
    expect(d.spec).toMatchObject({ replicas: 1, revisionHistoryLimit: 10, progressDeadlineSeconds: 600, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } } });
    expect(d.spec.template.spec).toMatchObject({ restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', terminationGracePeriodSeconds: 30 });
    expect(d.spec.template.spec.containers[0]).toMatchObject({ imagePullPolicy: 'Always', terminationMessagePath: '/dev/termination-log' });
  });

  it('handles unknown fields by fieldValidation: Warn (default), Ignore, Strict', async () => {
    const body = (name: string) => ({ ...cm(name), spec: { bogus: true } });
    const warn = await t.admin.post('/api/v1/namespaces/default/configmaps', body('fv-warn'));
    expect(warn.status).toBe(200);
    // Upstream quotes the text as Go's %q does: `299 - "unknown field \"spec\""`.
    expect(warn.headers.warning).toBe('299 - "unknown field \\"spec\\""');
    expect(warn.json<Obj>().spec).toBeUndefined();
    const ignore = await t.admin.post('/api/v1/namespaces/default/configmaps?fieldValidation=Ignore', body('fv-ignore'));
    expect(ignore.status).toBe(200);
    expect(ignore.headers.warning).toBeUndefined();
    const strict = await t.admin.post('/api/v1/namespaces/default/configmaps?fieldValidation=Strict', body('fv-strict'));
    expect(strict.status).toBe(400);
    expect(strict.json<Obj>().message).toContain('unknown field "spec"');
    expect((await t.admin.get('/api/v1/namespaces/default/configmaps/fv-strict')).status).toBe(404);
    expect((await t.admin.post('/api/v1/namespaces/default/configmaps?fieldValidation=Loud', body('fv-x'))).status).toBe(400);
  });
});

describe('versions of one resource', () => {
  it('serves an HPA created through autoscaling/v1 from storage in v2, and back', async () => {
    const v1 = {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 4, targetCPUUtilizationPercentage: 60 },
    };
    const created = await t.admin.post('/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers', v1);
    expect(created.status).toBe(200);
    expect(created.json<Obj>().spec.targetCPUUtilizationPercentage).toBe(60);
    const asV2 = (await t.admin.get('/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/h')).json<Obj>();
    expect(asV2.apiVersion).toBe('autoscaling/v2');
    expect(asV2.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }]);
    const listV1 = (await t.admin.get('/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers')).json<Obj>();
    expect(listV1.items[0]).toMatchObject({ apiVersion: 'autoscaling/v1', spec: { targetCPUUtilizationPercentage: 60 } });
  });
});

describe('pod sub-resources', () => {
  it('binds an unscheduled pod to a node once (binding sub-resource and bindings collection)', async () => {
    const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    await t.admin.post('/api/v1/namespaces/default/pods', pod('b1'));
    await t.admin.post('/api/v1/namespaces/default/pods', pod('b2'));
    const bound = await t.admin.post('/api/v1/namespaces/default/pods/b1/binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'b1' }, target: { kind: 'Node', name: 'node-a' } });
    expect(bound.status).toBe(201);
    expect(bound.json()).toMatchObject({ kind: 'Status', status: 'Success' });
    expect((await t.admin.get('/api/v1/namespaces/default/pods/b1')).json<Obj>().spec.nodeName).toBe('node-a');
    const again = await t.admin.post('/api/v1/namespaces/default/pods/b1/binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'b1' }, target: { name: 'node-b' } });
    expect(again.status).toBe(409);
    const viaCollection = await t.admin.post('/api/v1/namespaces/default/bindings', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'b2' }, target: { name: 'node-b' } });
    expect(viaCollection.status).toBe(201);
    expect((await t.admin.get('/api/v1/namespaces/default/pods/b2')).json<Obj>().spec.nodeName).toBe('node-b');
    expect((await t.admin.post('/api/v1/namespaces/default/pods/b2/binding', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'b2' }, target: {} })).status).toBe(422);
  });

  it('answers node-agent sub-resources with 503 instead of pretending', async () => {
    expect((await t.admin.get('/api/v1/namespaces/default/pods/b1/log')).status).toBe(503);
    expect((await t.admin.get('/api/v1/namespaces/default/pods/b1/exec?command=ls')).status).toBe(503);
  });
});

describe('metrics', () => {
  it('serves Prometheus metrics to system:masters: requests by verb and code, stored objects', async () => {
    await t.admin.get('/api/v1/namespaces/default/configmaps');
    const res = await t.admin.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const text = res.text();
    expect(text).toMatch(/apiserver_request_total\{verb="LIST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="namespace",component="apiserver",code="200"\} \d+/);
    expect(text).toMatch(/apiserver_request_duration_seconds_bucket\{/);
    expect(text).toMatch(/apiserver_storage_objects\{resource="namespaces"\} \d+/);
    expect((await t.anonymous.get('/metrics')).status).toBe(403);
  });

  it('counts watch delivery rounds: the streams they wake, their lag and duration', async () => {
    const scrape = async () => parseExposition((await t.admin.get('/metrics')).text());
    const before = await scrape();
    let added!: () => void;
    const seen = new Promise<void>((resolve) => (added = resolve));
    const w = t.admin.watch('/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3Ddelivery-metrics', (line) => {
      if (line.includes('"ADDED"')) added();
    });
    try {
      const created = await t.admin.post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'delivery-metrics' } });
      expect(created.status, created.text()).toBe(200);
      await seen;
    } finally {
      w.stop();
    }
    const after = await scrape();
    const grew = (name: string) => valueOf(after, name, {})! - (valueOf(before, name, {}) ?? 0);
    expect(grew('clusterd_watch_delivery_woken_total')).toBeGreaterThanOrEqual(1);
    expect(grew('clusterd_watch_delivery_lag_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(grew('clusterd_watch_delivery_round_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(valueOf(after, 'clusterd_watch_delivery_lag_seconds_bucket', { le: '+Inf' })).toBe(valueOf(after, 'clusterd_watch_delivery_lag_seconds_count', {}));
  });
});

describe('hostile input', () => {
  it.each([
    ['a slash in the namespace', '/api/v1/namespaces/a%2Fb/configmaps', 400],
    ['an unterminated set', '/api/v1/namespaces/default/configmaps?labelSelector=' + encodeURIComponent('a in (' + 'x,'.repeat(1000) + 'y'), 400],
    ['a nonsense label selector', '/api/v1/namespaces/default/configmaps?labelSelector=' + encodeURIComponent('!!!'), 400],
    ['a malformed field selector', '/api/v1/namespaces/default/configmaps?fieldSelector=' + encodeURIComponent('metadata.name==a=b=c'), 400],
    ['a negative limit (no limit)', '/api/v1/namespaces/default/configmaps?limit=-5', 200],
    ['a non-numeric limit', '/api/v1/namespaces/default/configmaps?limit=abc', 400],
    ['a limit beyond int64', '/api/v1/namespaces/default/configmaps?limit=9223372036854775808', 400],
    ['a watch timeout beyond int64', '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=9223372036854775808', 400],
    ['the largest int64 limit', '/api/v1/namespaces/default/configmaps?limit=9223372036854775807', 200],
    ['a non-numeric watch timeout', '/api/v1/namespaces/default/configmaps?timeoutSeconds=x&watch=1', 400],
    // Over 16 KiB of request line, Node's own HTTP/1.1 limit, which answered a bare 431.
    ['a 70,000-character label value', '/api/v1/namespaces/default/configmaps?labelSelector=' + encodeURIComponent('a=' + 'b'.repeat(70_000)), 400],
  ])('GET with %s, as a Status when it fails', async (_label, path, code) => {
    const res = await t.admin.get(path);
    expect(res.status).toBe(code);
    if (code !== 200) expect(res.json()).toMatchObject({ kind: 'Status', code });
  });

  // `?timeout=` is parsed as a Go duration for every request but watches (upstream's
  // WithRequestDeadline), before authentication; what does not parse is a 400.
  it.each([
    ['garbage', '/api/v1/namespaces/default/configmaps?timeout=garbage', 400, 'invalid timeout specified in the request URL - time: invalid duration "garbage"'],
    ['a number without unit', '/api/v1/namespaces/default/configmaps?timeout=5', 400, 'invalid timeout specified in the request URL - time: missing unit in duration "5"'],
    ['an unknown unit', '/api/v1/namespaces/default/configmaps?timeout=5d', 400, 'invalid timeout specified in the request URL - time: unknown unit "d" in duration "5d"'],
    ['an overflowing duration', '/api/v1/namespaces/default/configmaps?timeout=9999999999999h', 400, 'invalid timeout specified in the request URL - time: invalid duration "9999999999999h"'],
    ['a non-resource path', '/version?timeout=abc', 400, 'invalid timeout specified in the request URL - time: invalid duration "abc"'],
    ['a valid duration', '/api/v1/namespaces/default/configmaps?timeout=1m30s', 200, undefined],
    ['a negative duration (the server default)', '/api/v1/namespaces/default/configmaps?timeout=-5s', 200, undefined],
    ['a fraction', '/api/v1/namespaces/default/configmaps?timeout=1.5s', 200, undefined],
  ])('timeout with %s', async (_label, path, code, message) => {
    const res = await t.admin.get(path);
    expect(res.status).toBe(code);
    if (message) expect(res.json()).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'BadRequest', code, message });
  });

  // The adapter's URL resolves dot segments: `configmaps/..` addressed the namespace itself
  // (a DELETE there deleted it). The path is read as sent, so the name is refused instead.
  it.each([
    ['a name ".."', '/api/v1/namespaces/default/configmaps/..', "name may not be '..'"],
    ['a percent-encoded name ".."', '/api/v1/namespaces/default/configmaps/%2E%2E', "name may not be '..'"],
    ['a name "."', '/api/v1/namespaces/default/configmaps/.', "name may not be '.'"],
    ['a name ".." before a sub-resource', '/api/v1/namespaces/default/configmaps/../secrets', "name may not be '..'"],
    ['a namespace ".."', '/api/v1/namespaces/../configmaps', "namespace may not be '..'"],
  ])('a path with %s is a 400, not another object', async (_label, path, message) => {
    const res = await t.admin.http2Get(path);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400, message });
  });

  it('does not resolve dot segments of non-resource paths into other paths', async () => {
    // Resolved, the path would be the namespace list (200 for the admin).
    expect((await t.admin.http2Get('/healthz/../api/v1/namespaces')).status).toBe(404);
  });

  it('serves an HTTP/2 request with 200 header fields (node:http2 refused more than 128)', async () => {
    const headers = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`x-h${i}`, 'v']));
    expect((await t.admin.get('/version', headers)).status).toBe(200);
    expect((await t.admin.http2Get('/version', headers)).status).toBe(200);
  });

  // Requests the node adapter cannot turn into a URL were handed to an error handler that
  // answered nothing: the connection hung until the client gave up. One raw HTTP/1.x request
  // per connection (anonymous; /readyz and /version are public).
  const rawHttp1 = (head: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve) => {
      const port = Number(new URL(t.server.url).port);
      const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => socket.write(head));
      let out = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (out += d));
      const done = () => {
        clearTimeout(timer);
        socket.destroy();
        const status = Number(/^HTTP\/1\.\d (\d{3})/.exec(out)?.[1] ?? 0);
        resolve({ status, body: out.slice(out.indexOf('\r\n\r\n') + 4) });
      };
      const timer = setTimeout(done, 5000);
      socket.on('end', done);
      socket.on('error', done);
    });
  it.each([
    ['a backslash in the path', 'GET /version\\x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', 400, 'malformed request: Backslash in request path'],
    ['an invalid Host header', 'GET /readyz HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n', 400, 'malformed request: Invalid URL'],
    ['HTTP/1.1 without Host', 'GET /readyz HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'malformed request: Missing host header'],
    ['HTTP/1.0 without Host (served, as Go serves it)', 'GET /readyz HTTP/1.0\r\n\r\n', 200, undefined],
  ])('answers a request with %s', async (_label, head, code, message) => {
    const res = await rawHttp1(head);
    expect(res.status).toBe(code);
    if (message) expect(JSON.parse(res.body)).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'BadRequest', code, message });
  });

  // A Content-Type that does not parse is a 415 naming what the endpoint takes, as upstream's
  // NegotiateInputSerializer (the list was empty: "accepted media types include:  (got ;;;)"); like upstream it does not echo the type sent.
  it.each([
    ['POST', '/api/v1/namespaces/default/configmaps', ';;;', 'application/json, application/yaml, application/vnd.cluster.protobuf, application/vnd.kubernetes.protobuf'],
    ['PUT', '/api/v1/namespaces/default/configmaps/x', 'application', 'application/json, application/yaml, application/vnd.cluster.protobuf, application/vnd.kubernetes.protobuf'],
    ['PATCH', '/api/v1/namespaces/default/configmaps/x', '/json', 'application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml'],
  ])('%s %s with Content-Type %j → 415 listing the accepted types', async (method, path, contentType, accepted) => {
    const res = await t.admin.request(method, path, { body: '{}', raw: true, headers: { 'content-type': contentType } });
    expect(res.status).toBe(415);
    expect(res.json()).toMatchObject({
      kind: 'Status',
      reason: 'UnsupportedMediaType',
      code: 415,
      message: `the body of the request was in an unknown format - accepted media types include: ${accepted}`,
    });
  });

  it('refuses more than 1 MiB of request headers with 431, as upstream', async () => {
    const res = await t.admin.get('/api/v1/namespaces/default/configmaps?labelSelector=' + 'a'.repeat(1_100_000));
    expect(res.status).toBe(431);
  });

  it('answers malformed impersonation headers with 400', async () => {
    const res = await t.admin.get('/api/v1/namespaces', { 'impersonate-user': 'bob', 'impersonate-extra-%zz': 'x' });
    expect(res.status).toBe(400);
  });

  it('survives a long Accept list and odd content types', async () => {
    const accept = Array.from({ length: 300 }, (_, i) => `application/x-${i};q=0.${i % 9}`).join(', ') + ', application/json;q=0.001';
    expect((await t.admin.get('/api/v1/namespaces/default/configmaps', { accept })).status).toBe(200);
    const odd = await t.admin.request('POST', '/api/v1/namespaces/default/configmaps', { body: '{}', raw: true, headers: { 'content-type': 'application/json;;;=;charset' } });
    expect([400, 415, 422]).toContain(odd.status);
  });
});

describe('services', () => {
  const svc = (name: string, spec: Obj = {}) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...spec } });
  it('allocate distinct cluster IPs and node ports, keep them on update, refuse taken ones', async () => {
    const a = (await t.admin.post('/api/v1/namespaces/default/services', svc('ip-a'))).json<Obj>();
    const b = (await t.admin.post('/api/v1/namespaces/default/services', svc('ip-b', { type: 'NodePort' }))).json<Obj>();
    expect(a.spec.clusterIP).toMatch(/^10\.(9[6-9]|1[01][0-9])\.\d+\.\d+$/);
    expect(a.spec.clusterIPs).toEqual([a.spec.clusterIP]);
    expect(b.spec.clusterIP).not.toBe(a.spec.clusterIP);
    expect(b.spec.ports[0].nodePort).toBeGreaterThanOrEqual(30000);
    const headless = (await t.admin.post('/api/v1/namespaces/default/services', svc('ip-h', { clusterIP: 'None' }))).json<Obj>();
    expect(headless.spec.clusterIP).toBe('None');
    const taken = await t.admin.post('/api/v1/namespaces/default/services', svc('ip-c', { clusterIP: a.spec.clusterIP }));
    expect(taken.status).toBe(422);
    const updated = (await t.admin.put('/api/v1/namespaces/default/services/ip-a', { ...a, metadata: { ...a.metadata, labels: { x: 'y' } } })).json<Obj>();
    expect(updated.spec.clusterIP).toBe(a.spec.clusterIP);
  });
});

describe('review kinds are answered, never stored', () => {
  // The test server runs the default naming: the review groups are *.cluster.io.
  const AUTHZ = '/apis/authorization.cluster.io/v1';
  const AUTHN = '/apis/authentication.cluster.io/v1';
  const ssar = (resourceAttributes: Obj): Obj => ({ apiVersion: 'authorization.cluster.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes } });
  const getPods = { verb: 'get', resource: 'pods', namespace: 'default' };

  it('answers the admin allowed, with no name and nothing an object would get', async () => {
    const res = await t.admin.post(`${AUTHZ}/selfsubjectaccessreviews`, ssar(getPods));
    expect(res.status).toBe(200);
    const body = res.json<Obj>();
    expect(body).toEqual({ kind: 'SelfSubjectAccessReview', apiVersion: 'authorization.cluster.io/v1', metadata: {}, spec: { resourceAttributes: getPods }, status: { allowed: true, reason: 'member of system:masters' } });
  });

  it('answers an unprivileged user not allowed, and lets it ask about itself', async () => {
    const carol = await t.clientFor('carol', ['dev']);
    const denied = await carol.post(`${AUTHZ}/selfsubjectaccessreviews`, ssar(getPods));
    expect(denied.status).toBe(200);
    expect(denied.json<Obj>().status).toEqual({ allowed: false });
    const rules = await carol.post(`${AUTHZ}/selfsubjectrulesreviews`, { spec: { namespace: 'default' } });
    expect(rules.status).toBe(200);
    expect(rules.json<Obj>().status.resourceRules).toContainEqual({ verbs: ['create'], apiGroups: ['authentication.cluster.io'], resources: ['selfsubjectreviews'] });
    const whoami = await carol.post(`${AUTHN}/selfsubjectreviews`, {});
    expect(whoami.json<Obj>().status).toEqual({ userInfo: { username: 'carol', groups: ['dev', 'system:authenticated'] } });
    // Asking about others stays forbidden, as upstream grants SubjectAccessReview to nobody by default.
    const sar = await carol.post(`${AUTHZ}/subjectaccessreviews`, { spec: { user: 'x', resourceAttributes: getPods } });
    expect(sar.status).toBe(403);
    // Anonymous callers are not system:authenticated: no self reviews.
    expect((await t.anonymous.post(`${AUTHN}/selfsubjectreviews`, {})).status).toBe(403);
  });

  it('reports the impersonated user in whoami and decides for it', async () => {
    const headers = { 'impersonate-user': 'bob', 'impersonate-group': 'qa', 'impersonate-uid': 'b-1', 'impersonate-extra-scope': 'x' };
    const whoami = await t.admin.post(`${AUTHN}/selfsubjectreviews`, {}, headers);
    expect(whoami.status).toBe(200);
    expect(whoami.json<Obj>().status.userInfo).toEqual({ username: 'bob', uid: 'b-1', groups: ['qa', 'system:authenticated'], extra: { scope: ['x'] } });
    const asBob = await t.admin.post(`${AUTHZ}/selfsubjectaccessreviews`, ssar(getPods), headers);
    expect(asBob.json<Obj>().status).toEqual({ allowed: false });
  });

  it('decides SubjectAccessReview and LocalSubjectAccessReview for the named subject', async () => {
    const sar = await t.admin.post(`${AUTHZ}/subjectaccessreviews`, { spec: { groups: ['system:masters'], nonResourceAttributes: { path: '/metrics', verb: 'get' } } });
    expect(sar.json<Obj>().status).toMatchObject({ allowed: true });
    const lsar = await t.admin.post(`${AUTHZ}/namespaces/default/localsubjectaccessreviews`, { spec: { user: 'bob', resourceAttributes: getPods } });
    expect(lsar.status).toBe(200);
    expect(lsar.json<Obj>()).toMatchObject({ metadata: { namespace: 'default' }, status: { allowed: false } });
  });

  it('stores nothing, with or without dryRun, and serves no reads', async () => {
    const before = t.server.store.currentRevision();
    expect((await t.admin.post(`${AUTHZ}/selfsubjectaccessreviews?dryRun=All`, ssar(getPods))).json<Obj>().status.allowed).toBe(true);
    expect((await t.admin.post(`${AUTHN}/tokenreviews`, { spec: { token: 'abc' } })).json<Obj>().status).toEqual({
      user: {},
      error: 'invalid bearer token',
    });
    expect(t.server.store.currentRevision()).toBe(before);
    expect((await t.server.store.range('/registry/authorization.k8s.io/')).kvs).toEqual([]);
    expect((await t.server.store.range('/registry/authentication.k8s.io/')).kvs).toEqual([]);
    const list = await t.admin.get(`${AUTHZ}/selfsubjectaccessreviews`);
    expect(list.status).toBe(405);
    expectStatus(list.json(), 405, 'MethodNotAllowed');
    expect((await t.admin.get(`${AUTHZ}/selfsubjectaccessreviews/x`)).status).toBe(404);
    expect((await t.admin.request('DELETE', `${AUTHZ}/selfsubjectaccessreviews/x`)).status).toBe(404);
    expect((await t.admin.post(`${AUTHZ}/localsubjectaccessreviews`, {})).status).toBe(404);
    expect((await t.admin.post(`${AUTHZ}/selfsubjectaccessreviews?dryRun=Some`, ssar(getPods))).status).toBe(400);
  });

  it.each([
    ['SSAR without attributes', `${AUTHZ}/selfsubjectaccessreviews`, { spec: {} }, 422, 'SelfSubjectAccessReview.authorization.cluster.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified'],
    ['SSAR with a name', `${AUTHZ}/selfsubjectaccessreviews`, { metadata: { name: 'x' }, spec: { resourceAttributes: getPods } }, 422, 'SelfSubjectAccessReview.authorization.cluster.io "" is invalid: metadata: Invalid value: v1.ObjectMeta{Name:"x",'],
    ['SAR without a subject', `${AUTHZ}/subjectaccessreviews`, { spec: { resourceAttributes: getPods } }, 422, 'SubjectAccessReview.authorization.cluster.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified'],
    ['LSAR for another namespace', `${AUTHZ}/namespaces/default/localsubjectaccessreviews`, { spec: { user: 'u', resourceAttributes: { ...getPods, namespace: 'kube-system' } } }, 422, 'spec.resourceAttributes.namespace: Invalid value: "kube-system": must match metadata.namespace'],
    ['LSAR whose metadata names another namespace', `${AUTHZ}/namespaces/default/localsubjectaccessreviews`, { metadata: { namespace: 'kube-system' }, spec: { user: 'u', resourceAttributes: getPods } }, 400, 'the namespace of the provided object does not match the namespace sent on the request'],
    ['SSRR without a namespace', `${AUTHZ}/selfsubjectrulesreviews`, { spec: {} }, 400, 'no namespace on request'],
    ['TokenReview without a token', `${AUTHN}/tokenreviews`, { spec: {} }, 400, 'token is required for TokenReview in authentication'],
    ['a review of the wrong kind', `${AUTHZ}/selfsubjectaccessreviews`, { kind: 'SubjectAccessReview', spec: {} }, 400, 'the object provided is SubjectAccessReview'],
  ])('refuses %s', async (_name, path, body, code, message) => {
    const res = await t.admin.post(path, body);
    expect(res.status).toBe(code);
    expect(res.json<Obj>().message).toContain(message);
  });
});
