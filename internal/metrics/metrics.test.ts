// The metrics kube-apiserver dashboards read, from a real server's /metrics after real requests:
// names, types, label sets and stability as upstream 1.32 has them, and what requests, watches,
// deprecated API versions and store writes do to them. Hidden metrics come back with the real
// --show-hidden-metrics-for-version flag, which refuses any value but the previous minor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlags, type ServerConfig } from '../config/flags.js';
import { SERVER_VERSION } from '../server/server.js';
import { parseExposition, valueOf, type Exposition } from '../testserver/prometheus-text.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

const CRDS = '/apis/apiextensions.cluster.io/v1/customresourcedefinitions';
const NS = 'metrics-test';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;

async function scrape(t: TestServer): Promise<Exposition> {
  const r = await t.admin.get('/metrics');
  expect(r.status).toBe(200);
  return parseExposition(r.text());
}

async function waitFor(what: string, cond: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`${what}: not in time`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A server started from command-line flags, as bin/clusterd parses them. */
async function serverFromFlags(flags: string[]): Promise<TestServer> {
  const config = parseFlags(['--storage=memory', ...flags]);
  if (config === 'help') throw new Error('unexpected help');
  // The flags' default port (6443) and address would collide with a server already running here
  // (make run); the test server binds an ephemeral loopback port instead.
  const { dataDir: _ignored, securePort: _port, bindAddress: _address, ...rest } = config;
  return startTestServer(rest as Partial<ServerConfig>);
}

const REQUEST = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'];

// name, type, labels, stability: upstream kube-apiserver 1.32's definitions.
const UPSTREAM: Array<[string, string, string[], string]> = [
  ['apiserver_request_total', 'counter', [...REQUEST, 'code'], 'STABLE'],
  ['apiserver_request_duration_seconds', 'histogram', REQUEST, 'STABLE'],
  ['apiserver_current_inflight_requests', 'gauge', ['request_kind'], 'STABLE'],
  ['apiserver_longrunning_requests', 'gauge', REQUEST, 'STABLE'],
  ['apiserver_requested_deprecated_apis', 'gauge', ['group', 'version', 'resource', 'subresource', 'removed_release'], 'STABLE'],
  ['apiserver_watch_events_total', 'counter', ['group', 'version', 'kind'], 'ALPHA'],
  ['apiserver_storage_objects', 'gauge', ['resource'], 'STABLE'],
  ['etcd_request_duration_seconds', 'histogram', ['operation', 'type'], 'ALPHA'],
];

const deprecatedCrd = {
  apiVersion: 'apiextensions.cluster.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gizmos.metrics.example.com' },
  spec: {
    group: 'metrics.example.com',
    scope: 'Namespaced',
    names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' },
    versions: [
      { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
      { name: 'v1beta1', served: true, storage: false, deprecated: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
      {
        name: 'v1alpha1',
        served: true,
        storage: false,
        deprecated: true,
        deprecationWarning: 'gizmos v1alpha1 goes away soon',
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

describe('metrics of a running server', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    expect((await t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status).toBe(200);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it.each([
    ['list', 'GET', CMS, undefined, undefined, { verb: 'LIST', scope: 'namespace', dry_run: '' }, 200],
    ['get', 'GET', `/api/v1/namespaces/${NS}`, undefined, undefined, { verb: 'GET', scope: 'resource', resource: 'namespaces', dry_run: '' }, 200],
    ['create', 'POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'verbs-a' } }, undefined, { verb: 'POST', scope: 'resource', dry_run: '' }, 200],
    ['dry-run create', 'POST', `${CMS}?dryRun=All`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'verbs-dry' } }, undefined, { verb: 'POST', scope: 'resource', dry_run: 'All' }, 200],
    ['update', 'PUT', `${CMS}/verbs-a`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'verbs-a' }, data: { a: '1' } }, undefined, { verb: 'PUT', scope: 'resource', dry_run: '' }, 200],
    ['merge patch', 'PATCH', `${CMS}/verbs-a`, { data: { b: '2' } }, 'application/merge-patch+json', { verb: 'PATCH', scope: 'resource', dry_run: '' }, 200],
    ['apply', 'PATCH', `${CMS}/verbs-b?fieldManager=metrics-test`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'verbs-b' } }, 'application/apply-patch+yaml', { verb: 'APPLY', scope: 'resource', dry_run: '' }, 201],
    ['delete', 'DELETE', `${CMS}/verbs-b`, undefined, undefined, { verb: 'DELETE', scope: 'resource', dry_run: '' }, 200],
    ['delete collection', 'DELETE', `${CMS}?labelSelector=none%3Dhere`, undefined, undefined, { verb: 'DELETECOLLECTION', scope: 'namespace', dry_run: '' }, 200],
  ] as const)('a %s counts once under upstream\'s verb, scope and dry_run', async (_what, method, path, body, contentType, expected, code) => {
    const labels = { group: '', version: 'v1', resource: 'configmaps', subresource: '', component: 'apiserver', ...expected };
    const before = await scrape(t);
    const r = await t.admin.request(method, path, { ...(body !== undefined ? { body } : {}), ...(contentType ? { headers: { 'content-type': contentType } } : {}) });
    expect(r.status, r.text()).toBe(code);
    const after = await scrape(t);
    expect(valueOf(after, 'apiserver_request_total', { ...labels, code: String(code) }) - valueOf(before, 'apiserver_request_total', { ...labels, code: String(code) })).toBe(1);
    expect(valueOf(after, 'apiserver_request_duration_seconds_count', labels) - valueOf(before, 'apiserver_request_duration_seconds_count', labels)).toBe(1);
  });

  it('health checks count under their path with an empty component, as upstream', async () => {
    const labels = { verb: 'GET', dry_run: '', group: '', version: '', resource: '', subresource: '/livez', scope: '', component: '', code: '200' };
    const before = valueOf(await scrape(t), 'apiserver_request_total', labels);
    expect((await t.admin.get('/livez')).status).toBe(200);
    expect(valueOf(await scrape(t), 'apiserver_request_total', labels) - before).toBe(1);
  });

  it('the scrape itself is a read in flight', async () => {
    const e = await scrape(t);
    expect(valueOf(e, 'apiserver_current_inflight_requests', { request_kind: 'readOnly' })).toBeGreaterThanOrEqual(1);
    expect(e.samples.some((s) => s.name === 'apiserver_current_inflight_requests' && s.labels.request_kind === 'mutating')).toBe(true);
  });

  it('an open watch is one long-running request until it closes, and its events are counted', async () => {
    const longrunning = { verb: 'WATCH', dry_run: '', group: '', version: 'v1', resource: 'configmaps', subresource: '', scope: 'namespace', component: 'apiserver' };
    const events = { group: '', version: 'v1', kind: 'ConfigMap' };
    const before = await scrape(t);
    expect(valueOf(before, 'apiserver_longrunning_requests', longrunning)).toBe(0);
    const rv = (await t.admin.get(CMS)).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const lines: string[] = [];
    const w = t.admin.watch(`${CMS}?watch=true&resourceVersion=${rv}`, (l) => lines.push(l));
    await waitFor('watch registered', async () => valueOf(await scrape(t), 'apiserver_longrunning_requests', longrunning) === 1);
    for (const n of ['w1', 'w2', 'w3']) expect((await t.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n } })).status).toBe(200);
    await waitFor('three events', async () => lines.length >= 3);
    const during = await scrape(t);
    expect(valueOf(during, 'apiserver_longrunning_requests', longrunning)).toBe(1);
    expect(valueOf(during, 'apiserver_watch_events_total', events) - valueOf(before, 'apiserver_watch_events_total', events)).toBe(3);
    // The watch counts as a request when it starts (code 200), not when it ends.
    expect(valueOf(during, 'apiserver_request_total', { ...longrunning, code: '200' }) - valueOf(before, 'apiserver_request_total', { ...longrunning, code: '200' })).toBe(1);
    w.stop();
    await w.done;
    await waitFor('watch ended', async () => valueOf(await scrape(t), 'apiserver_longrunning_requests', longrunning) === 0);
  });

  it('a store write is observed under its operation and resource', async () => {
    const create = { operation: 'create', type: 'configmaps' };
    const update = { operation: 'update', type: 'configmaps' };
    const del = { operation: 'delete', type: 'configmaps' };
    const before = await scrape(t);
    expect((await t.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stored' } })).status).toBe(200);
    expect((await t.admin.put(`${CMS}/stored`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stored' }, data: { x: '1' } })).status).toBe(200);
    expect((await t.admin.delete(`${CMS}/stored`)).status).toBe(200);
    const after = await scrape(t);
    for (const labels of [create, update, del]) {
      expect(valueOf(after, 'etcd_request_duration_seconds_count', labels) - valueOf(before, 'etcd_request_duration_seconds_count', labels), labels.operation).toBe(1);
      expect(valueOf(after, 'etcd_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(valueOf(after, 'etcd_request_duration_seconds_count', labels));
      expect(valueOf(after, 'etcd_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
    }
    expect(valueOf(after, 'apiserver_storage_objects', { resource: 'namespaces' })).toBeGreaterThanOrEqual(5);
  });

  it('a request to a deprecated version warns and sets apiserver_requested_deprecated_apis', async () => {
    expect((await t.admin.post(CRDS, deprecatedCrd)).status).toBe(200);
    const path = (v: string) => `/apis/metrics.example.com/${v}/namespaces/${NS}/gizmos`;
    await waitFor('CRD served', async () => (await t.admin.get(path('v1beta1'))).status === 200);
    const gauge = (version: string) => ({ group: 'metrics.example.com', version, resource: 'gizmos', subresource: '', removed_release: '' });

    const beta = await t.admin.get(path('v1beta1'));
    expect(beta.headers.warning).toBe('299 - "metrics.example.com/v1beta1 Gizmo is deprecated; use metrics.example.com/v1 Gizmo"');
    const alpha = await t.admin.get(path('v1alpha1'));
    expect(alpha.headers.warning).toBe('299 - "gizmos v1alpha1 goes away soon"');
    const v1 = await t.admin.get(path('v1'));
    expect(v1.headers.warning).toBeUndefined();

    const e = await scrape(t);
    expect(valueOf(e, 'apiserver_requested_deprecated_apis', gauge('v1beta1'))).toBe(1);
    expect(valueOf(e, 'apiserver_requested_deprecated_apis', gauge('v1alpha1'))).toBe(1);
    expect(e.samples.some((s) => s.name === 'apiserver_requested_deprecated_apis' && s.labels.version === 'v1')).toBe(false);
  });

  it.each(UPSTREAM)('%s is a %s with labels as upstream', async (name, type, labels, stability) => {
    // After the tests above (a watch, writes, a deprecated version): every series exists.
    await t.admin.get(CMS);
    await t.admin.post(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `shape-${name}` } });
    const e = await scrape(t);
    expect(e.types.get(name)).toBe(type);
    expect(e.help.get(name)).toMatch(new RegExp(`^\\[${stability}\\] \\S`));
    const series = e.samples.filter((s) => (type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name]).includes(s.name));
    expect(series.length, `${name} has samples`).toBeGreaterThan(0);
    for (const s of series) {
      const own = Object.keys(s.labels).filter((l) => !(s.name.endsWith('_bucket') && l === 'le'));
      expect(own.sort(), `${s.name} ${JSON.stringify(s.labels)}`).toEqual([...labels].sort());
    }
  });

  it('a deprecated metric is hidden without --show-hidden-metrics-for-version', async () => {
    const e = await scrape(t);
    expect(e.types.has('apiserver_registered_watchers')).toBe(false);
  });
});

describe('--show-hidden-metrics-for-version', () => {
  const previous = `${SERVER_VERSION.major}.${Number(SERVER_VERSION.minor) - 1}`;

  it('with the previous minor release shows the hidden metrics again, marked deprecated', async () => {
    const t = await serverFromFlags([`--show-hidden-metrics-for-version=${previous}`]);
    try {
      const lines: string[] = [];
      const rv = (await t.admin.get('/api/v1/namespaces/default/configmaps')).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
      const w = t.admin.watch(`/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}`, (l) => lines.push(l));
      const labels = { group: '', version: 'v1', kind: 'ConfigMap' };
      await waitFor('watcher registered', async () => valueOf(await scrape(t), 'apiserver_registered_watchers', labels) === 1);
      const e = await scrape(t);
      expect(e.types.get('apiserver_registered_watchers')).toBe('gauge');
      expect(e.help.get('apiserver_registered_watchers')).toMatch(/^\[ALPHA\] \(Deprecated from 1\.23\) /);
      w.stop();
      await w.done;
      await waitFor('watcher gone', async () => valueOf(await scrape(t), 'apiserver_registered_watchers', labels) === 0);
    } finally {
      await t.stop();
    }
  });

  it.each(['1.23', `${SERVER_VERSION.major}.${SERVER_VERSION.minor}`, `${SERVER_VERSION.major}.${Number(SERVER_VERSION.minor) - 2}`])('refuses %s at start', async (v) => {
    await expect(serverFromFlags([`--show-hidden-metrics-for-version=${v}`])).rejects.toThrow(
      `--show-hidden-metrics-for-version must be omitted or have the value '${previous}'. Only the previous minor version is meaningful, other values are not allowed.`,
    );
  });

  it.each(['1', 'v1.34', '1.34.0', 'latest'])('refuses %s as a flag value', (v) => {
    expect(() => parseFlags([`--show-hidden-metrics-for-version=${v}`])).toThrow(/want major\.minor/);
  });
});
