import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { LevelRevisionStore } from '../store/revision-store.js';
import { isStoreError, StoreError, type RangeOptions } from '../store/types.js';
import { encodeStored } from '../storedobject/stored-object.js';
import { Cacher, type CacherOptions } from './cacher.js';
import type { StoreReads } from './store-reader.js';
import type { CacheEntry } from './types.js';
import { WatchCache } from './watch-cache.js';

const PREFIX = '/registry/core/configmaps/';
const keyOf = (name: string) => `${PREFIX}ns/${name}`;

/**
 * The store as a replica sees it, with the consistent revision under the test's control (a
 * follower's ReadIndex may name a revision this replica has not applied yet) and its ranges
 * counted (reads that reach the store's history).
 */
class ReplicaView implements StoreReads {
  consistent: (() => Promise<number>) | undefined;
  ranges = 0;
  constructor(private readonly store: LevelRevisionStore) {}
  currentRevision(): number {
    return this.store.currentRevision();
  }
  consistentRevision(): Promise<number> {
    return this.consistent ? this.consistent() : this.store.consistentRevision();
  }
  compactedRevision(): number {
    return this.store.compactedRevision();
  }
  get(key: string, revision?: number) {
    return this.store.get(key, revision);
  }
  range(prefix: string, options?: RangeOptions) {
    this.ranges++;
    return this.store.range(prefix, options);
  }
}

describe('Cacher', () => {
  let store: LevelRevisionStore;
  let view: ReplicaView;
  let cache: WatchCache;
  let clock: number;
  const open = (options: Partial<CacherOptions> = {}) => new Cacher(view, cache, { tooLargeWaitMs: 60_000, listSnapshotTtlMs: 0, now: () => clock, ...options });
  const put = async (name: string, v = name) =>
    (await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: keyOf(name), value: encodeStored({ kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, data: { v } }) }] })).revision;
  const data = (e: CacheEntry | undefined) => (e ? (JSON.parse(e.bytes.toString('utf8')) as { data: { v: string } }).data.v : undefined);
  const names = (entries: CacheEntry[]) => entries.map((e) => e.name);

  beforeEach(async () => {
    store = await LevelRevisionStore.open({ storage: 'memory' });
    view = new ReplicaView(store);
    cache = new WatchCache(store, { root: '/registry/', specFor: () => undefined });
    clock = 0;
  });
  afterEach(async () => {
    cache.stop();
    await store.close();
  });

  it('serves no read before the cache has primed, then serves every mode', async () => {
    await put('a');
    const cacher = open();
    const early = cacher.get(keyOf('a'), { kind: 'any' });
    const watching = cacher.watch({ prefix: PREFIX, filter: () => true, fromRevision: 0, consistent: false });
    await cache.start();
    expect(data(await early)).toBe('a');
    expect(names((await watching).drain().flatMap((o) => ('entry' in o ? [o.entry] : [])))).toEqual(['a']);
  });

  it('waits for a version it has not reached and answers once it arrives', async () => {
    await cache.start();
    const r = await put('a', 'old');
    const cacher = open();
    const later = cacher.get(keyOf('a'), { kind: 'notOlderThan', revision: r + 1 });
    const listed = cacher.list(PREFIX, { mode: { kind: 'notOlderThan', revision: r + 1 } });
    await put('a', 'new');
    expect(data(await later)).toBe('new');
    expect((await listed).revision).toBe(r + 1);
    expect(await cacher.waitUntilFresh({ kind: 'notOlderThan', revision: r })).toBe(r + 1);
  });

  it('is too large after the wait, with the revisions of the ResourceVersionTooLarge cause', async () => {
    await cache.start();
    const r = await put('a');
    const err = await open({ tooLargeWaitMs: 5 })
      .get(keyOf('a'), { kind: 'notOlderThan', revision: r + 2 })
      .catch((e: unknown) => e);
    expect(isStoreError(err, 'STORE_FUTURE_REVISION') && err.details).toEqual({ revision: r + 2, currentRevision: r });
  });

  it('serves a consistent read only once the cache holds the revision the store confirmed', async () => {
    await cache.start();
    const r = await put('a', 'before');
    // A follower: the leader has committed r + 1, this replica has not applied it yet.
    view.consistent = () => Promise.resolve(r + 1);
    const cacher = open();
    const read = cacher.get(keyOf('a'), { kind: 'consistent' });
    const list = cacher.list(PREFIX, { mode: { kind: 'consistent' } });
    const watch = cacher.watch({ prefix: PREFIX, filter: () => true, fromRevision: 0, consistent: true });
    await put('a', 'after');
    expect(data(await read)).toBe('after');
    expect((await list).revision).toBe(r + 1);
    expect((await watch).drain().map((o) => ('entry' in o ? data(o.entry) : o.type))).toEqual(['after']);
    // Reads that need no consistency do not ask.
    view.consistent = () => Promise.reject(new Error('not asked'));
    expect(data(await cacher.get(keyOf('a'), { kind: 'any' }))).toBe('after');
  });

  it('passes on a consistent revision that cannot be confirmed', async () => {
    await cache.start();
    view.consistent = () => Promise.reject(new StoreError('STORE_READ_UNAVAILABLE', 'no leader', { retryAfterSeconds: 1 }));
    await expect(open().get(keyOf('a'), { kind: 'consistent' })).rejects.toSatisfy((e: unknown) => isStoreError(e, 'STORE_READ_UNAVAILABLE'));
    await expect(open().list(PREFIX, { mode: { kind: 'consistent' } })).rejects.toSatisfy((e: unknown) => isStoreError(e, 'STORE_READ_UNAVAILABLE'));
  });

  it('reads history from the store only for revisions other than its own', async () => {
    await cache.start();
    const r1 = await put('a', '1');
    const r2 = await put('a', '2');
    const cacher = open();
    view.ranges = 0;
    expect(names((await cacher.list(PREFIX, { mode: { kind: 'exact', revision: r2 } })).entries)).toEqual(['a']);
    expect(view.ranges).toBe(0);
    expect(data((await cacher.list(PREFIX, { mode: { kind: 'exact', revision: r1 } })).entries[0])).toBe('1');
    expect(view.ranges).toBeGreaterThan(0);
  });

  it('serves the chunks of a paginated list from its snapshot until it expires or is compacted', async () => {
    await cache.start();
    for (const n of ['a', 'b', 'c']) await put(n);
    const cacher = open({ listSnapshotTtlMs: 1000 });
    const page1 = await cacher.list(PREFIX, { mode: { kind: 'consistent' }, limit: 1, count: true });
    expect([names(page1.entries), page1.remaining]).toEqual([['a'], 2]);
    await put('b', 'changed');
    await put('bb');
    view.ranges = 0;
    const page2 = await cacher.list(PREFIX, { mode: { kind: 'exact', revision: page1.revision }, after: keyOf('a'), limit: 1, count: true });
    expect([names(page2.entries), data(page2.entries[0]), page2.more, page2.remaining, view.ranges]).toEqual([['b'], 'b', true, 1, 0]);
    // Expired: the same chunk comes from the store's history, alike.
    clock = 1000;
    const fromStore = await cacher.list(PREFIX, { mode: { kind: 'exact', revision: page1.revision }, after: keyOf('a'), limit: 1, count: true });
    expect([names(fromStore.entries), data(fromStore.entries[0]), fromStore.remaining]).toEqual([['b'], 'b', 1]);
    expect(view.ranges).toBeGreaterThan(0);
    // A kept snapshot does not outlive the retention window.
    clock = 0;
    const again = await cacher.list(PREFIX, { mode: { kind: 'consistent' }, limit: 1 });
    await put('d');
    await store.compact(again.revision + 1);
    await expect(cacher.list(PREFIX, { mode: { kind: 'exact', revision: again.revision }, after: keyOf('a') })).rejects.toSatisfy((e: unknown) =>
      isStoreError(e, 'STORE_COMPACTED'),
    );
  });

  it('peeks at what it holds without waiting', async () => {
    await cache.start();
    const r = await put('a');
    view.consistent = () => new Promise<number>(() => {});
    const cacher = open();
    expect(cacher.peek(keyOf('a'))?.revision).toBe(r);
    expect(cacher.peek(keyOf('none'))).toBeUndefined();
    expect(cacher.peek('/elsewhere')).toBeUndefined();
  });
});
