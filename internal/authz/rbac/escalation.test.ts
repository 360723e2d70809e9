// Escalation prevention and aggregation through a real in-process server (real TLS, client
// certificates for non-admin users, the real store, cache, admission chain and controllers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming, type NamingMode } from '../../naming/naming.js';
import type { ApiClient } from '../../testserver/api-client.js';
import { startTestServer, type TestServer } from '../../testserver/test-server.js';
import { onlyGcFieldsChange } from './escalation.js';

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('onlyGcFieldsChange (upstream IsOnlyMutatingGCFields)', () => {
  const old = { kind: 'Role', metadata: { name: 'r', resourceVersion: '5', finalizers: ['a'] }, rules: [{ verbs: ['get'] }] };
  it.each<[string, Record<string, unknown>, boolean]>([
    ['finalizers and owner references only', { ...old, metadata: { name: 'r', resourceVersion: '5', finalizers: [], ownerReferences: [{ uid: 'x' }] } }, true],
    ['rules changed', { ...old, rules: [{ verbs: ['get', 'list'] }] }, false],
    ['labels changed', { ...old, metadata: { ...old.metadata, labels: { a: 'b' } } }, false],
  ])('%s', (_n, obj, want) => {
    expect(onlyGcFieldsChange(obj, old)).toBe(want);
  });
});

describe.each<NamingMode>(['cluster', 'kubernetes'])('RBAC escalation prevention and aggregation (naming %s)', (mode) => {
  const g = createNaming(mode).group('rbac.authorization.k8s.io');
  const base = `/apis/${g}/v1`;
  const nsPath = (ns: string, resource: string) => `${base}/namespaces/${ns}/${resource}`;
  let t: TestServer;
  let alice: ApiClient;
  const role = (name: string, rules: unknown[], ns?: string) => ({ apiVersion: `${g}/v1`, kind: ns ? 'Role' : 'ClusterRole', metadata: { name, ...(ns ? { namespace: ns } : {}) }, rules });
  const binding = (name: string, ns: string, roleRef: { kind: string; name: string }, user = 'alice') => ({
    apiVersion: `${g}/v1`, kind: 'RoleBinding', metadata: { name, namespace: ns }, roleRef: { apiGroup: g, ...roleRef }, subjects: [{ kind: 'User', apiGroup: g, name: user }],
  });
  const ok = async (p: Promise<{ status: number; text(): string }>) => {
    const r = await p;
    if (r.status >= 300) throw new Error(`${r.status}: ${r.text()}`);
  };
  /** alice's create, retried while the index catches up with a grant just made. */
  const aliceCreates = (path: string, body: unknown, want: number, query = '') =>
    until(() => alice.post(`${path}${query}`, body), (r) => r.status === want, `${path} → ${want}`);
  const prefix = (resource: string, name: string) =>
    `${resource}.${g} "${name}" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n`;

  beforeAll(async () => {
    t = await startTestServer({ naming: mode });
    alice = await t.clientFor('alice', ['devs']);
    for (const ns of ['team', 'other']) {
      await ok(t.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
      // alice may manage roles and bindings in both namespaces...
      await ok(t.admin.post(nsPath(ns, 'roles'), role('rbac-manager', [{ verbs: ['create', 'update', 'get'], apiGroups: [g], resources: ['roles', 'rolebindings'] }], ns)));
      await ok(t.admin.post(nsPath(ns, 'rolebindings'), binding('rbac-manager', ns, { kind: 'Role', name: 'rbac-manager' })));
    }
    // ...but reads pods only in team.
    await ok(t.admin.post(nsPath('team', 'roles'), role('pod-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }], 'team')));
    await ok(t.admin.post(nsPath('team', 'rolebindings'), binding('pod-reader', 'team', { kind: 'Role', name: 'pod-reader' })));
    await ok(t.admin.post(`${base}/clusterroles`, role('big', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }])));
    await ok(t.admin.post(`${base}/clusterroles`, role('big-too', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }])));
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('lets a user grant what it holds, in the namespace where it holds it', async () => {
    const r = await aliceCreates(nsPath('team', 'roles'), role('same', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], 'team'), 200);
    expect(r.status).toBe(200);
    expect((await alice.post(nsPath('team', 'rolebindings'), binding('to-reader', 'team', { kind: 'Role', name: 'pod-reader' }, 'bob'))).status).toBe(200);
  });

  it('refuses a role with more verbs, a wildcard, or rules held only in another namespace, with upstream text', async () => {
    await aliceCreates(nsPath('team', 'roles'), role('probe', [], 'team'), 200);
    const more = await alice.post(nsPath('team', 'roles'), role('more', [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] }], 'team'));
    expect(more.status).toBe(403);
    const status = more.json<{ message: string; reason: string; details: Record<string, unknown> }>();
    expect(status.reason).toBe('Forbidden');
    expect(status.message).toBe(`${prefix('roles', 'more')}{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`);
    expect(status.details).toEqual({ name: 'more', group: g, kind: 'roles' });

    const wild = await alice.post(nsPath('team', 'roles'), role('wild', [{ verbs: ['get'], apiGroups: [''], resources: ['*'] }], 'team'));
    expect(wild.json<{ message: string }>().message).toBe(`${prefix('roles', 'wild')}{APIGroups:[""], Resources:["*"], Verbs:["get"]}`);

    const elsewhere = await alice.post(nsPath('other', 'roles'), role('reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }], 'other'));
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.json<{ message: string }>().message).toBe(`${prefix('roles', 'reader')}{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}`);

    // Dry runs are checked too; and an update that adds a verb is an escalation as well.
    expect((await alice.post(`${nsPath('team', 'roles')}?dryRun=All`, role('more', [{ verbs: ['delete'], apiGroups: [''], resources: ['pods'] }], 'team'))).status).toBe(403);
    const probe = (await alice.get(`${nsPath('team', 'roles')}/probe`)).json<Record<string, unknown>>();
    const upd = await alice.request('PUT', `${nsPath('team', 'roles')}/probe`, { body: { ...probe, rules: [{ verbs: ['watch'], apiGroups: [''], resources: ['pods'] }] } });
    expect(upd.status).toBe(403);
    expect(upd.json<{ message: string }>().message).toBe(`${prefix('roles', 'probe')}{APIGroups:[""], Resources:["pods"], Verbs:["watch"]}`);
  });

  it('refuses a binding to a role the user does not hold, and to a missing role', async () => {
    const big = await alice.post(nsPath('team', 'rolebindings'), binding('to-big', 'team', { kind: 'ClusterRole', name: 'big' }, 'bob'));
    expect(big.status).toBe(403);
    expect(big.json<{ message: string }>().message).toBe(`${prefix('rolebindings', 'to-big')}{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`);
    const missing = await alice.post(nsPath('team', 'rolebindings'), binding('to-nothing', 'team', { kind: 'Role', name: 'nope' }, 'bob'));
    expect(missing.status).toBe(403);
    expect(missing.json<{ message: string }>().message).toBe(`rolebindings.${g} "to-nothing" is forbidden: role.${g} "nope" not found`);
  });

  it('unblocks with escalate, and with bind limited by resourceNames', async () => {
    await ok(t.admin.post(nsPath('team', 'roles'), role('granter', [
      { verbs: ['escalate'], apiGroups: [g], resources: ['roles'] },
      { verbs: ['bind'], apiGroups: [g], resources: ['clusterroles'], resourceNames: ['big'] },
    ], 'team')));
    await ok(t.admin.post(nsPath('team', 'rolebindings'), binding('granter', 'team', { kind: 'Role', name: 'granter' })));
    await aliceCreates(nsPath('team', 'roles'), role('escalated', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], 'team'), 200);
    expect((await alice.post(nsPath('team', 'rolebindings'), binding('to-big', 'team', { kind: 'ClusterRole', name: 'big' }, 'bob'))).status).toBe(200);
    const other = await alice.post(nsPath('team', 'rolebindings'), binding('to-big-too', 'team', { kind: 'ClusterRole', name: 'big-too' }, 'bob'));
    expect(other.status).toBe(403);
    // bind in team does not reach another namespace.
    expect((await alice.post(nsPath('other', 'rolebindings'), binding('to-big', 'other', { kind: 'ClusterRole', name: 'big' }, 'bob'))).status).toBe(403);
  });

  it('aggregates labelled cluster roles into an aggregated one, following label changes', async () => {
    const label = `rbac.example.com/aggregate-to-agg-${mode}`;
    const rulesOf = async () => ((await t.admin.get(`${base}/clusterroles/agg-${mode}`)).json<{ rules?: unknown[] }>().rules ?? []);
    await ok(t.admin.post(`${base}/clusterroles`, { apiVersion: `${g}/v1`, kind: 'ClusterRole', metadata: { name: `agg-${mode}` }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label]: 'true' } }] } }));
    const a = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
    const b = { verbs: ['list'], apiGroups: ['apps'], resources: ['deployments'] };
    await ok(t.admin.post(`${base}/clusterroles`, { ...role(`zz-b-${mode}`, [b, a]), metadata: { name: `zz-b-${mode}`, labels: { [label]: 'true' } } }));
    await until(rulesOf, (r) => r.length === 2, 'aggregated rules of b');
    await ok(t.admin.post(`${base}/clusterroles`, { ...role(`aa-a-${mode}`, [a]), metadata: { name: `aa-a-${mode}`, labels: { [label]: 'true' } } }));
    // Sorted by role name, duplicates dropped: a's rule first, then b's other one.
    expect(await until(rulesOf, (r) => JSON.stringify(r) === JSON.stringify([a, b]), 'a before b')).toEqual([a, b]);
    const bObj = (await t.admin.get(`${base}/clusterroles/zz-b-${mode}`)).json<{ metadata: Record<string, unknown> }>();
    await ok(t.admin.request('PUT', `${base}/clusterroles/zz-b-${mode}`, { body: { ...bObj, metadata: { ...bObj.metadata, labels: {} } } }));
    expect(await until(rulesOf, (r) => r.length === 1, 'b removed')).toEqual([a]);
    // A second selector with matchExpressions: its matches come after the first selector's.
    const tier = `rbac.example.com/tier-${mode}`;
    const c = { verbs: ['watch'], apiGroups: ['batch'], resources: ['jobs'] };
    await ok(t.admin.post(`${base}/clusterroles`, { ...role(`00-c-${mode}`, [c]), metadata: { name: `00-c-${mode}`, labels: { [tier]: 'gold' } } }));
    const agg = (await t.admin.get(`${base}/clusterroles/agg-${mode}`)).json<Record<string, unknown>>();
    await ok(t.admin.request('PUT', `${base}/clusterroles/agg-${mode}`, {
      body: { ...agg, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label]: 'true' } }, { matchExpressions: [{ key: tier, operator: 'In', values: ['gold', 'silver'] }] }] } },
    }));
    expect(await until(rulesOf, (r) => r.length === 2, 'c added')).toEqual([a, c]);
  });

  it('needs full authority for an aggregationRule', async () => {
    await ok(t.admin.post(`${base}/clusterroles`, role(`cr-writer-${mode}`, [{ verbs: ['create'], apiGroups: [g], resources: ['clusterroles'] }])));
    await ok(t.admin.post(`${base}/clusterrolebindings`, {
      apiVersion: `${g}/v1`, kind: 'ClusterRoleBinding', metadata: { name: `cr-writer-${mode}` }, roleRef: { apiGroup: g, kind: 'ClusterRole', name: `cr-writer-${mode}` }, subjects: [{ kind: 'User', apiGroup: g, name: 'carol' }],
    }));
    const carol = await t.clientFor('carol');
    const r = await until(
      () => carol.post(`${base}/clusterroles`, { apiVersion: `${g}/v1`, kind: 'ClusterRole', metadata: { name: 'sneaky' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] } }),
      (x) => x.status !== 403 || x.text().includes('aggregationRule'),
      'carol may create cluster roles',
    );
    expect(r.status).toBe(403);
    expect(r.json<{ message: string }>().message).toBe(`clusterroles.${g} "sneaky" is forbidden: must have cluster-admin privileges to use the aggregationRule`);
  });
});
