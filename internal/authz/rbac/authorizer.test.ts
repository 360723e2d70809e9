import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../log/logger.js';
import { createNaming, type NamingMode } from '../../naming/naming.js';
import { LevelRevisionStore } from '../../store/revision-store.js';
import { encodeStored } from '../../storedobject/stored-object.js';
import { WatchCache } from '../../watchcache/watch-cache.js';
import type { Attributes } from '../authorizer.js';
import { createRbacAuthorizer, type RbacAuthorizer } from './authorizer.js';
import { escalationMessage } from './escalation.js';
import { rule } from './rules.js';

const G = 'rbac.authorization.k8s.io';
const key = (resource: string, ns: string, name: string) => `/registry/${G}/${resource}/${ns ? `${ns}/` : ''}${name}`;
type Rule = { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; nonResourceURLs?: string[] };
type Subject = { kind: string; name: string; namespace?: string };

const alice = { name: 'alice', groups: ['devs', 'system:authenticated'] };
const attrs = (user: Attributes['user'], verb: string, resource: string, namespace: string, extra: Partial<Attributes> = {}): Attributes => ({
  user, verb, isResourceRequest: true, path: '', namespace, apiGroup: '', apiVersion: 'v1', resource, subresource: '', name: '', ...extra,
});

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe.each<NamingMode>(['cluster', 'kubernetes'])('RBAC authorizer over the watch cache of a LevelDB store (naming %s)', (mode) => {
  const naming = createNaming(mode);
  const rbacGroup = naming.group(G);
  let dir: string;
  let store: LevelRevisionStore;
  let cache: WatchCache;
  let rbac: RbacAuthorizer;

  const put = (k: string, obj: Record<string, unknown>) => store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: k, value: encodeStored(obj) }] });
  const del = (k: string) => store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: k }] });
  const role = (ns: string, name: string, rules: Rule[]) =>
    put(key(ns ? 'roles' : 'clusterroles', ns, name), { apiVersion: `${rbacGroup}/v1`, kind: ns ? 'Role' : 'ClusterRole', metadata: ns ? { name, namespace: ns } : { name }, rules });
  const binding = (ns: string, name: string, roleRef: { kind: string; name: string }, subjects: Subject[]) =>
    put(key(ns ? 'rolebindings' : 'clusterrolebindings', ns, name), {
      apiVersion: `${rbacGroup}/v1`, kind: ns ? 'RoleBinding' : 'ClusterRoleBinding', metadata: ns ? { name, namespace: ns } : { name },
      roleRef: { apiGroup: rbacGroup, ...roleRef }, subjects,
    });
  const decision = async (a: Attributes) => (await rbac.authorize(a)).decision;
  const settle = (a: Attributes, want: 'allow' | 'noOpinion') => until(() => (rbac.authorize(a) as { decision: string }).decision === want, `${a.verb} ${a.resource} → ${want}`);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rbac-index-'));
    store = await LevelRevisionStore.open({ storage: 'leveldb', path: dir });
    cache = new WatchCache(store, { root: '/registry/', specFor: () => undefined });
  });
  afterEach(async () => {
    rbac?.stop();
    cache.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies a default binding of the bootstrap policy while the store holds none of that name, and only the stored one after', async () => {
    await cache.start();
    rbac = createRbacAuthorizer({ cache, naming, log: silentLogger });
    const anonymous = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
    const livez = (user: Attributes['user']) => attrs(user, 'get', '', '', { isResourceRequest: false, path: '/livez' });
    expect(await rbac.authorize(livez(anonymous))).toEqual({
      decision: 'allow',
      reason: 'RBAC: allowed by the bootstrap policy\'s ClusterRoleBinding "system:public-info-viewer" of ClusterRole "system:public-info-viewer" (not stored yet)',
    });
    expect(await decision(attrs(anonymous, 'get', '', '', { isResourceRequest: false, path: '/api' }))).toBe('noOpinion');
    expect(await decision(attrs(alice, 'get', '', '', { isResourceRequest: false, path: '/apis' }))).toBe('allow');
    expect(rbac.rulesFor(anonymous, 'default').nonResourceRules).toContainEqual({ verbs: ['get'], nonResourceURLs: expect.arrayContaining(['/livez', '/readyz', '/healthz']) });
    // An administrator's binding of that name, for authenticated users only: the default is gone.
    await role('', 'system:public-info-viewer', [{ verbs: ['get'], nonResourceURLs: ['/livez', '/readyz', '/healthz', '/version', '/version/'] }]);
    await binding('', 'system:public-info-viewer', { kind: 'ClusterRole', name: 'system:public-info-viewer' }, [{ kind: 'Group', name: 'system:authenticated', apiGroup: rbacGroup } as Subject]);
    await settle(livez(anonymous), 'noOpinion');
    expect(await decision(livez(alice))).toBe('allow');
    // Deleted, the default stands in again (upstream's next start writes it back).
    await del(key('clusterrolebindings', '', 'system:public-info-viewer'));
    await settle(livez(anonymous), 'allow');
  });

  it('built before the cache has loaded, starts its index when the load ends, without polling the cache meanwhile', async () => {
    await role('', 'pod-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
    await binding('', 'read-pods', { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'User', name: 'alice', apiGroup: rbacGroup } as Subject]);
    let readyReads = 0;
    const readyOf = Object.getOwnPropertyDescriptor(WatchCache.prototype, 'ready')!.get!;
    Object.defineProperty(cache, 'ready', { get: () => (readyReads++, readyOf.call(cache)) });
    rbac = createRbacAuthorizer({ cache, naming, log: silentLogger });
    expect(rbac.ready).toBe(false);
    // A start-up's work holds the loop for a while here; a poll would have asked again and again.
    await new Promise((r) => setTimeout(r, 200));
    const readsWhileLoading = readyReads;
    expect(readsWhileLoading).toBeLessThanOrEqual(1);
    await cache.start();
    await new Promise((r) => setImmediate(r));
    expect(rbac.ready).toBe(true);
    expect(await decision(attrs(alice, 'get', 'pods', 'any'))).toBe('allow');
  });

  it('stopped before the cache has loaded, starts nothing when the load ends', async () => {
    rbac = createRbacAuthorizer({ cache, naming, log: silentLogger });
    rbac.stop();
    await cache.start();
    // Longer than any retry of the start would wait.
    await new Promise((r) => setTimeout(r, 120));
    expect(rbac.ready).toBe(false);
  });

  it('answers from the primed state at once, with upstream reason texts, and keeps up with changes', async () => {
    await role('', 'pod-reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }]);
    await binding('', 'read-pods', { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'User', name: 'alice', apiGroup: rbacGroup } as Subject]);
    await cache.start();
    rbac = createRbacAuthorizer({ cache, naming, log: silentLogger });
    expect(rbac.ready).toBe(true);
    expect(await rbac.authorize(attrs(alice, 'get', 'pods', 'any'))).toEqual({
      decision: 'allow', reason: 'RBAC: allowed by ClusterRoleBinding "read-pods" of ClusterRole "pod-reader" to User "alice"',
    });
    expect(await rbac.authorize(attrs(alice, 'delete', 'pods', 'any'))).toEqual({ decision: 'noOpinion', reason: '' });

    // A role's change applies without rebinding.
    await role('', 'pod-reader', [{ verbs: ['get', 'list', 'delete'], apiGroups: [''], resources: ['pods'] }]);
    await settle(attrs(alice, 'delete', 'pods', 'any'), 'allow');
    // The role gone: the binding grants nothing and the reason names the missing role.
    await del(key('clusterroles', '', 'pod-reader'));
    await settle(attrs(alice, 'get', 'pods', 'any'), 'noOpinion');
    expect(await rbac.authorize(attrs(alice, 'get', 'pods', 'any'))).toEqual({ decision: 'noOpinion', reason: `RBAC: clusterrole.${rbacGroup} "pod-reader" not found` });
    await role('', 'pod-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
    await settle(attrs(alice, 'get', 'pods', 'any'), 'allow');
    // The binding's subjects changed away from alice, then the binding deleted.
    await binding('', 'read-pods', { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'User', name: 'bob' }]);
    await settle(attrs(alice, 'get', 'pods', 'any'), 'noOpinion');
    expect(await decision(attrs({ name: 'bob', groups: [] }, 'get', 'pods', 'x'))).toBe('allow');
    await del(key('clusterrolebindings', '', 'read-pods'));
    await settle(attrs({ name: 'bob', groups: [] }, 'get', 'pods', 'x'), 'noOpinion');
  });

  it('scopes RoleBindings to their namespace, with Roles of that namespace or ClusterRoles', async () => {
    await cache.start();
    rbac = createRbacAuthorizer({ cache, naming, log: silentLogger });
    await role('team-a', 'cm-editor', [{ verbs: ['*'], apiGroups: [''], resources: ['configmaps'] }]);
    await role('', 'secret-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['shared'] }]);
    await binding('team-a', 'edit-cm', { kind: 'Role', name: 'cm-editor' }, [{ kind: 'Group', name: 'devs' }]);
    await binding('team-a', 'read-secret', { kind: 'ClusterRole', name: 'secret-reader' }, [{ kind: 'User', name: 'alice' }]);
    await settle(attrs(alice, 'get', 'secrets', 'team-a', { name: 'shared' }), 'allow');
    expect(await rbac.authorize(attrs(alice, 'create', 'configmaps', 'team-a'))).toEqual({
      decision: 'allow', reason: 'RBAC: allowed by RoleBinding "edit-cm/team-a" of Role "cm-editor" to Group "devs"',
    });
    expect(await decision(attrs(alice, 'create', 'configmaps', 'team-b'))).toBe('noOpinion');
    expect(await decision(attrs(alice, 'list', 'configmaps', ''))).toBe('noOpinion');
    expect(await decision(attrs(alice, 'get', 'secrets', 'team-a', { name: 'other' }))).toBe('noOpinion');
    expect(await decision(attrs(alice, 'list', 'secrets', 'team-a'))).toBe('noOpinion');
    expect(await decision(attrs({ name: 'alice', groups: [] }, 'create', 'configmaps', 'team-a'))).toBe('noOpinion');
    // Names are case-sensitive.
    expect(await decision(attrs({ name: 'Alice', groups: ['Devs'] }, 'get', 'secrets', 'team-a', { name: 'shared' }))).toBe('noOpinion');

    // Without system:authenticated: the bootstrap defaults (not stored here) would add theirs.
    const devAlice = { name: 'alice', groups: ['devs'] };
    const rules = rbac.rulesFor(devAlice, 'team-a');
    expect(rules.resourceRules).toEqual([
      { verbs: ['*'], apiGroups: [''], resources: ['configmaps'] },
      { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['shared'] },
    ]);
    expect(rbac.rulesFor(devAlice, 'team-b').resourceRules).toEqual([]);
  });

  it('matches ServiceAccount subjects as system:serviceaccount:<ns>:<name>, defaulting to the binding namespace', async () => {
    await role('', 'viewer', [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }, { verbs: ['get'], nonResourceURLs: ['/metrics'] }]);
    await binding('apps', 'sa-local', { kind: 'ClusterRole', name: 'viewer' }, [{ kind: 'ServiceAccount', name: 'builder' }]);
    await binding('', 'sa-global', { kind: 'ClusterRole', name: 'viewer' }, [{ kind: 'ServiceAccount', name: 'robot', namespace: 'ops' }]);
    await cache.start();
    rbac = createRbacAuthorizer({ cache, naming, log: silentLogger });
    const builder = { name: 'system:serviceaccount:apps:builder', groups: ['system:serviceaccounts'] };
    expect(await rbac.authorize(attrs(builder, 'list', 'pods', 'apps'))).toEqual({
      decision: 'allow', reason: 'RBAC: allowed by RoleBinding "sa-local/apps" of ClusterRole "viewer" to ServiceAccount "builder/apps"',
    });
    expect(await decision(attrs(builder, 'list', 'pods', 'other'))).toBe('noOpinion');
    const robot = { name: 'system:serviceaccount:ops:robot', groups: [] };
    expect(await decision(attrs(robot, 'list', 'pods', 'anywhere'))).toBe('allow');
    expect(await decision({ ...attrs(robot, 'get', '', ''), isResourceRequest: false, path: '/metrics' })).toBe('allow');
    expect(await decision({ ...attrs(robot, 'get', '', ''), isResourceRequest: false, path: '/metrics/x' })).toBe('noOpinion');
    expect(rbac.rulesFor(robot, '').nonResourceRules).toEqual([{ verbs: ['get'], nonResourceURLs: ['/metrics'] }]);
  });

  it("visits only the bindings naming the user or its groups, however many other users' objects exist", async () => {
    const ops = [];
    for (let i = 0; i < 10_000; i++) {
      const ns = `ns-${i % 50}`;
      ops.push(
        { type: 'put' as const, key: key('roles', ns, `r-${i}`), value: encodeStored({ kind: 'Role', metadata: { name: `r-${i}`, namespace: ns }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] }) },
        { type: 'put' as const, key: key('rolebindings', ns, `b-${i}`), value: encodeStored({ kind: 'RoleBinding', metadata: { name: `b-${i}`, namespace: ns }, roleRef: { kind: 'Role', name: `r-${i}` }, subjects: [{ kind: 'User', name: `user-${i}` }] }) },
      );
    }
    for (let i = 0; i < ops.length; i += 2000) await store.execute({ type: 'txn', compares: [], ops: ops.slice(i, i + 2000) });
    await role('ns-7', 'mine', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
    await binding('ns-7', 'mine', { kind: 'Role', name: 'mine' }, [{ kind: 'User', name: 'alice' }]);
    await cache.start();
    rbac = createRbacAuthorizer({ cache, naming, log: silentLogger });
    expect(rbac.index.bindingsFor(alice, 'ns-7').map((b) => b.name)).toEqual(['mine']);
    expect(rbac.index.bindingsFor(alice, '')).toEqual([]);
    expect(await decision(attrs(alice, 'get', 'pods', 'ns-7'))).toBe('allow');
    expect(await decision(attrs({ name: 'user-57', groups: [] }, 'get', 'pods', 'ns-7'))).toBe('allow');
    expect(await decision(attrs({ name: 'user-57', groups: [] }, 'get', 'pods', 'ns-8'))).toBe('noOpinion');
  });

  it("prints upstream's escalation message, with the resolution errors of missing roles", async () => {
    await role('', 'reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
    await binding('', 'reads', { kind: 'ClusterRole', name: 'reader' }, [{ kind: 'User', name: 'alice' }]);
    await binding('team', 'gone', { kind: 'Role', name: 'gone' }, [{ kind: 'Group', name: 'devs' }]);
    await binding('', 'gone-too', { kind: 'ClusterRole', name: 'gone-too' }, [{ kind: 'Group', name: 'devs' }]);
    await cache.start();
    rbac = createRbacAuthorizer({ cache, naming, log: silentLogger });
    const want = [rule({ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] })];
    expect(escalationMessage(rbac.index, alice, '', want)).toBe(
      'user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        `{APIGroups:[""], Resources:["pods"], Verbs:["list"]}; resolution errors: [clusterrole.${rbacGroup} "gone-too" not found]`,
    );
    expect(escalationMessage(rbac.index, alice, 'team', want)).toBe(
      'user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        `{APIGroups:[""], Resources:["pods"], Verbs:["list"]}; resolution errors: [[clusterrole.${rbacGroup} "gone-too" not found, role.${rbacGroup} "gone" not found]]`,
    );
    expect(escalationMessage(rbac.index, alice, '', [rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] })])).toBeUndefined();
  });

  it('waits for a cache that has not primed instead of answering from an empty index', async () => {
    await role('', 'r', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
    await binding('', 'b', { kind: 'ClusterRole', name: 'r' }, [{ kind: 'Group', name: 'devs' }]);
    rbac = createRbacAuthorizer({ cache, naming, log: silentLogger });
    expect(rbac.ready).toBe(false);
    const pending = rbac.authorize(attrs(alice, 'get', 'pods', 'x'));
    await cache.start();
    expect((await pending).decision).toBe('allow');
    expect(rbac.ready).toBe(true);
  });
  it('answers a repeated question from memory only until a role or binding changes', async () => {
    await cache.start();
    rbac = createRbacAuthorizer({ cache, naming, log: silentLogger });
    const bob = { name: 'bob', groups: ['system:authenticated'] };
    const getPods = attrs(bob, 'get', 'pods', 'team');
    expect(await decision(getPods)).toBe('noOpinion');
    expect(await decision(getPods)).toBe('noOpinion');
    await role('team', 'reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
    await binding('team', 'bob-reads', { kind: 'Role', name: 'reader' }, [{ kind: 'User', name: 'bob' }]);
    await settle(getPods, 'allow');
    expect(await rbac.authorize(getPods)).toEqual({ decision: 'allow', reason: 'RBAC: allowed by RoleBinding "bob-reads/team" of Role "reader" to User "bob"' });
    // The rules change, the binding does not.
    await role('team', 'reader', [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }]);
    await settle(getPods, 'noOpinion');
    expect(await decision({ ...getPods, verb: 'list' })).toBe('allow');
    // The role goes: no opinion, with the resolution error.
    await del(key('roles', 'team', 'reader'));
    await settle({ ...getPods, verb: 'list' }, 'noOpinion');
    expect(await rbac.authorize({ ...getPods, verb: 'list' })).toEqual({ decision: 'noOpinion', reason: `RBAC: role.${rbacGroup} "reader" not found` });
  });

  it('keeps apart requests whose parts would run together', async () => {
    await cache.start();
    rbac = createRbacAuthorizer({ cache, naming, log: silentLogger });
    await role('', 'pod-reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
    await binding('', 'group-b', { kind: 'ClusterRole', name: 'pod-reader' }, [{ kind: 'Group', name: 'b' }]);
    const inGroup = attrs({ name: 'a', groups: ['b'] }, 'get', 'pods', 'x');
    await settle(inGroup, 'allow');
    // Each pair differs only in where one part ends and the next begins.
    const others: Attributes[] = [
      attrs({ name: 'ab', groups: [] }, 'get', 'pods', 'x'),
      attrs({ name: 'a', groups: ['b', ''] }, 'get', 'pods', 'x'),
      attrs({ name: 'a', groups: ['bget'] }, '', 'pods', 'x'),
      attrs({ name: 'a', groups: ['b'] }, 'getpods', '', 'x'),
      attrs({ name: 'a', groups: ['b'] }, 'get', 'pods', 'x', { isResourceRequest: false, path: 'pods' }),
    ];
    for (const a of others) expect(await decision(a), JSON.stringify(a)).toBe(a.user.name === 'a' && a.user.groups.includes('b') && a.verb === 'get' && a.isResourceRequest ? 'allow' : 'noOpinion');
    expect(await decision(inGroup)).toBe('allow');
  });

  it('hands out decisions nobody can change', async () => {
    await cache.start();
    rbac = createRbacAuthorizer({ cache, naming, log: silentLogger });
    const d = await rbac.authorize(attrs(alice, 'get', 'pods', 'x'));
    expect(Object.isFrozen(d)).toBe(true);
  });
});
