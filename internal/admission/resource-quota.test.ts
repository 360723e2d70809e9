// ResourceQuota: a table of what objects count (quota-usage), then a real in-process server with
// the resource-quota controller: status.hard and status.used computed, creates charged and
// refused past the limit with upstream's words, usage given back for deleted objects, for a
// write that was charged but not stored, and never taken by a dry run; a scoped quota, and a
// finished pod given back; a claim's storage growth charged on update; "must specify" for
// compute quotas.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import { countName, quotaScopes, resourceList, scopesMatch, sourceOf, usageOf } from './quota-usage.js';
import type { AdmissionRequest } from './admission.js';
import { resourceQuotaPlugin } from './resource-quota.js';
import type { ResourceInfo } from '../schema/catalog.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- objects are free-form JSON

const core = (resource: string) => ({ group: '', resource });
const podWith = (containers: Obj[], extra: Obj = {}): Obj => ({ spec: { containers, ...extra } });

describe('quota usage', () => {
  it.each([
    ['a configmap', core('configmaps'), {}, { configmaps: '1', 'count/configmaps': '1' }],
    ['a deployment', { group: 'apps', resource: 'deployments' }, {}, { 'count/deployments.apps': '1' }],
    [
      'a pod with two containers and a larger init container',
      core('pods'),
      podWith(
        [
          { resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m' } } },
          { resources: { requests: { cpu: '150m' } } },
        ],
        { initContainers: [{ resources: { requests: { cpu: '1' } } }] },
      ),
      { pods: '1', 'count/pods': '1', cpu: '1', 'requests.cpu': '1', memory: '64Mi', 'requests.memory': '64Mi', 'limits.cpu': '200m' },
    ],
    ['a finished pod', core('pods'), { ...podWith([]), status: { phase: 'Succeeded' } }, {}],
    ['a NodePort service', core('services'), { spec: { type: 'NodePort', ports: [{ port: 1 }, { port: 2 }] } }, { services: '1', 'count/services': '1', 'services.nodeports': '2' }],
    ['a LoadBalancer service', core('services'), { spec: { type: 'LoadBalancer', ports: [{ port: 1 }] } }, { services: '1', 'count/services': '1', 'services.loadbalancers': '1', 'services.nodeports': '1' }],
    [
      'a claim of a class',
      core('persistentvolumeclaims'),
      { spec: { storageClassName: 'gold', resources: { requests: { storage: '5Gi' } } } },
      {
        persistentvolumeclaims: '1',
        'count/persistentvolumeclaims': '1',
        'requests.storage': '5Gi',
        'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '1',
        'gold.storageclass.storage.k8s.io/requests.storage': '5Gi',
      },
    ],
  ])('%s', (_what, r, obj, expected) => {
    expect(resourceList(usageOf(r, obj))).toEqual(expected);
  });

  it('maps quota names to the resource they count', () => {
    expect(sourceOf('requests.cpu')).toEqual(core('pods'));
    expect(sourceOf('services.nodeports')).toEqual(core('services'));
    expect(sourceOf('gold.storageclass.storage.k8s.io/requests.storage')).toEqual(core('persistentvolumeclaims'));
    expect(sourceOf('count/deployments.apps')).toEqual({ group: 'apps', resource: 'deployments' });
    expect(sourceOf('count/widgets.example.com')).toEqual({ group: 'example.com', resource: 'widgets' });
    expect(sourceOf('nonsense')).toBeUndefined();
    expect(countName({ group: 'example.com', resource: 'widgets' })).toBe('count/widgets.example.com');
  });

  it.each([
    ['Terminating', { scopes: ['Terminating'] }, podWith([], { activeDeadlineSeconds: 10 }), true],
    ['Terminating, pod without deadline', { scopes: ['Terminating'] }, podWith([]), false],
    ['NotTerminating', { scopes: ['NotTerminating'] }, podWith([]), true],
    ['BestEffort', { scopes: ['BestEffort'] }, podWith([{}]), true],
    ['NotBestEffort', { scopes: ['NotBestEffort'] }, podWith([{ resources: { limits: { cpu: '1' } } }]), true],
    ['PriorityClass In', { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } }, podWith([], { priorityClassName: 'high' }), true],
    ['PriorityClass NotIn', { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'NotIn', values: ['high'] }] } }, podWith([], { priorityClassName: 'high' }), false],
  ])('scope %s', (_what, spec, obj, matches) => {
    expect(scopesMatch(quotaScopes({ spec }), core('pods'), obj)).toBe(matches);
    // Scopes select pods only.
    expect(scopesMatch(quotaScopes({ spec }), core('configmaps'), {})).toBe(false);
  });
});

describe.each(['kubernetes', 'cluster'] as const)('ResourceQuota in a server (--naming=%s)', (naming) => {
  let t: TestServer;
  const ns = '/api/v1/namespaces/q';
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const quota = async (name: string) => (await t.admin.get(`${ns}/resourcequotas/${name}`)).json<Obj>();
  const until = async (what: string, probe: () => Promise<boolean>) => {
    for (let i = 0; i < 200; i++) {
      if (await probe()) return;
      await sleep(25);
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  /** Creates the quota and waits for the controller to have computed its status. */
  const writeQuota = async (name: string, spec: Obj) => {
    const r = await t.admin.post(`${ns}/resourcequotas`, { metadata: { name }, spec });
    expect(r.status, r.text()).toBeLessThan(300);
    await until(`${name}'s status`, async () => JSON.stringify((await quota(name)).status?.hard) === JSON.stringify(spec.hard));
  };
  const cm = (name: string, dryRun = false) => t.admin.post(`${ns}/configmaps${dryRun ? '?dryRun=All' : ''}`, { metadata: { name } });

  beforeAll(async () => {
    t = await startTestServer({ naming });
    expect((await t.admin.post('/api/v1/namespaces', { metadata: { name: 'q' } })).status).toBeLessThan(300);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('charges creates, refuses past the limit, gives back deletes, failed writes and never charges a dry run', async () => {
    await writeQuota('objects', { hard: { configmaps: '2', 'count/secrets': '5' } });
    expect((await quota('objects')).status.used).toEqual({ configmaps: '0', 'count/secrets': '0' });
    expect((await cm('a')).status).toBeLessThan(300);
    expect((await quota('objects')).status.used.configmaps).toBe('1');
    // A dry run is checked but not charged; a create of a taken name is charged, then given back.
    expect((await cm('dry', true)).status).toBeLessThan(300);
    expect((await cm('a')).status).toBe(409);
    await until('the failed write released', async () => (await quota('objects')).status.used.configmaps === '1');
    expect((await cm('b')).status).toBeLessThan(300);
    const refused = await cm('c');
    expect(refused.status).toBe(403);
    expect(refused.json<Obj>().message).toBe('configmaps "c" is forbidden: exceeded quota: objects, requested: configmaps=1, used: configmaps=2, limited: configmaps=2');
    expect(refused.json<Obj>().reason).toBe('Forbidden');
    // A dry run past the limit is refused as well.
    expect((await cm('c', true)).status).toBe(403);
    expect((await t.admin.delete(`${ns}/configmaps/a`)).status).toBe(200);
    await until('the delete reclaimed', async () => (await quota('objects')).status.used.configmaps === '1');
    expect((await cm('c')).status).toBeLessThan(300);
  });

  it('requires compute from every container for a compute quota and counts it', async () => {
    await writeQuota('compute', { hard: { 'requests.cpu': '1', 'limits.memory': '1Gi' } });
    const pod = (name: string, resources: Obj) => t.admin.post(`${ns}/pods`, { metadata: { name }, spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'i', resources }] } });
    // The namespace's default ServiceAccount comes from its controller.
    await until('the default account', async () => (await t.admin.get(`${ns}/serviceaccounts/default`)).status === 200);
    const bare = await pod('bare', {});
    expect(bare.status).toBe(403);
    expect(bare.json<Obj>().message).toBe('pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: c; requests.cpu for: c');
    expect((await pod('p1', { requests: { cpu: '600m' }, limits: { memory: '512Mi' } })).status).toBeLessThan(300);
    const over = await pod('p2', { requests: { cpu: '600m' }, limits: { memory: '512Mi' } });
    expect(over.status).toBe(403);
    expect(over.json<Obj>().message).toBe('pods "p2" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1');
  });

  it('selects pods by scope', async () => {
    await writeQuota('terminating', { hard: { pods: '1' }, scopes: ['Terminating'] });
    const pod = (name: string, deadline?: number) =>
      t.admin.post(`${ns}/pods`, { metadata: { name }, spec: { automountServiceAccountToken: false, activeDeadlineSeconds: deadline, containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '1m' }, limits: { memory: '1Mi' } } }] } });
    expect((await pod('t1', 30)).status).toBeLessThan(300);
    expect((await pod('t2', 30)).json<Obj>().message).toContain('exceeded quota: terminating, requested: pods=1, used: pods=1, limited: pods=1');
    // Not selected by the scope: only the compute quota counts it.
    expect((await pod('long')).status).toBeLessThan(300);
    // A pod that finished no longer counts: its status update makes the controller recount.
    const t1 = (await t.admin.get(`${ns}/pods/t1`)).json<Obj>();
    const finished = await t.admin.put(`${ns}/pods/t1/status`, { ...t1, status: { ...t1.status, phase: 'Succeeded' } });
    expect(finished.status, finished.text()).toBe(200);
    await until('the finished pod reclaimed', async () => (await quota('terminating')).status.used.pods === '0');
    expect((await pod('t2', 30)).status).toBeLessThan(300);
  });

  it('charges a claim growing its storage on update', async () => {
    await writeQuota('storage', { hard: { 'requests.storage': '10Gi' } });
    const claims = `${ns}/persistentvolumeclaims`;
    const created = await t.admin.post(claims, { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '4Gi' } } } });
    expect(created.status, created.text()).toBeLessThan(300);
    expect((await quota('storage')).status.used['requests.storage']).toBe('4Gi');
    const claim = created.json<Obj>();
    claim.spec.resources.requests.storage = '20Gi';
    const grown = await t.admin.put(`${claims}/data`, claim);
    expect(grown.status).toBe(403);
    expect(grown.json<Obj>().message).toBe('persistentvolumeclaims "data" is forbidden: exceeded quota: storage, requested: requests.storage=16Gi, used: requests.storage=4Gi, limited: requests.storage=10Gi');
  });
});

describe('quotas a replica has not applied yet', () => {
  // A quota written through another replica: this replica's cache has none in the namespace,
  // the consistent read (listLive) has it, with its status computed.
  const quota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'no-maps', namespace: 'ns', resourceVersion: '7', uid: 'u' }, spec: { hard: { configmaps: '0' } }, status: { hard: { configmaps: '0' }, used: { configmaps: '0' } } };
  const request = (): AdmissionRequest => ({
    operation: 'CREATE',
    resource: { group: '', version: 'v1', resource: 'configmaps', namespaced: true } as ResourceInfo,
    subresource: '',
    namespace: 'ns',
    name: 'm',
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm', namespace: 'ns' } },
    oldObject: undefined,
    user: { name: 'u', groups: [] },
    dryRun: false,
  });
  const store = (live: Obj[] | undefined) => ({
    list: () => [],
    get: async () => quota,
    updateStatus: async () => undefined,
    ...(live ? { listLive: async () => live } : {}),
  });

  it('are looked up live when the cache has none, and enforced', async () => {
    await expect(resourceQuotaPlugin(store([quota])).validate!(request())).rejects.toThrow(/exceeded quota: no-maps/);
  });
  it('without a live lookup (a single server, whose cache is the store) the cache decides', async () => {
    await expect(resourceQuotaPlugin(store(undefined)).validate!(request())).resolves.toBeUndefined();
    await expect(resourceQuotaPlugin(store([])).validate!(request())).resolves.toBeUndefined();
  });
});
