// The garbage collector in a real in-process server on LevelDB: each propagation policy (and
// the legacy orphanDependents), a policy switched by a second delete, blocking and
// non-blocking dependents, owners that are gone, never existed, live in another namespace or
// are of a kind the server does not serve, a cluster-scoped dependent of a namespaced owner, a
// custom resource as owner (its definition created after the collector started), a
// three-level chain, and a restart with more stored objects than one turn observes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeStored } from '../storedobject/stored-object.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import { rng } from '../testserver/seeded-random.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies are free-form JSON
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CM = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;


describe('garbage collector', () => {
  let t: TestServer;
  const until = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
    for (let i = 0; i < 400; i++) {
      const v = await probe();
      if (v !== undefined) return v;
      await sleep(25);
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  const create = async (path: string, body: Obj): Promise<Obj> => {
    const res = await t.admin.post(path, body);
    expect(res.status, res.text()).toBeLessThan(300);
    return res.json<Obj>();
  };
  const ref = (owner: Obj, extra: Obj = {}) => ({ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, ...extra });
  const cm = (ns: string, name: string, owners: Obj[] = [], finalizers?: string[]) =>
    create(CM(ns), { metadata: { name, ownerReferences: owners.length ? owners : undefined, finalizers } });
  const status = async (path: string) => (await t.admin.get(path)).status;
  const gone = (path: string) => until(`${path} to be gone`, async () => ((await status(path)) === 404 ? true : undefined));
  const get = async (path: string) => (await t.admin.get(path)).json<Obj>();
  /** Holds for a while: the collector had time to act and did not. */
  const stays = async (path: string) => {
    await sleep(600);
    expect(await status(path)).toBe(200);
  };
  const unhold = async (path: string) => {
    const obj = await get(path);
    obj.metadata.finalizers = (obj.metadata.finalizers as string[]).filter((f) => f !== 'test.example.com/hold');
    expect((await t.admin.put(path, obj)).status).toBe(200);
  };

  beforeAll(async () => {
    t = await startTestServer({ storage: 'leveldb' });
    for (const name of ['gc', 'other']) expect((await t.admin.post('/api/v1/namespaces', { metadata: { name } })).status).toBeLessThan(300);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('background (the default): the owner goes at once, then its dependents', async () => {
    const owner = await cm('gc', 'bg-owner');
    await cm('gc', 'bg-dep1', [ref(owner)]);
    await cm('gc', 'bg-dep2', [ref(owner, { controller: true, blockOwnerDeletion: true })]);
    const res = await t.admin.delete(`${CM('gc')}/bg-owner`);
    expect(res.status).toBe(200);
    expect(await status(`${CM('gc')}/bg-owner`)).toBe(404);
    await gone(`${CM('gc')}/bg-dep1`);
    await gone(`${CM('gc')}/bg-dep2`);
  });

  it('foreground: the owner waits, readable, for its blocking dependents, then goes', async () => {
    const owner = await cm('gc', 'fg-owner');
    await cm('gc', 'fg-free', [ref(owner)]);
    await cm('gc', 'fg-block', [ref(owner, { blockOwnerDeletion: true })], ['test.example.com/hold']);
    const res = await t.admin.delete(`${CM('gc')}/fg-owner`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' });
    expect(res.status).toBe(200);
    const marked = res.json<Obj>();
    expect(marked.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(marked.metadata.deletionTimestamp).toBeTruthy();
    await gone(`${CM('gc')}/fg-free`);
    // The blocking dependent is deleted but held by its own finalizer: the owner waits.
    await until('the blocking dependent to terminate', async () => ((await get(`${CM('gc')}/fg-block`)).metadata.deletionTimestamp ? true : undefined));
    await stays(`${CM('gc')}/fg-owner`);
    expect((await get(`${CM('gc')}/fg-owner`)).metadata.finalizers).toEqual(['foregroundDeletion']);
    await unhold(`${CM('gc')}/fg-block`);
    await gone(`${CM('gc')}/fg-block`);
    await gone(`${CM('gc')}/fg-owner`);
  });

  it('foreground does not wait for dependents that do not block', async () => {
    const owner = await cm('gc', 'fgnb-owner');
    await cm('gc', 'fgnb-dep', [ref(owner, { blockOwnerDeletion: false })], ['test.example.com/hold']);
    expect((await t.admin.delete(`${CM('gc')}/fgnb-owner?propagationPolicy=Foreground`)).status).toBe(200);
    await gone(`${CM('gc')}/fgnb-owner`);
    expect((await get(`${CM('gc')}/fgnb-dep`)).metadata.deletionTimestamp).toBeTruthy();
    await unhold(`${CM('gc')}/fgnb-dep`);
    await gone(`${CM('gc')}/fgnb-dep`);
  });

  it.each([
    ['propagationPolicy Orphan', { propagationPolicy: 'Orphan' }, 200],
    ['legacy orphanDependents: true', { orphanDependents: true }, 200],
  ])('%s: the owner gets the orphan finalizer, its dependents lose their reference to it', async (name, options, code) => {
    const tag = name.startsWith('legacy') ? 'legacy' : 'orphan';
    const owner = await cm('gc', `${tag}-owner`);
    const keep = await cm('gc', `${tag}-keep`);
    await cm('gc', `${tag}-dep`, [ref(owner, { controller: true, blockOwnerDeletion: true }), ref(keep)]);
    const res = await t.admin.delete(`${CM('gc')}/${tag}-owner`, options);
    expect(res.status).toBe(code);
    expect(res.json<Obj>().metadata.finalizers).toEqual(['orphan']);
    await gone(`${CM('gc')}/${tag}-owner`);
    const dep = await get(`${CM('gc')}/${tag}-dep`);
    expect(dep.metadata.ownerReferences).toEqual([ref(keep)]);
    await stays(`${CM('gc')}/${tag}-dep`);
  });

  it('orphanDependents: false asks for cascading: 202 while it waits (as upstream), then all go', async () => {
    const owner = await cm('gc', 'cascade-owner', [], ['test.example.com/hold']);
    await cm('gc', 'cascade-dep', [ref(owner)]);
    const res = await t.admin.delete(`${CM('gc')}/cascade-owner`, { orphanDependents: false });
    expect(res.status).toBe(202);
    expect(res.json<Obj>().metadata.finalizers).toEqual(['test.example.com/hold']);
    await unhold(`${CM('gc')}/cascade-owner`);
    await gone(`${CM('gc')}/cascade-owner`);
    await gone(`${CM('gc')}/cascade-dep`);
  });

  it('a core/v1 ReplicationController orphans by default (upstream keeps that for old clients); Background cascades', async () => {
    const RC = '/api/v1/namespaces/gc/replicationcontrollers';
    const spec = { replicas: 0, selector: { app: 'x' }, template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } };
    const kept = await create(RC, { metadata: { name: 'rc-default' }, spec });
    await cm('gc', 'rc-default-pod', [ref(kept, { controller: true, blockOwnerDeletion: true })]);
    const res = await t.admin.delete(`${RC}/rc-default`);
    expect(res.json<Obj>().metadata.finalizers).toEqual(['orphan']);
    await gone(`${RC}/rc-default`);
    expect((await get(`${CM('gc')}/rc-default-pod`)).metadata.ownerReferences).toBeUndefined();

    const cascaded = await create(RC, { metadata: { name: 'rc-bg' }, spec });
    await cm('gc', 'rc-bg-pod', [ref(cascaded, { controller: true, blockOwnerDeletion: true })]);
    expect((await t.admin.delete(`${RC}/rc-bg`, { propagationPolicy: 'Background' })).json<Obj>().kind).toBe('Status');
    await gone(`${CM('gc')}/rc-bg-pod`);
  });

  it('a second delete switches foreground to orphan', async () => {
    const owner = await cm('gc', 'switch-owner');
    await cm('gc', 'switch-dep', [ref(owner, { blockOwnerDeletion: true })], ['test.example.com/hold']);
    expect((await t.admin.delete(`${CM('gc')}/switch-owner?propagationPolicy=Foreground`)).json<Obj>().metadata.finalizers).toEqual(['foregroundDeletion']);
    await until('the dependent to terminate', async () => ((await get(`${CM('gc')}/switch-dep`)).metadata.deletionTimestamp ? true : undefined));
    const again = await t.admin.delete(`${CM('gc')}/switch-owner?propagationPolicy=Orphan`);
    expect(again.status).toBe(200);
    expect(again.json<Obj>().metadata.finalizers).toEqual(['orphan']);
    await gone(`${CM('gc')}/switch-owner`);
    const dep = await get(`${CM('gc')}/switch-dep`);
    expect(dep.metadata.ownerReferences).toBeUndefined();
    await unhold(`${CM('gc')}/switch-dep`);
  });

  it('a graceful pod deletion under way keeps its state against a second delete; the grace-0 confirmation removes it', async () => {
    const PODS = '/api/v1/namespaces/gc/pods';
    await create(PODS, { metadata: { name: 'running' }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'i' }] } });
    const first = (await t.admin.delete(`${PODS}/running`)).json<Obj>();
    expect(first.metadata.deletionGracePeriodSeconds).toBe(30);
    const again = (await t.admin.delete(`${PODS}/running?propagationPolicy=Orphan`)).json<Obj>();
    expect(again.metadata.finalizers).toBeUndefined();
    expect(again.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    expect((await t.admin.delete(`${PODS}/running?gracePeriodSeconds=0`)).status).toBe(200);
    expect(await status(`${PODS}/running`)).toBe(404);
  });

  it('finalizers removed during a pending grace period leave the pod to its node; the confirmation then removes it', async () => {
    const PODS = '/api/v1/namespaces/gc/pods';
    await create(PODS, { metadata: { name: 'held', finalizers: ['test.example.com/hold'] }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'i' }] } });
    expect((await t.admin.delete(`${PODS}/held`)).json<Obj>().metadata.deletionGracePeriodSeconds).toBe(30);
    await unhold(`${PODS}/held`);
    const still = await get(`${PODS}/held`);
    expect(still.metadata.deletionGracePeriodSeconds).toBe(30);
    expect((await t.admin.delete(`${PODS}/held?gracePeriodSeconds=0`)).status).toBe(200);
    expect(await status(`${PODS}/held`)).toBe(404);
  });

  it('the confirmation of a pod that still has finalizers ends the grace period; the last finalizer then removes it', async () => {
    const PODS = '/api/v1/namespaces/gc/pods';
    await create(PODS, { metadata: { name: 'held2', finalizers: ['test.example.com/hold'] }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'i' }] } });
    await t.admin.delete(`${PODS}/held2`);
    const confirmed = await t.admin.delete(`${PODS}/held2?gracePeriodSeconds=0`);
    expect(confirmed.status).toBe(200);
    expect(confirmed.json<Obj>().metadata.deletionGracePeriodSeconds).toBe(0);
    await unhold(`${PODS}/held2`);
    expect(await status(`${PODS}/held2`)).toBe(404);
  });

  it('dry run sets no finalizer and deletes nothing', async () => {
    const owner = await cm('gc', 'dry-owner');
    const res = await t.admin.delete(`${CM('gc')}/dry-owner?dryRun=All&propagationPolicy=Foreground`);
    expect(res.status).toBe(200);
    expect(res.json<Obj>().metadata.finalizers).toEqual(['foregroundDeletion']);
    const after = await get(`${CM('gc')}/dry-owner`);
    expect(after.metadata.finalizers).toBeUndefined();
    expect(after.metadata.deletionTimestamp).toBeUndefined();
    expect(after.metadata.resourceVersion).toBe(owner.metadata.resourceVersion);
  });

  it('a dependent whose owner never existed is deleted; one with a live owner left loses only the dead reference', async () => {
    const ghost = { apiVersion: 'v1', kind: 'ConfigMap', name: 'never', uid: '00000000-0000-4000-8000-000000000001' };
    await cm('gc', 'orphaned-at-birth', [ghost]);
    const live = await cm('gc', 'live-owner');
    await cm('gc', 'half-owned', [ghost, ref(live)]);
    await gone(`${CM('gc')}/orphaned-at-birth`);
    await until('the dead reference to go', async () => {
      const refs = (await get(`${CM('gc')}/half-owned`)).metadata.ownerReferences as Obj[];
      return refs.length === 1 ? refs : undefined;
    }).then((refs) => expect(refs).toEqual([ref(live)]));
  });

  it('an owner with the same name but another uid is not the owner', async () => {
    const first = await cm('gc', 'reborn');
    expect((await t.admin.delete(`${CM('gc')}/reborn`)).status).toBe(200);
    await cm('gc', 'reborn');
    await cm('gc', 'of-the-first', [ref(first)]);
    await gone(`${CM('gc')}/of-the-first`);
    expect(await status(`${CM('gc')}/reborn`)).toBe(200);
  });

  it('an owner in another namespace is absent for the dependent (deleted), with an OwnerRefInvalidNamespace event', async () => {
    const owner = await cm('other', 'elsewhere');
    const dep = await cm('gc', 'cross-ns', [ref(owner)]);
    await gone(`${CM('gc')}/cross-ns`);
    const event = await until('the warning event', async () => {
      const list = (await get('/api/v1/namespaces/gc/events')).items as Obj[];
      return list.find((e) => e.reason === 'OwnerRefInvalidNamespace' && e.involvedObject.uid === dep.metadata.uid);
    });
    expect(event.type).toBe('Warning');
    expect(event.message).toBe(`ownerRef [v1/ConfigMap, namespace: gc, name: elsewhere, uid: ${owner.metadata.uid}] does not exist in namespace "gc"`);
    expect(event.involvedObject).toMatchObject({ kind: 'ConfigMap', name: 'cross-ns', namespace: 'gc' });
    expect(await status(`${CM('other')}/elsewhere`)).toBe(200);
  });

  it('a cluster-scoped dependent of a namespaced owner is left alone, with an OwnerRefInvalidNamespace event', async () => {
    const owner = await cm('gc', 'ns-owner');
    const dep = await create('/api/v1/namespaces', { metadata: { name: 'owned-ns', ownerReferences: [ref(owner)] } });
    const event = await until('the warning event', async () => {
      const list = (await get('/api/v1/namespaces/default/events')).items as Obj[];
      return list.find((e) => e.reason === 'OwnerRefInvalidNamespace' && e.involvedObject.uid === dep.metadata.uid);
    });
    expect(event.message).toBe(`ownerRef [v1/ConfigMap, namespace: , name: ns-owner, uid: ${owner.metadata.uid}] does not exist in namespace ""`);
    expect((await t.admin.delete(`${CM('gc')}/ns-owner`)).status).toBe(200);
    await stays('/api/v1/namespaces/owned-ns');
  });

  it('an owner of a kind the server does not serve keeps its dependent', async () => {
    await cm('gc', 'unknown-kind', [{ apiVersion: 'nowhere.example.com/v1', kind: 'Thing', name: 't', uid: '00000000-0000-4000-8000-000000000002' }]);
    await stays(`${CM('gc')}/unknown-kind`);
  });

  it('a custom resource owns a dependent (definition created after the collector started)', async () => {
    const crd = {
      apiVersion: 'apiextensions.cluster.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-cluster-preserve-unknown-fields': true } } }],
      },
    };
    expect((await t.admin.post('/apis/apiextensions.cluster.io/v1/customresourcedefinitions', crd)).status).toBeLessThan(300);
    const widgets = '/apis/example.com/v1/namespaces/gc/widgets';
    const owner = await until('the custom resource to be served', async () => {
      const res = await t.admin.post(widgets, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' } });
      return res.status < 300 ? res.json<Obj>() : undefined;
    });
    await cm('gc', 'widget-part', [ref(owner, { blockOwnerDeletion: true })]);
    const child = await create(widgets, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w2', ownerReferences: [ref(owner)] } });
    const marked = await t.admin.delete(`${widgets}/w1?propagationPolicy=Foreground`);
    expect(marked.status).toBe(200);
    // Marked for deletion: the finalizer, and the generation bumped as upstream bumps it.
    expect(marked.json<Obj>().metadata).toMatchObject({ finalizers: ['foregroundDeletion'], generation: owner.metadata.generation + 1 });
    expect(owner.metadata.generation).toBe(1);
    await gone(`${CM('gc')}/widget-part`);
    await gone(`${widgets}/w2`);
    await gone(`${widgets}/w1`);
    expect(child.metadata.uid).toBeTruthy();
  });

  it('an owner named through a version a conversion webhook serves is read as stored (a webhook that fails does not stall the collector)', async () => {
    const crd = {
      apiVersion: 'apiextensions.cluster.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gears.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'gears', singular: 'gear', kind: 'Gear' },
        versions: ['v1', 'v2'].map((name) => ({ name, served: true, storage: name === 'v1', schema: { openAPIV3Schema: { type: 'object', 'x-cluster-preserve-unknown-fields': true } } })),
        // Nothing listens there: every conversion fails.
        conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:1/convert' } } },
      },
    };
    expect((await t.admin.post('/apis/apiextensions.cluster.io/v1/customresourcedefinitions', crd)).status).toBeLessThan(300);
    const gears = '/apis/example.com/v1/namespaces/gc/gears';
    const gear = await until('the custom resource to be served', async () => {
      const res = await t.admin.post(gears, { apiVersion: 'example.com/v1', kind: 'Gear', metadata: { name: 'g1' } });
      return res.status < 300 ? res.json<Obj>() : undefined;
    });
    const ghost = { apiVersion: 'v1', kind: 'ConfigMap', name: 'never', uid: '00000000-0000-4000-8000-000000000003' };
    await cm('gc', 'geared', [ghost, { ...ref(gear), apiVersion: 'example.com/v2' }]);
    await until('the dead reference to go', async () => {
      const refs = (await get(`${CM('gc')}/geared`)).metadata.ownerReferences as Obj[];
      return refs.length === 1 ? refs : undefined;
    }).then((refs) => expect(refs.map((r) => r.uid)).toEqual([gear.metadata.uid]));
  });

  it('a chain of three levels goes in the foreground, the deepest first', async () => {
    const a = await cm('gc', 'chain-a');
    const b = await cm('gc', 'chain-b', [ref(a, { blockOwnerDeletion: true })]);
    await cm('gc', 'chain-c', [ref(b, { blockOwnerDeletion: true })], ['test.example.com/hold']);
    expect((await t.admin.delete(`${CM('gc')}/chain-a?propagationPolicy=Foreground`)).status).toBe(200);
    // b is deleted in the foreground too (it has a dependent) and waits for c, which is held.
    await until('the middle to wait in the foreground', async () => {
      const m = (await get(`${CM('gc')}/chain-b`)).metadata;
      return m.deletionTimestamp && (m.finalizers as string[]).includes('foregroundDeletion') ? true : undefined;
    });
    await until('the last to terminate', async () => ((await get(`${CM('gc')}/chain-c`)).metadata.deletionTimestamp ? true : undefined));
    await stays(`${CM('gc')}/chain-a`);
    expect(await status(`${CM('gc')}/chain-b`)).toBe(200);
    await unhold(`${CM('gc')}/chain-c`);
    await gone(`${CM('gc')}/chain-c`);
    await gone(`${CM('gc')}/chain-b`);
    await gone(`${CM('gc')}/chain-a`);
  });

  it.each([7, 2024])('seed %i: concurrent deletes with mixed policies over a forest end as upstream decides', async (seed) => {
    const rand = rng(seed);
    const ns = `forest-${seed}`;
    expect((await t.admin.post('/api/v1/namespaces', { metadata: { name: ns } })).status).toBeLessThan(300);
    const anchor = await cm(ns, 'anchor');
    // A forest: each object has one parent (or none), some also the never-deleted anchor.
    type Item = { name: string; parent?: string; anchored: boolean; obj?: Obj };
    const items: Item[] = [];
    for (let i = 0; i < 40; i++) {
      const parent = i > 0 && rand() < 0.8 ? items[Math.floor(rand() * items.length)]!.name : undefined;
      items.push({ name: `o${i}`, parent, anchored: parent !== undefined && rand() < 0.15 });
    }
    const byName = new Map(items.map((it) => [it.name, it]));
    for (const it of items) {
      const owners = [];
      if (it.parent) owners.push(ref(byName.get(it.parent)!.obj!, { blockOwnerDeletion: rand() < 0.6 }));
      if (it.anchored) owners.push(ref(anchor));
      it.obj = await cm(ns, it.name, owners);
    }
    // Deleted objects: none an ancestor of another (what a delete of a dependent does while its
    // owner's cascade runs depends on which comes first, upstream as here).
    const ancestors = (name: string): string[] => {
      const out: string[] = [];
      for (let p = byName.get(name)!.parent; p; p = byName.get(p)!.parent) out.push(p);
      return out;
    };
    const policies = ['Background', 'Foreground', 'Orphan'] as const;
    const deleted = new Map<string, (typeof policies)[number]>();
    for (const it of [...items].sort(() => rand() - 0.5)) {
      if (deleted.size >= 8) break;
      const related = [...deleted.keys()].some((d) => ancestors(it.name).includes(d) || ancestors(d).includes(it.name));
      if (!related) deleted.set(it.name, policies[Math.floor(rand() * policies.length)]!);
    }
    const results = await Promise.all([...deleted].map(([name, policy]) => t.admin.delete(`${CM(ns)}/${name}?propagationPolicy=${policy}`)));
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    // Upstream's outcome: an object lives unless it was deleted, or its nearest deleted
    // ancestor cascades (not Orphan) with no anchored object on the way to it.
    const survives = (name: string): boolean => {
      if (deleted.has(name)) return false;
      for (let cur = byName.get(name)!; cur.parent; cur = byName.get(cur.parent)!) {
        if (cur.anchored) return true;
        const policy = deleted.get(cur.parent);
        if (policy) return policy === 'Orphan';
      }
      return true;
    };
    const want = items.filter((it) => survives(it.name)).map((it) => it.name).sort();
    const names = async () => ((await get(CM(ns))).items as Obj[]).map((o) => o.metadata.name as string).filter((n) => n !== 'anchor').sort();
    const settled = async () => {
      const list = (await get(CM(ns))).items as Obj[];
      const uids = new Set(list.map((o) => o.metadata.uid));
      // Every reference left names a live object, nothing waits in deletion.
      const clean = list.every((o) => !o.metadata.deletionTimestamp && ((o.metadata.ownerReferences ?? []) as Obj[]).every((r) => uids.has(r.uid)));
      return clean && JSON.stringify(list.map((o) => o.metadata.name).filter((n) => n !== 'anchor').sort()) === JSON.stringify(want) ? true : undefined;
    };
    await until(`the forest to settle (seed ${seed})`, settled).catch(async (e: unknown) => {
      throw new Error(`${String(e)}: want ${want.join(',')}, have ${(await names()).join(',')}, deleted ${JSON.stringify([...deleted])}`);
    });
  });

  it('a chain of three levels goes in the background', async () => {
    const a = await cm('gc', 'bchain-a');
    const b = await cm('gc', 'bchain-b', [ref(a)]);
    await cm('gc', 'bchain-c', [ref(b)]);
    expect((await t.admin.delete(`${CM('gc')}/bchain-a`)).status).toBe(200);
    await gone(`${CM('gc')}/bchain-c`);
    expect(await status(`${CM('gc')}/bchain-b`)).toBe(404);
  });
});

describe('without the garbage collector (--controllers=*,-garbagecollector)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ controllers: ['*', '-serviceaccount', '-root-ca-cert-publisher', '-serviceaccount-token', '-garbagecollector'] });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('deletes set no collector finalizer (nothing would remove it), as upstream with --enable-garbage-collector=false', async () => {
    for (const policy of ['Foreground', 'Orphan']) {
      const path = `/api/v1/namespaces/default/configmaps/no-gc-${policy.toLowerCase()}`;
      expect((await t.admin.post('/api/v1/namespaces/default/configmaps', { metadata: { name: `no-gc-${policy.toLowerCase()}` } })).status).toBeLessThan(300);
      const res = await t.admin.delete(`${path}?propagationPolicy=${policy}`);
      expect(res.status).toBe(200);
      expect(res.json<Obj>().kind).toBe('Status');
      expect((await t.admin.get(path)).status).toBe(404);
    }
  });
});

describe('garbage collector at a restart with more stored objects than it observes per turn', () => {
  let t: TestServer | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'clusterd-gc-restart-'));
  afterAll(async () => {
    await t?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('collects the dependent of a missing owner and keeps that of an owner observed turns after it', async () => {
    t = await startTestServer({ storage: 'leveldb', dataDir });
    expect((await t.admin.post('/api/v1/namespaces', { metadata: { name: 'bulk' } })).status).toBeLessThan(300);
    // Written straight to the store (thousands through the API take long on a loaded machine):
    // the owner sorts after 2,500 others, so it is observed turns after its dependent.
    const stored = (name: string, uid: string, owners?: Obj[]) =>
      encodeStored({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'bulk', uid, creationTimestamp: '2026-01-01T00:00:00Z', ...(owners ? { ownerReferences: owners } : {}) } });
    const key = (name: string) => `/registry/core/configmaps/bulk/${name}`;
    const owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'zz-owner', uid: 'owner-uid' };
    const ops = [
      { type: 'put' as const, key: key('aa-dependent'), value: stored('aa-dependent', 'dependent-uid', [owner]) },
      { type: 'put' as const, key: key('aa-orphan'), value: stored('aa-orphan', 'orphan-uid', [{ ...owner, name: 'never-stored', uid: 'missing-uid' }]) },
      ...Array.from({ length: 2500 }, (_, i) => ({ type: 'put' as const, key: key(`m-${String(i).padStart(4, '0')}`), value: stored(`m-${i}`, `filler-${i}`) })),
      { type: 'put' as const, key: key('zz-owner'), value: stored('zz-owner', 'owner-uid') },
    ];
    expect((await t.server.store.execute({ type: 'txn', compares: [], ops })).succeeded).toBe(true);
    await t.stop();
    t = await startTestServer({ storage: 'leveldb', dataDir });
    const status = async (name: string) => (await t!.admin.get(`${CM('bulk')}/${name}`)).status;
    for (let i = 0; i < 400 && (await status('aa-orphan')) !== 404; i++) await sleep(25);
    expect(await status('aa-orphan')).toBe(404);
    await sleep(600);
    expect(await status('aa-dependent')).toBe(200);
    expect(await status('zz-owner')).toBe(200);
  });
});
