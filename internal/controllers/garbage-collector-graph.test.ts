// The dependency graph alone: what each change queues, and (seeded) that any order of
// observations and removals leaves the dependents index equal to one recomputed from the nodes.
import { describe, expect, it } from 'vitest';
import { DependencyGraph, nodeFromObject, type GraphNode, type OwnerRef } from './garbage-collector-graph.js';
import { rng } from '../testserver/seeded-random.js';

const node = (uid: string, owners: OwnerRef[] = [], extra: Partial<GraphNode> = {}): GraphNode => ({
  uid,
  prefix: '/registry/core/configmaps/',
  key: `/registry/core/configmaps/ns/${uid}`,
  group: '',
  kind: 'ConfigMap',
  namespaced: true,
  namespace: 'ns',
  name: uid,
  owners,
  deleting: false,
  finalizers: [],
  ...extra,
});
const ref = (uid: string, extra: Partial<OwnerRef> = {}): OwnerRef => ({ apiVersion: 'v1', kind: 'ConfigMap', name: uid, uid, ...extra });


describe('dependency graph', () => {
  // Plain nodes (no owners, finalizers or deletion) are held as their keys: each reads back as observed.
  const cluster = (uid: string, name: string): GraphNode => ({
    ...node(uid),
    prefix: '/registry/rbac.authorization.k8s.io/clusterroles/',
    key: `/registry/rbac.authorization.k8s.io/clusterroles/${name}`,
    group: 'rbac.authorization.k8s.io',
    kind: 'ClusterRole',
    namespaced: false,
    namespace: '',
    name,
  });
  it.each([
    ['namespaced, plain', node('p1'), true],
    ['cluster-scoped, plain', cluster('c1', 'admin:view'), true],
    ['namespaced, with an owner', node('d1', [ref('p1')]), false],
    ['being deleted', node('x1', [], { deleting: true }), false],
    ['with a finalizer', node('f1', [], { finalizers: ['example.com/f'] }), false],
    ['plain, but its namespace is not the one of its key', node('m1', [], { namespace: 'other' }), true],
    ['plain, but its name is not the one of its key', node('m2', [], { name: 'else' }), true],
  ])('%s: reads back as observed', (_, n, plain) => {
    const g = new DependencyGraph();
    g.observe(node('p1'));
    g.observe(cluster('c1', 'admin:view'));
    g.observe(n);
    expect(g.get(n.uid)).toEqual(n);
    expect(g.isPlain(n.uid)).toBe(plain);
    expect(g.uidsUnder(new Set([n.prefix])).get(n.prefix)).toContain(n.uid);
  });

  it('a plain owner answers its dependents as a node does: matching, another namespace, another kind', () => {
    const g = new DependencyGraph();
    g.observe(node('o'));
    expect(g.observe(node('d', [ref('o')])).work).toEqual([]);
    expect(g.dependentsOf('o').map((d) => d.uid)).toEqual(['d']);
    const elsewhere = g.observe(node('e', [ref('o')], { namespace: 'other', key: '/registry/core/configmaps/other/e' }));
    expect(elsewhere.invalidNamespace.map((r) => r.owner.uid)).toEqual(['o']);
    expect(g.observe(node('k', [ref('o', { kind: 'Secret' })])).work).toEqual([{ op: 'delete', uid: 'k' }]);
    expect(g.forget('o').work.map((w) => w.uid).sort()).toEqual(['d', 'e', 'k']);
    expect(g.get('o')).toBeUndefined();
  });

  it('a dependent of an owner not observed is queued to look for it; once observed, it is not', () => {
    const g = new DependencyGraph();
    expect(g.observe(node('d', [ref('o')])).work).toEqual([{ op: 'delete', uid: 'd' }]);
    expect(g.observe(node('o')).work).toEqual([]);
    expect(g.needsAttention('d')).toBe(false);
    expect(g.observe(node('d2', [ref('o')])).work).toEqual([]);
  });

  it('removing an owner queues its dependents; an owner waiting in the foreground is queued when a dependent goes or stops blocking', () => {
    const g = new DependencyGraph();
    g.observe(node('o'));
    g.observe(node('a', [ref('o', { blockOwnerDeletion: true })]));
    g.observe(node('b', [ref('o', { blockOwnerDeletion: true })]));
    const start = g.observe(node('o', [], { deleting: true, finalizers: ['foregroundDeletion'] })).work;
    expect(start).toEqual([
      { op: 'delete', uid: 'a' },
      { op: 'delete', uid: 'b' },
      { op: 'delete', uid: 'o' },
    ]);
    expect(g.forget('a').work).toEqual([{ op: 'delete', uid: 'o' }]);
    expect(g.observe(node('b', [ref('o', { blockOwnerDeletion: false })])).work).toEqual([{ op: 'delete', uid: 'o' }]);
    expect(g.forget('o').work).toEqual([{ op: 'delete', uid: 'b' }]);
  });

  it('orphaning starts once, when the orphan finalizer is first seen on a deleted owner', () => {
    const g = new DependencyGraph();
    g.observe(node('o'));
    const orphan = node('o', [], { deleting: true, finalizers: ['orphan'] });
    expect(g.observe(orphan).work).toEqual([{ op: 'orphan', uid: 'o' }]);
    expect(g.observe({ ...orphan, name: 'o' }).work).toEqual([]);
  });

  it('an owner observed in another namespace is reported, whichever is seen first', () => {
    const g = new DependencyGraph();
    const owner = node('o', [], { namespace: 'other' });
    g.observe(owner);
    const first = g.observe(node('d', [ref('o')]));
    expect(first.invalidNamespace.map((r) => r.dependent.uid)).toEqual(['d']);
    expect(first.work).toEqual([{ op: 'delete', uid: 'd' }]);

    const h = new DependencyGraph();
    h.observe(node('d', [ref('o')]));
    const later = h.observe(owner);
    expect(later.invalidNamespace.map((r) => `${r.dependent.uid}->${r.owner.uid}`)).toEqual(['d->o']);
    expect(later.work).toEqual([{ op: 'delete', uid: 'd' }]);
    // A cluster-scoped owner may be named from any namespace.
    const c = new DependencyGraph();
    c.observe(node('n', [], { namespaced: false, namespace: '' }));
    expect(c.observe(node('d', [ref('n')])).invalidNamespace).toEqual([]);
  });

  it.each([1, 2, 3, 42, 1234])('seed %i: any order of changes keeps the dependents index exact', (seed) => {
    const rand = rng(seed);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const uids = Array.from({ length: 30 }, (_, i) => `u${i}`);
    const g = new DependencyGraph();
    const live = new Map<string, GraphNode>();
    for (let step = 0; step < 2000; step++) {
      const uid = pick(uids);
      if (rand() < 0.25) {
        g.forget(uid);
        live.delete(uid);
      } else {
        const owners = [...new Set(Array.from({ length: Math.floor(rand() * 3) }, () => pick(uids)))].filter((o) => o !== uid).map((o) => ref(o, { blockOwnerDeletion: rand() < 0.5 }));
        const n = node(uid, owners, { deleting: rand() < 0.2, finalizers: rand() < 0.2 ? [pick(['orphan', 'foregroundDeletion', 'x'])] : [] });
        const { work } = g.observe(n);
        live.set(uid, n);
        // Work only ever names nodes the graph holds or owners named by them.
        for (const w of work) expect(live.has(w.uid) || [...live.values()].some((l) => l.owners.some((o) => o.uid === w.uid))).toBe(true);
      }
    }
    expect(g.size).toBe(live.size);
    for (const owner of uids) {
      const want = [...live.values()].filter((n) => n.owners.some((o) => o.uid === owner)).map((n) => n.uid).sort();
      expect(g.dependentsOf(owner).map((n) => n.uid).sort()).toEqual(want);
    }
  });
});

describe('nodeFromObject', () => {
  const at = { prefix: '/registry/core/pods/', key: '/registry/core/pods/ns/a', group: '', kind: 'Pod', namespaced: true };

  it('reads owners, finalizers and deletion; objects without them share one empty list', () => {
    const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'o1', controller: true };
    const full = nodeFromObject({ metadata: { uid: 'u1', name: 'a', namespace: 'ns', ownerReferences: [owner, { kind: 'no uid' }], finalizers: ['f', 3], deletionTimestamp: 'now' } }, at)!;
    expect(full).toMatchObject({ uid: 'u1', name: 'a', namespace: 'ns', owners: [owner], finalizers: ['f'], deleting: true });
    const plain = nodeFromObject({ metadata: { uid: 'u2', name: 'b', namespace: 'ns', finalizers: [] } }, at)!;
    const other = nodeFromObject({ metadata: { uid: 'u3', name: 'c', namespace: 'ns' } }, at)!;
    expect(plain).toMatchObject({ owners: [], finalizers: [], deleting: false });
    expect(other.owners).toBe(plain.owners);
    expect(other.finalizers).toBe(plain.finalizers);
    expect(nodeFromObject({ metadata: { name: 'no uid' } }, at)).toBeUndefined();
  });
});
