// The aggregation layer against a real extension API server (HTTPS, its own CA) and a real
// in-process API server, under both namings: local APIServices, proxying with the front-proxy
// certificate and identity headers, watches streaming through, availability, merged discovery
// and OpenAPI.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming, NAMING_MODES } from '../naming/naming.js';
import { createCertificateAuthority, issueCertificate } from '../pki/certificates.js';
import { pkiPaths } from '../pki/pki.js';
import { startExtensionApiServer, type ExtensionApiServer } from '../testserver/extension-apiserver.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

type Json = Record<string, unknown>;

/** An HTTP/1.1 upgrade request as the admin: the socket on a 101, or the status of another answer. */
function upgrade(ts: TestServer, path: string, protocol: string): Promise<{ socket: Duplex } | { status: number; body: string }> {
  const p = pkiPaths(ts.dataDir);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${ts.server.url}${path}`, {
      ca: readFileSync(p.caCert),
      cert: readFileSync(p.adminCert),
      key: readFileSync(p.adminKey),
      headers: { connection: 'Upgrade', upgrade: protocol },
      agent: false,
    });
    req.on('upgrade', (_res, socket) => resolve({ socket }));
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(NAMING_MODES)('aggregation layer (--naming=%s)', (mode) => {
  const naming = createNaming(mode);
  const reg = `/apis/${naming.group('apiregistration.k8s.io')}/v1/apiservices`;
  const group = 'widgets.example.com';
  const gv = `${group}/v1`;
  let ts: TestServer;
  let ext: ExtensionApiServer;
  let dir: string;

  const condition = async (name: string): Promise<Json | undefined> => {
    const r = await ts.admin.get(`${reg}/${name}`);
    if (r.status !== 200) return undefined;
    return ((r.json<{ status?: { conditions?: Json[] } }>().status?.conditions ?? []) as Json[]).find((c) => c.type === 'Available');
  };
  const availableWith = (name: string, status: string, reason: string) =>
    until(`${name} ${status}/${reason}`, async () => {
      const c = await condition(name);
      return c && c.status === status && c.reason === reason ? c : undefined;
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-aggr-'));
    const frontProxyCa = await createCertificateAuthority('front-proxy-ca');
    const client = await issueCertificate(frontProxyCa, { commonName: 'front-proxy-client', usage: 'client' });
    writeFileSync(join(dir, 'proxy.crt'), client.certPem);
    writeFileSync(join(dir, 'proxy.key'), client.keyPem);
    ext = await startExtensionApiServer({ group, version: 'v1', dnsNames: ['ext.default.svc'] });
    ts = await startTestServer({ naming: mode, proxyClient: { certFile: join(dir, 'proxy.crt'), keyFile: join(dir, 'proxy.key') } });
    const svc = await ts.admin.post('/api/v1/namespaces/default/services', { metadata: { name: 'ext' }, spec: { ports: [{ port: 443, targetPort: ext.server.port }] } });
    expect([200, 201], svc.text()).toContain(svc.status);
    const endpoints = { metadata: { name: 'ext' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: ext.server.port }] }] };
    expect([200, 201]).toContain((await ts.admin.post('/api/v1/namespaces/default/endpoints', endpoints)).status);
  });
  afterAll(async () => {
    await ts?.stop();
    await ext?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a local APIService per built-in group/version, available as Local', async () => {
    const apps = await availableWith('v1.apps', 'True', 'Local');
    expect(apps.message).toBe('Local APIServices are always available');
    const core = (await ts.admin.get(`${reg}/v1.`)).json<{ metadata: { labels: Json }; spec: Json }>();
    expect(core.metadata.labels[`${naming.labelPrefix('kube-aggregator')}automanaged`]).toBe('onstart');
    expect(core.spec).toEqual({ group: '', version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 });
    const names = (await ts.admin.get(reg)).json<{ items: Array<{ metadata: { name: string } }> }>().items.map((i) => i.metadata.name);
    expect(names).toContain(`v1.${naming.group('rbac.authorization.k8s.io')}`);
    expect(names).toContain('v2.autoscaling');
  });

  it('follows custom resource groups with continuously managed local APIServices', async () => {
    const crds = `/apis/${naming.group('apiextensions.k8s.io')}/v1/customresourcedefinitions`;
    const crd = {
      metadata: { name: 'gadgets.gadgets.example.org' },
      spec: {
        group: 'gadgets.example.org',
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    expect([200, 201]).toContain((await ts.admin.post(crds, crd)).status);
    await availableWith('v1.gadgets.example.org', 'True', 'Local');
    const api = (await ts.admin.get(`${reg}/v1.gadgets.example.org`)).json<{ metadata: { labels: Json }; spec: Json }>();
    expect(api.metadata.labels[`${naming.labelPrefix('kube-aggregator')}automanaged`]).toBe('true');
    expect(api.spec).toEqual({ group: 'gadgets.example.org', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100 });
    expect((await ts.admin.delete(`${crds}/gadgets.gadgets.example.org`)).status).toBe(200);
    await until('the APIService to go with its group', async () => ((await ts.admin.get(`${reg}/v1.gadgets.example.org`)).status === 404 ? true : undefined));
  });

  it('refuses an invalid APIService with upstream field errors', async () => {
    const bad = await ts.admin.post(reg, { metadata: { name: 'v1.wrong.example.com' }, spec: { group, version: 'v1', groupPriorityMinimum: 0, versionPriority: 2000, caBundle: ext.server.caBundle } });
    expect(bad.status).toBe(422);
    const message = bad.json<{ message: string }>().message;
    expect(message).toContain(`metadata.name: Invalid value: "v1.wrong.example.com": must be \`spec.version+"."+spec.group\`: "v1.${group}"`);
    expect(message).toContain('spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000');
    expect(message).toContain('spec.versionPriority: Invalid value: 2000: must be positive and less than 1000');
    expect(message).toContain('spec.caBundle: Invalid value: ');
    expect(message).toContain('local APIServices may not have a caBundle');
  });

  it('proxies to the extension with the front-proxy certificate and identity headers', async () => {
    const created = await ts.admin.post(reg, {
      metadata: { name: `v1.${group}` },
      spec: { group, version: 'v1', service: { namespace: 'default', name: 'ext', port: 443 }, caBundle: ext.server.caBundle, groupPriorityMinimum: 1000, versionPriority: 15 },
    });
    expect([200, 201], created.text()).toContain(created.status);
    await availableWith(`v1.${group}`, 'True', 'Passed');
    ext.put('default', 'w1', { size: 3 });
    const user = await ts.clientFor('alice', ['team-a', 'system:masters']);
    const list = await user.get(`/apis/${gv}/namespaces/default/widgets`, { authorization: 'Bearer not-forwarded' });
    expect(list.status).toBe(200);
    expect(list.json<{ items: Array<{ metadata: { name: string } }> }>().items.map((i) => i.metadata.name)).toEqual(['w1']);
    const seen = ext.received.filter((r) => r.path.startsWith(`/apis/${gv}/namespaces/default/widgets`)).at(-1)!;
    expect(seen.clientCn).toBe('front-proxy-client');
    expect(seen.headers['x-remote-user']).toBe('alice');
    expect(seen.headers['x-remote-group']).toBe('team-a, system:masters, system:authenticated');
    expect(seen.headers.authorization).toBeUndefined();
    const one = await user.get(`/apis/${gv}/namespaces/default/widgets/w1`);
    expect(one.json<{ spec: Json }>().spec).toEqual({ size: 3 });
    const missing = await user.get(`/apis/${gv}/namespaces/default/widgets/nope`);
    expect(missing.status).toBe(404);
  });

  it('authorizes before forwarding: a user without permission never reaches the extension', async () => {
    const before = ext.received.length;
    const bob = await ts.clientFor('bob');
    const r = await bob.get(`/apis/${gv}/namespaces/default/widgets`);
    expect(r.status).toBe(403);
    expect(r.json<{ message: string }>().message).toContain(`widgets.${group} is forbidden: User "bob" cannot list resource "widgets" in API group "${group}"`);
    expect(ext.received.length).toBe(before);
  });

  it('streams a watch through as events happen', async () => {
    const events: Json[] = [];
    const w = ts.admin.watch(`/apis/${gv}/namespaces/default/widgets?watch=true`, (line) => events.push(JSON.parse(line) as Json));
    await until('the watch to reach the extension', async () => (ext.watchers() > 0 ? true : undefined));
    ext.put('default', 'w2');
    await until('the ADDED event', async () => (events.length > 0 ? true : undefined));
    expect(events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'w2' } } });
    ext.put('default', 'w2', { size: 5 });
    await until('the MODIFIED event', async () => (events.length > 1 ? true : undefined));
    expect(events[1]).toMatchObject({ type: 'MODIFIED', object: { spec: { size: 5 } } });
    w.stop();
    await until('the extension to see the watch end', async () => (ext.watchers() === 0 ? true : undefined));
  });

  it('joins an upgraded connection (HTTP/1.1 Upgrade) to the extension', async () => {
    const r = await upgrade(ts, `/apis/${gv}/namespaces/default/widgets/w1/attach`, 'test-echo');
    expect('socket' in r).toBe(true);
    const socket = (r as { socket: Duplex }).socket;
    const echoed = new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString('utf8'))));
    socket.write('ping');
    expect(await echoed).toBe('echo:ping');
    socket.destroy();
    const seen = ext.received.filter((x) => x.path.endsWith('/widgets/w1/attach')).at(-1)!;
    expect(seen.headers.upgrade).toBe('test-echo');
    expect(seen.headers['x-remote-user']).toBe('admin');
    expect(seen.clientCn).toBe('front-proxy-client');
    // An upgrade request for a path served here is answered as any request is.
    const local = await upgrade(ts, '/api/v1/namespaces/default', 'websocket');
    expect(local).toMatchObject({ status: 200 });
    expect(JSON.parse((local as { body: string }).body)).toMatchObject({ kind: 'Namespace', metadata: { name: 'default' } });
  });

  it('merges the extension into discovery and OpenAPI', async () => {
    const early = { metadata: { name: 'v1.early.example.com' }, spec: { group: 'early.example.com', version: 'v1', service: { namespace: 'default', name: 'ext' }, insecureSkipTLSVerify: true, groupPriorityMinimum: 17900, versionPriority: 1 } };
    expect([200, 201]).toContain((await ts.admin.post(reg, early)).status);
    const groups = (await ts.admin.get('/apis')).json<{ groups: Array<{ name: string; preferredVersion: Json }> }>().groups;
    expect(groups.find((g) => g.name === group)?.preferredVersion).toEqual({ groupVersion: gv, version: 'v1' });
    // Upstream's order: groupPriorityMinimum, highest first (an unavailable APIService listed too).
    const order = groups.map((g) => g.name);
    expect(order.slice(0, 3)).toEqual([naming.group('apiregistration.k8s.io'), 'early.example.com', 'apps']);
    expect(order.indexOf(group)).toBeGreaterThan(order.indexOf(naming.group('flowcontrol.apiserver.k8s.io')));
    expect((await ts.admin.delete(`${reg}/v1.early.example.com`)).status).toBe(200);
    expect((await ts.admin.get(`/apis/${group}`)).json()).toMatchObject({ kind: 'APIGroup', name: group, versions: [{ groupVersion: gv, version: 'v1' }] });
    expect((await ts.admin.get(`/apis/${gv}`)).json()).toMatchObject({ kind: 'APIResourceList', groupVersion: gv });
    const accept = `application/json;g=apidiscovery.${naming.groupDomain};v=v2;as=APIGroupDiscoveryList`;
    const item = await until('aggregated discovery to carry the extension', async () => {
      const items = (await ts.admin.get('/apis', { accept })).json<{ items: Array<{ metadata: { name: string }; versions: Json[] }> }>().items;
      return items.find((i) => i.metadata.name === group);
    });
    expect(item.versions).toEqual([
      {
        version: 'v1',
        resources: [{ resource: 'widgets', responseKind: { group, version: 'v1', kind: 'Widget' }, scope: 'Namespaced', singularResource: 'widget', verbs: ['get', 'list', 'watch'], shortNames: ['wd'], categories: ['all'] }],
        freshness: 'Current',
      },
    ]);
    const v2 = (await ts.admin.get('/openapi/v2')).json<{ paths: Json; definitions: Json }>();
    expect(Object.keys(v2.paths)).toContain(`/apis/${gv}/namespaces/{namespace}/widgets`);
    expect(v2.definitions['com.example.Widget']).toBeDefined();
    expect(Object.keys(v2.paths)).toContain('/api/v1/namespaces');
    const index = (await ts.admin.get('/openapi/v3')).json<{ paths: Record<string, { serverRelativeURL: string }> }>().paths;
    const url = index[`apis/${gv}`]!.serverRelativeURL;
    const v3 = await ts.admin.get(url);
    expect(v3.status).toBe(200);
    expect(v3.json<{ components: { schemas: Json } }>().components.schemas['com.example.Widget']).toBeDefined();
  });

  it('marks the APIService unavailable when its endpoints go, and answers 503', async () => {
    expect((await ts.admin.delete('/api/v1/namespaces/default/endpoints/ext')).status).toBe(200);
    const c = await availableWith(`v1.${group}`, 'False', 'EndpointsNotFound');
    expect(c.message).toBe('cannot find endpoints for service/ext in "default"');
    const r = await ts.admin.get(`/apis/${gv}/namespaces/default/widgets`);
    expect(r.status).toBe(503);
    expect(r.json()).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'ServiceUnavailable', message: 'service unavailable', code: 503 });
    // Legacy discovery still lists the group (upstream does); aggregated discovery marks it stale.
    expect((await ts.admin.get('/apis')).json<{ groups: Array<{ name: string }> }>().groups.map((g) => g.name)).toContain(group);
  });
});
