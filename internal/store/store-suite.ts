// internal/store/store-suite is the conformance suite every RevisionStore implementation runs
// (the level store over memory and over LevelDB today; the etcd backend later). It checks the
// contract in types.ts, not an implementation. Reads of objects with the API's read modes have
// their own suite, run against the store and the watch cache alike: watchcache/reader-suite.
// Imports: vitest, types.

import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { isStoreError, type AppliedBatch, type RevisionStore } from './types.js';

const enc = (s: string): Uint8Array => Buffer.from(s, 'utf8');
const dec = (b: Uint8Array | undefined): string | undefined => (b ? Buffer.from(b).toString('utf8') : undefined);

export function runStoreSuite(name: string, open: () => Promise<RevisionStore>): void {
  describe(`RevisionStore contract: ${name}`, () => {
    let store: RevisionStore;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    const create = (key: string, value: string) =>
      store.execute({ type: 'txn', compares: [{ key, modRevision: 0 }], ops: [{ type: 'put', key, value: enc(value) }] });

    it('creates only when absent, one revision per command', async () => {
      const base = store.currentRevision();
      expect(await create('/a/1', 'x')).toEqual({ succeeded: true, revision: base + 1 });
      expect(await create('/a/1', 'y')).toEqual({ succeeded: false, revision: base + 1, failedKey: '/a/1' });
      const kv = await store.get('/a/1');
      expect(kv).toMatchObject({ createRevision: base + 1, modRevision: base + 1, version: 1 });
      expect(dec(kv?.value)).toBe('x');
    });

    it('updates only at the expected modRevision and keeps old revisions readable', async () => {
      const r1 = (await create('/a/1', 'v1')).revision;
      const stale = await store.execute({ type: 'txn', compares: [{ key: '/a/1', modRevision: r1 - 1 }], ops: [{ type: 'put', key: '/a/1', value: enc('bad') }] });
      expect(stale.succeeded).toBe(false);
      const r2 = (await store.execute({ type: 'txn', compares: [{ key: '/a/1', modRevision: r1 }], ops: [{ type: 'put', key: '/a/1', value: enc('v2') }] })).revision;
      expect(r2).toBe(r1 + 1);
      expect(await store.get('/a/1')).toMatchObject({ createRevision: r1, modRevision: r2, version: 2 });
      expect(dec((await store.get('/a/1', r1))?.value)).toBe('v1');
    });

    it('deletes with a tombstone, still readable at earlier revisions; recreate starts a new generation', async () => {
      const r1 = (await create('/a/1', 'v1')).revision;
      const r2 = (await store.execute({ type: 'txn', compares: [{ key: '/a/1', modRevision: r1 }], ops: [{ type: 'delete', key: '/a/1' }] })).revision;
      expect(r2).toBe(r1 + 1);
      expect(await store.get('/a/1')).toBeUndefined();
      expect(dec((await store.get('/a/1', r1))?.value)).toBe('v1');
      // Deleting an absent key changes nothing and does not move the revision.
      expect(await store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: '/a/1' }] })).toEqual({ succeeded: true, revision: r2 });
      const r3 = (await create('/a/1', 'again')).revision;
      expect(await store.get('/a/1')).toMatchObject({ createRevision: r3, version: 1 });
    });

    it('rejects reads at future revisions with a stable code', async () => {
      await create('/a/1', 'x');
      await expect(store.get('/a/1', store.currentRevision() + 5)).rejects.toSatisfy((e: unknown) => isStoreError(e, 'STORE_FUTURE_REVISION'));
    });

    it('ranges a prefix in key order with limit, continuation, count and a fixed revision', async () => {
      for (const k of ['b', 'a', 'd', 'c']) await create(`/p/${k}`, k);
      await create('/q/a', 'other');
      const all = await store.range('/p/');
      expect(all.kvs.map((kv) => kv.key)).toEqual(['/p/a', '/p/b', '/p/c', '/p/d']);
      const page1 = await store.range('/p/', { limit: 2, count: true });
      expect(page1.kvs.map((kv) => dec(kv.value))).toEqual(['a', 'b']);
      expect(page1).toMatchObject({ more: true, count: 4 });
      const at = page1.revision;
      await store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: '/p/c' }, { type: 'put', key: '/p/bb', value: enc('new') }] });
      const page2 = await store.range('/p/', { limit: 2, after: '/p/b', revision: at, count: true });
      expect(page2.count).toBe(2);
      expect(page2.kvs.map((kv) => kv.key)).toEqual(['/p/c', '/p/d']);
      expect(page2.more).toBe(false);
      expect((await store.range('/p/')).kvs.map((kv) => kv.key)).toEqual(['/p/a', '/p/b', '/p/bb', '/p/d']);
      // A range read once (the watch cache's priming: not kept in a read cache) reads the same.
      const once = await store.range('/p/', { limit: 2, after: '/p/b', revision: at, once: true });
      expect(once.kvs.map((kv) => [kv.key, dec(kv.value), kv.modRevision])).toEqual(page2.kvs.map((kv) => [kv.key, dec(kv.value), kv.modRevision]));
    });

    it('announces applied batches in revision order before execute resolves', async () => {
      const seen: AppliedBatch[] = [];
      const unsubscribe = store.subscribe((b) => seen.push(b));
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => create(`/c/${i}`, String(i))));
      unsubscribe();
      const revisions = results.map((r) => r.revision).sort((a, b) => a - b);
      expect(new Set(revisions).size).toBe(50);
      expect(revisions[49]! - revisions[0]!).toBe(49);
      const events = seen.flatMap((b) => b.events);
      expect(events.map((e) => e.kv.modRevision)).toEqual(revisions);
      expect(seen.every((b, i) => i === 0 || b.revision > seen[i - 1]!.revision)).toBe(true);
    });

    it('replays events after a revision with previous values', async () => {
      const r1 = (await create('/e/1', 'v1')).revision;
      await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/e/1', value: enc('v2') }] });
      await store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: '/e/1' }] });
      await create('/e/2', 'w');
      const events = await store.eventsSince('/e/', r1);
      expect(events.map((e) => [e.type, e.kv.key, dec(e.kv.value), dec(e.prevKv?.value)])).toEqual([
        ['put', '/e/1', 'v2', 'v1'],
        ['delete', '/e/1', '', 'v2'],
        ['put', '/e/2', 'w', undefined],
      ]);
    });
  });
}
