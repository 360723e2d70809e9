import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { LevelRevisionStore } from '../store/revision-store.js';
import { StoreError } from '../store/types.js';
import { encodeStored } from '../storedobject/stored-object.js';
import { WatchCache } from './watch-cache.js';
import type { CacheEntry, WatchOutput } from './types.js';
import type { CacheWatcher } from './watcher.js';

const PREFIX = '/registry/core/configmaps/';
const keyOf = (ns: string, name: string) => `${PREFIX}${ns}/${name}`;
const cm = (ns: string, name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}) =>
  encodeStored({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name, namespace: ns, labels }, data });

describe('WatchCache', () => {
  let store: LevelRevisionStore;
  let cache: WatchCache;
  const put = (ns: string, name: string, labels?: Record<string, string>, data?: Record<string, string>) =>
    store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: keyOf(ns, name), value: cm(ns, name, labels, data) }] });
  const del = (ns: string, name: string) => store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: keyOf(ns, name) }] });
  const parse = (e: CacheEntry) => JSON.parse(e.bytes.toString()) as { metadata: { name: string; resourceVersion: string; labels?: Record<string, string> } };
  const summarize = (outs: WatchOutput[]) =>
    outs.map((o) => ('entry' in o ? `${o.type} ${o.entry.name}@${parse(o.entry).metadata.resourceVersion}` : o.type === 'BOOKMARK' ? `BOOKMARK@${o.revision}` : `ERROR ${o.code}`));
  const take = (w: CacheWatcher) => summarize(w.drain());

  beforeEach(async () => {
    store = await LevelRevisionStore.open({ storage: 'memory' });
    cache = new WatchCache(store, { root: '/registry/', specFor: () => undefined, ringCapacity: 4 });
  });
  afterEach(async () => {
    cache.stop();
    await store.close();
  });

  it('primes again when a compaction applied while it pages through the store removes the revision it read at', async () => {
    for (let i = 0; i < 2500; i++) await put('a', `cm-${String(i).padStart(4, '0')}`);
    const range = store.range.bind(store);
    let calls = 0;
    // A replica catching up applies the log's compactions while the cache loads.
    store.range = async (prefix, options) => {
      if (++calls === 2) {
        await put('b', 'late');
        await store.compact(store.currentRevision());
      }
      return range(prefix, options);
    };
    await cache.start();
    expect(cache.ready).toBe(true);
    expect(cache.revision).toBe(store.currentRevision());
    expect(cache.resource(PREFIX).list().entries).toHaveLength(2501);
    expect(calls).toBeGreaterThan(3);
  });

  it('primes from the store, then follows applied batches; bytes carry the resource version', async () => {
    await put('a', 'one');
    await put('b', 'two');
    await cache.start();
    expect(cache.revision).toBe(2);
    await put('a', 'three');
    const rc = cache.resource(PREFIX);
    expect(rc.list().entries.map((e) => e.name)).toEqual(['one', 'three', 'two']);
    expect(rc.list({ keyPrefix: `${PREFIX}a/` }).entries.map((e) => e.name)).toEqual(['one', 'three']);
    expect(parse(rc.get(keyOf('a', 'three'))!).metadata.resourceVersion).toBe('3');
    expect(cache.revision).toBe(3);
  });

  it('pages in key order and reports what remains', async () => {
    for (const n of ['e', 'a', 'c', 'b', 'd']) await put('ns', n);
    await cache.start();
    const rc = cache.resource(PREFIX);
    const p1 = rc.list({ limit: 2 });
    expect([p1.entries.map((e) => e.name), p1.more, p1.remaining]).toEqual([['a', 'b'], true, 3]);
    const p2 = rc.list({ limit: 2, after: p1.entries[1]!.key, filter: (e) => e.name !== 'd' });
    expect([p2.entries.map((e) => e.name), p2.more]).toEqual([['c', 'e'], false]);
  });

  it('starts a watch with the current state, then delivers changes in order', async () => {
    await put('a', 'x');
    await cache.start();
    const w = cache.watch({ prefix: PREFIX, filter: () => true, fromRevision: 0 });
    await put('a', 'x', {}, { k: 'v' });
    await put('a', 'y');
    await del('a', 'x');
    expect(take(w)).toEqual(['ADDED x@1', 'MODIFIED x@2', 'ADDED y@3', 'DELETED x@4']);
    w.bookmark();
    expect(take(w)).toEqual(['BOOKMARK@4']);
  });

  it('counts the watchers open over every resource', async () => {
    await cache.start();
    expect(cache.watcherCount()).toBe(0);
    const a = cache.watch({ prefix: PREFIX, filter: () => true, fromRevision: 0 });
    const b = cache.watch({ prefix: PREFIX, filter: () => true, fromRevision: 0 });
    const other = cache.watch({ prefix: '/registry/secrets/', filter: () => true, fromRevision: 0 });
    expect(cache.watcherCount()).toBe(3);
    a.close('consumer');
    expect(cache.watcherCount()).toBe(2);
    b.close('consumer');
    other.close('consumer');
    expect(cache.watcherCount()).toBe(0);
  });

  it('replays from the ring, from the store beyond it, and fails with 410 once compacted', async () => {
    await cache.start();
    for (let i = 1; i <= 8; i++) await put('n', `o${i}`); // revisions 1..8, ring holds 5..8
    const fromRing = cache.watch({ prefix: PREFIX, filter: () => true, fromRevision: 6 });
    expect(take(fromRing)).toEqual(['ADDED o7@7', 'ADDED o8@8']);
    const fromStore = cache.watch({ prefix: PREFIX, filter: () => true, fromRevision: 2 });
    await put('n', 'o9'); // arrives while the store replay loads
    await fromStore.ready();
    await new Promise((r) => setImmediate(r));
    expect(take(fromStore)).toEqual(['ADDED o3@3', 'ADDED o4@4', 'ADDED o5@5', 'ADDED o6@6', 'ADDED o7@7', 'ADDED o8@8', 'ADDED o9@9']);
    await store.compact(5);
    const tooOld = cache.watch({ prefix: PREFIX, filter: () => true, fromRevision: 3 });
    expect(take(tooOld)).toEqual(['ERROR 410']);
    expect(tooOld.closed).toBe('error');
  });

  it('turns selection changes into ADDED and DELETED for a filtered watcher', async () => {
    await cache.start();
    const w = cache.watch({ prefix: PREFIX, filter: (e) => e.labels.app === 'web', fromRevision: 0 });
    await put('a', 'p', { app: 'db' });
    await put('a', 'p', { app: 'web' });
    await put('a', 'p', { app: 'web', tier: 'x' });
    await put('a', 'p', { app: 'db' });
    await del('a', 'p');
    const outs = w.drain();
    expect(summarize(outs)).toEqual(['ADDED p@2', 'MODIFIED p@3', 'DELETED p@4']);
    // Leaving the selection: the last state that matched, at the revision of the change (upstream's cacheWatcher).
    expect(parse((outs[2] as { entry: CacheEntry }).entry).metadata.labels).toEqual({ app: 'web', tier: 'x' });
  });

  it('scopes every event of a namespaced watch to its key prefix: live, from the ring and from the store', async () => {
    await cache.start();
    const scope = { prefix: PREFIX, filter: () => true, keyPrefix: `${PREFIX}a/` };
    const live = cache.watch({ ...scope, fromRevision: 0 });
    await put('a', 'in1'); // 1
    await put('b', 'out1'); // 2
    await put('ab', 'out2'); // 3: a namespace whose name starts with the watched one
    await put('a', 'in2'); // 4
    await del('b', 'out1'); // 5
    await put('b', 'out3'); // 6
    expect(take(live)).toEqual(['ADDED in1@1', 'ADDED in2@4']);
    const fromRing = cache.watch({ ...scope, fromRevision: 3 }); // ring holds 3..6
    expect(take(fromRing)).toEqual(['ADDED in2@4']);
    const fromStore = cache.watch({ ...scope, fromRevision: 1 }); // older than the ring
    await fromStore.ready();
    expect(take(fromStore)).toEqual(['ADDED in2@4']);
    const initial = cache.watch({ ...scope, fromRevision: 0 });
    expect(take(initial)).toEqual(['ADDED in1@1', 'ADDED in2@4']);
  });

  it('closes a watcher that falls too far behind without stalling writers or other watchers', async () => {
    cache = new WatchCache(store, { root: '/registry/', specFor: () => undefined, watcherCapacity: 3 });
    await cache.start();
    const slow = cache.watch({ prefix: PREFIX, filter: () => true, fromRevision: 0 });
    const fast = cache.watch({ prefix: PREFIX, filter: () => true, fromRevision: 0 });
    const seen: string[] = [];
    const reader = (async () => {
      for await (const out of fast) if ('entry' in out) seen.push(out.entry.name);
    })();
    // The fast reader drains in every delivery round (rounds may be spaced out while the loop
    // is busy); the slow one never reads.
    for (let i = 0; i < 10; i++) {
      await put('n', `o${i}`);
      await vi.waitFor(() => expect(fast.pending).toBe(0), { interval: 1 });
    }
    expect(slow.closed).toBe('overflow');
    expect(fast.closed).toBeUndefined();
    fast.close();
    await reader;
    expect(seen).toHaveLength(10);
  });

  it('sends no bookmark for a watch from a version not reached yet until the cache passes it', async () => {
    await cache.start();
    await put('a', 'x'); // 1
    const w = cache.watch({ prefix: PREFIX, filter: () => true, fromRevision: 3 });
    expect(w.bookmark()).toBe(false);
    await put('a', 'y'); // 2
    expect(w.bookmark()).toBe(false);
    await put('a', 'z'); // 3
    w.bookmark();
    await put('a', 'w'); // 4
    w.bookmark();
    expect(take(w)).toEqual(['BOOKMARK@3', 'ADDED w@4', 'BOOKMARK@4']);
  });

  it('bookmarks the latest revision although the changes since were of other namespaces, other selections and other resources', async () => {
    await cache.start();
    await put('a', 'x', { app: 'web' }); // 1
    const selected = Object.assign((e: CacheEntry) => e.labels.app === 'web', { index: { kind: 'label', key: 'app', value: 'web' } as const });
    const w = cache.watch({ prefix: PREFIX, keyPrefix: `${PREFIX}a/`, filter: selected, fromRevision: 1 });
    await put('b', 'y', { app: 'web' }); // 2: another namespace
    await put('a', 'z', { app: 'db' }); // 3: another label value
    await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/registry/core/secrets/a/s', value: cm('a', 's') }] }); // 4: another resource
    expect(w.revision).toBe(4);
    w.bookmark();
    await put('a', 'v', { app: 'web' }); // 5
    w.bookmark();
    expect(take(w)).toEqual(['BOOKMARK@4', 'ADDED v@5', 'BOOKMARK@5']);
  });

  it('does not keep a watcher whose initial state overflowed its queue', async () => {
    const small = new WatchCache(store, { root: '/registry/', specFor: () => undefined, watcherCapacity: 2 });
    for (const name of ['x', 'y', 'z']) await put('a', name);
    await small.start();
    const w = small.watch({ prefix: PREFIX, filter: () => true, fromRevision: 0 });
    expect(w.closed).toBe('overflow');
    expect(small.stats().find((s) => s.prefix === PREFIX)?.watchers).toBe(0);
    small.stop();
  });

  it('while it reloads after a snapshot is installed, a wait that times out says the storage is (re)initializing, not that the version is too large', async () => {
    await put('a', 'before');
    await cache.start();
    const w = cache.watch({ prefix: PREFIX, filter: () => true, fromRevision: store.currentRevision() });
    // Another replica's image, newer than this store.
    const other = await LevelRevisionStore.open({ storage: 'memory' });
    for (let i = 0; i < 3; i++) await other.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: keyOf('a', `n${i}`), value: cm('a', `n${i}`) }] });
    const image = Buffer.from(await other.captureImage());
    await other.close();
    // The local replicator records no log index; a Raft replica's image carries its index.
    image.writeDoubleBE(7, 'clusterd-store-image/1\n'.length);
    // The reload's first page is held until released.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const range = store.range.bind(store);
    store.range = async (prefix, options) => {
      await held;
      return range(prefix, options);
    };
    await store.restoreImage(image);
    expect(cache.ready).toBe(false);
    expect(w.closed).toBe('cache-stopped');
    const err = await cache.waitForRevision(0, 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('STORE_READ_UNAVAILABLE');
    expect((err as StoreError).message).toMatch(/storage is \(re\)initializing/);
    expect((err as StoreError).details.retryAfterSeconds).toBe(1);
    // Once loaded: the image's objects, and waits answered.
    const waiting = cache.waitForRevision(0, 5_000);
    release();
    await expect(waiting).resolves.toBeUndefined();
    expect(cache.resource(PREFIX).list().entries.map((e) => e.name).sort()).toEqual(['n0', 'n1', 'n2']);
    await expect(cache.waitForRevision(99, 10)).rejects.toThrow(/Too large resource version/);
  });

  it('waits for a revision and times out on one that never comes', async () => {
    await cache.start();
    const waiting = cache.waitForRevision(1, 5_000);
    await put('a', 'x');
    await expect(waiting).resolves.toBeUndefined();
    await expect(cache.waitForRevision(99, 10)).rejects.toThrow(/Too large resource version/);
  });
});
