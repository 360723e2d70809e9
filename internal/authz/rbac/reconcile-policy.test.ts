import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming } from '../../naming/naming.js';
import { startTestServer, type TestServer } from '../../testserver/test-server.js';
import { bootstrapPolicy, policyKeys, type PolicyRule } from './bootstrap-policy.js';
import { covers, reconcileBootstrapPolicy, reconcileObject } from './reconcile-policy.js';
import { STARTUP_WRITES_IN_FLIGHT } from '../../async/bounded.js';
import { silentLogger } from '../../log/logger.js';
import type { RegistrySet } from '../../registry/registry-set.js';
import { SYSTEM_USER } from '../../server/bootstrap.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- loosely typed API objects in assertions

describe('reconcileObject', () => {
  const naming = createNaming('cluster');
  const keys = policyKeys(naming);
  const policy = bootstrapPolicy(naming);
  const discovery = policy.clusterRoles.find((r) => r.metadata.name === 'system:discovery')!;
  const admin = policy.clusterRoles.find((r) => r.metadata.name === 'admin')!;
  const basic = policy.clusterRoleBindings.find((b) => b.metadata.name === 'system:basic-user')!;

  it('leaves an object with autoupdate "false" alone, whatever it lacks', () => {
    const existing = { metadata: { name: 'system:discovery', annotations: { [keys.autoupdate]: 'false' } }, rules: [] };
    expect(reconcileObject(existing, discovery, keys.autoupdate)).toEqual({ action: 'skip' });
  });

  it('adds missing rules, labels and annotations, keeps extra rules and stored label values', () => {
    const extra: PolicyRule = { verbs: ['get'], nonResourceURLs: ['/custom'] };
    const existing = { metadata: { name: 'system:discovery', labels: { [keys.bootstrapping]: 'mine' } }, rules: [extra] };
    const d = reconcileObject(existing, discovery, keys.autoupdate);
    expect(d.action).toBe('update');
    const out = (d as { object: Obj }).object;
    expect(out.rules).toEqual([extra, ...discovery.rules]);
    expect(out.metadata.labels[keys.bootstrapping]).toBe('mine');
    expect(out.metadata.annotations[keys.autoupdate]).toBe('true');
  });

  it('does nothing when the stored rules already cover the policy (a wildcard role)', () => {
    const existing = { metadata: { name: 'system:discovery', labels: discovery.metadata.labels, annotations: discovery.metadata.annotations }, rules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] };
    expect(reconcileObject(existing, discovery, keys.autoupdate)).toEqual({ action: 'none' });
  });

  it('keeps an aggregated role rules (the controller owns them) and adds missing selectors', () => {
    const aggregated = [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }];
    const own = { matchLabels: { team: 'a' } };
    const existing = { metadata: { name: 'admin', labels: admin.metadata.labels, annotations: admin.metadata.annotations }, aggregationRule: { clusterRoleSelectors: [own] }, rules: aggregated };
    const out = (reconcileObject(existing, admin, keys.autoupdate) as { object: Obj }).object;
    expect(out.rules).toEqual(aggregated);
    expect(out.aggregationRule.clusterRoleSelectors).toEqual([own, ...admin.aggregationRule!.clusterRoleSelectors]);
  });

  it('adds missing subjects and recreates a binding whose roleRef differs', () => {
    const mine = { kind: 'User', apiGroup: keys.rbacGroup, name: 'alice' };
    const base = { metadata: { name: basic.metadata.name, labels: basic.metadata.labels, annotations: basic.metadata.annotations, resourceVersion: '5' }, roleRef: basic.roleRef };
    const d = reconcileObject({ ...base, subjects: [mine] }, basic, keys.autoupdate) as { action: string; object: Obj };
    expect(d.action).toBe('update');
    expect(d.object.subjects).toEqual([mine, ...basic.subjects]);
    const moved = reconcileObject({ ...base, roleRef: { ...basic.roleRef, name: 'view' }, subjects: [mine] }, basic, keys.autoupdate) as { action: string; object: Obj };
    expect(moved.action).toBe('recreate');
    expect(moved.object.roleRef).toEqual(basic.roleRef);
    expect(moved.object.metadata.resourceVersion).toBeUndefined();
    expect(moved.object.subjects).toEqual([mine, ...basic.subjects]);
  });

  it('covers: wildcards, resource names, */scale and URL prefixes', () => {
    expect(covers([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] })).toBe(true);
    expect(covers([{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }], { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['x'] })).toBe(true);
    expect(covers([{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['x'] }], { verbs: ['get'], apiGroups: [''], resources: ['configmaps'] })).toBe(false);
    expect(covers([{ verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }], { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale'] })).toBe(true);
    expect(covers([{ verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }], { verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] })).toBe(false);
    expect(covers([{ verbs: ['get'], nonResourceURLs: ['/api/*'] }], { verbs: ['get'], nonResourceURLs: ['/api/v1'] })).toBe(true);
    expect(covers([{ verbs: ['get'], nonResourceURLs: ['/api'] }], { verbs: ['get', 'post'], nonResourceURLs: ['/api'] })).toBe(false);
  });
});

describe.each(['cluster', 'kubernetes'] as const)('bootstrap policy reconciled at start (LevelDB, --naming=%s)', (mode) => {
  const naming = createNaming(mode);
  const keys = policyKeys(naming);
  const policy = bootstrapPolicy(naming);
  const base = `/apis/${keys.rbacGroup}/v1`;
  let dir: string;
  let t: TestServer | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-rbac-policy-'));
    t = await startTestServer({ storage: 'leveldb', dataDir: dir, naming: mode });
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates every object of the policy, then reconciles edits at the next start', async () => {
    const admin = () => t!.admin;
    const count = async (path: string) => (await admin().get(path)).json<Obj>().items.filter((o: Obj) => o.metadata.labels?.[keys.bootstrapping] === 'rbac-defaults').length;
    expect(await count(`${base}/clusterroles`)).toBe(policy.clusterRoles.length);
    expect(await count(`${base}/clusterrolebindings`)).toBe(policy.clusterRoleBindings.length);
    expect(await count(`${base}/roles`)).toBe(policy.roles.length);
    expect(await count(`${base}/rolebindings`)).toBe(policy.roleBindings.length);
    const ready = await admin().get('/readyz/poststarthook/rbac/bootstrap-roles');
    expect(ready.status).toBe(200);

    // Edits: a rule removed, a subject removed, an opted-out role emptied, an extra rule added,
    // a namespaced role deleted.
    const get = async (path: string) => (await admin().get(path)).json<Obj>();
    const put = async (path: string, body: Obj) => expect((await admin().put(path, body)).status, path).toBe(200);
    const discovery = await get(`${base}/clusterroles/system:discovery`);
    discovery.rules = discovery.rules.slice(1);
    await put(`${base}/clusterroles/system:discovery`, discovery);
    const monitoring = await get(`${base}/clusterroles/system:monitoring`);
    monitoring.metadata.annotations[keys.autoupdate] = 'false';
    monitoring.rules = [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }];
    await put(`${base}/clusterroles/system:monitoring`, monitoring);
    const view = await get(`${base}/clusterroles/system:aggregate-to-view`);
    const extra = { verbs: ['get'], apiGroups: ['example.com'], resources: ['widgets'] };
    view.rules.push(extra);
    await put(`${base}/clusterroles/system:aggregate-to-view`, view);
    const publicInfo = await get(`${base}/clusterrolebindings/system:public-info-viewer`);
    publicInfo.subjects = publicInfo.subjects.slice(0, 1);
    await put(`${base}/clusterrolebindings/system:public-info-viewer`, publicInfo);
    expect((await admin().delete(`${base}/namespaces/kube-public/roles/system:controller:bootstrap-signer`)).status).toBe(200);

    await t!.stop();
    t = await startTestServer({ storage: 'leveldb', dataDir: dir, naming: mode });

    const expected = (name: string) => policy.clusterRoles.find((r) => r.metadata.name === name)!;
    expect((await get(`${base}/clusterroles/system:discovery`)).rules).toEqual(expect.arrayContaining(expected('system:discovery').rules));
    expect((await get(`${base}/clusterroles/system:monitoring`)).rules).toEqual([{ verbs: ['get'], nonResourceURLs: ['/metrics'] }]);
    const viewAfter = await get(`${base}/clusterroles/system:aggregate-to-view`);
    expect(viewAfter.rules).toContainEqual(extra);
    expect(viewAfter.rules).toEqual(expect.arrayContaining(expected('system:aggregate-to-view').rules));
    expect((await get(`${base}/clusterrolebindings/system:public-info-viewer`)).subjects.map((s: Obj) => s.name)).toEqual(['system:authenticated', 'system:unauthenticated']);
    expect((await admin().get(`${base}/namespaces/kube-public/roles/system:controller:bootstrap-signer`)).status).toBe(200);
  });

  it('writes a few objects at a time, not one after another', async () => {
    // Missing roles to create again; the real registries, with their creates counted in flight.
    const missing = policy.clusterRoles.slice(0, 3 * STARTUP_WRITES_IN_FLIGHT).map((r) => r.metadata.name);
    for (const name of missing) expect((await t!.admin.delete(`${base}/clusterroles/${name}`)).status, name).toBe(200);
    const real = t!.server.registries;
    let inFlight = 0;
    let most = 0;
    const counted = {
      for: (r: Parameters<RegistrySet['for']>[0]) => {
        const reg = real.for(r);
        if (!reg) return reg;
        return new Proxy(reg, {
          get(target, prop, receiver) {
            if (prop !== 'create') return Reflect.get(target, prop, receiver) as unknown;
            return async (...args: Parameters<typeof target.create>) => {
              most = Math.max(most, ++inFlight);
              try {
                return await target.create(...args);
              } finally {
                inFlight--;
              }
            };
          },
        });
      },
    } as unknown as RegistrySet; // only for() is used by the reconciler
    const counts = await reconcileBootstrapPolicy({ registries: counted, catalog: t!.server.catalog, naming, log: silentLogger, user: SYSTEM_USER });
    expect(counts.created).toBe(missing.length);
    expect(most).toBe(STARTUP_WRITES_IN_FLIGHT);
    for (const name of missing) expect((await t!.admin.get(`${base}/clusterroles/${name}`)).status, name).toBe(200);
  });
});
