// internal/watchcache/reader-suite is the conformance suite of the storage read interface
// (storage.ts): the store's own answers (StoreReader) and this replica's watch cache (Cacher,
// with and without list snapshots) must read alike, as upstream runs one storage test suite
// against etcd3 and the cacher. It checks the contract (modes, history, pagination, expiry,
// too-large versions, corrupt values), not an implementation; waiting is the Cacher's own test.
// Imports: vitest, store (types and the level store for writes), storedobject, storage, types.

import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import type { LevelRevisionStore } from '../store/revision-store.js';
import { isStoreError, type StoreErrorCode } from '../store/types.js';
import { encodeStored } from '../storedobject/stored-object.js';
import type { StorageReader } from './storage.js';
import type { CacheEntry } from './types.js';

export interface ReaderFixture {
  /** The store written to (reads go through `reader` only). */
  store: LevelRevisionStore;
  reader: StorageReader;
  close(): Promise<void>;
}

export const SUITE_PREFIX = '/registry/core/configmaps/';

export function runReaderSuite(name: string, open: () => Promise<ReaderFixture>): void {
  describe(`StorageReader contract: ${name}`, () => {
    let f: ReaderFixture;
    beforeEach(async () => {
      f = await open();
    });
    afterEach(async () => {
      await f.close();
    });

    const key = (ns: string, n: string) => `${SUITE_PREFIX}${ns}/${n}`;
    const value = (ns: string, n: string, data: string, labels: Record<string, string> = {}) =>
      encodeStored({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: n, namespace: ns, labels }, data: { v: data } });
    const put = async (ns: string, n: string, data: string, labels?: Record<string, string>) =>
      (await f.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: key(ns, n), value: value(ns, n, data, labels) }] })).revision;
    const del = async (ns: string, n: string) => (await f.store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: key(ns, n) }] })).revision;
    const parsed = (e: CacheEntry | undefined) => (e ? (JSON.parse(e.bytes.toString('utf8')) as { metadata: { resourceVersion: string }; data: { v: string } }) : undefined);
    const dataOf = (e: CacheEntry | undefined) => parsed(e)?.data.v;
    const names = (entries: CacheEntry[]) => entries.map((e) => `${e.namespace}/${e.name}`);
    const failsWith = (code: StoreErrorCode) => (e: unknown) => isStoreError(e, code);

    it('reads the latest state in every mode but exact, and the state at a revision in exact', async () => {
      const r1 = await put('a', 'x', 'v1');
      const r2 = await put('a', 'x', 'v2');
      const r3 = await put('a', 'y', 'w');
      const r4 = await del('a', 'x');
      for (const mode of [{ kind: 'consistent' }, { kind: 'any' }, { kind: 'notOlderThan', revision: r4 }] as const) {
        expect(await f.reader.get(key('a', 'x'), mode)).toBeUndefined();
        expect(await f.reader.get(key('a', 'y'), mode)).toMatchObject({ revision: r3, namespace: 'a', name: 'y' });
      }
      const atR1 = await f.reader.get(key('a', 'x'), { kind: 'exact', revision: r1 });
      expect([atR1?.revision, dataOf(atR1), parsed(atR1)?.metadata.resourceVersion]).toEqual([r1, 'v1', String(r1)]);
      expect(dataOf(await f.reader.get(key('a', 'x'), { kind: 'exact', revision: r3 }))).toBe('v2');
      expect((await f.reader.get(key('a', 'x'), { kind: 'exact', revision: r3 }))?.revision).toBe(r2);
      expect(await f.reader.get(key('a', 'y'), { kind: 'exact', revision: r2 })).toBeUndefined();
    });

    it('sees every write acknowledged before a consistent read', async () => {
      for (let i = 0; i < 5; i++) {
        const r = await put('c', `o${i}`, String(i));
        expect((await f.reader.get(key('c', `o${i}`), { kind: 'consistent' }))?.revision).toBe(r);
        const list = await f.reader.list(SUITE_PREFIX, { mode: { kind: 'consistent' } });
        expect([list.revision, list.entries.length]).toEqual([r, i + 1]);
      }
    });

    it('lists in key order with limit, continuation and remaining, the chunks at one revision', async () => {
      for (const n of ['b', 'a', 'd', 'c']) await put('p', n, n);
      await put('q', 'a', 'other');
      const nsPrefix = `${SUITE_PREFIX}p/`;
      const all = await f.reader.list(nsPrefix, { mode: { kind: 'consistent' } });
      expect([names(all.entries), all.more]).toEqual([['p/a', 'p/b', 'p/c', 'p/d'], false]);
      const page1 = await f.reader.list(nsPrefix, { mode: { kind: 'consistent' }, limit: 2, count: true });
      expect([names(page1.entries), page1.more, page1.remaining]).toEqual([['p/a', 'p/b'], true, 2]);
      await f.store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: key('p', 'c') }, { type: 'put', key: key('p', 'bb'), value: value('p', 'bb', 'new') }] });
      const page2 = await f.reader.list(nsPrefix, { mode: { kind: 'exact', revision: page1.revision }, after: key('p', 'b'), limit: 2, count: true });
      expect([page2.revision, names(page2.entries), page2.more, page2.remaining]).toEqual([page1.revision, ['p/c', 'p/d'], false, undefined]);
      const latest = await f.reader.list(nsPrefix, { mode: { kind: 'any' } });
      expect(names(latest.entries)).toEqual(['p/a', 'p/b', 'p/bb', 'p/d']);
      // A page that ends the list exactly has nothing more to report.
      const exactEnd = await f.reader.list(nsPrefix, { mode: { kind: 'consistent' }, limit: 4, count: true });
      expect([exactEnd.more, exactEnd.remaining]).toEqual([false, undefined]);
    });

    it('lists an older revision from history, paged, with what remains', async () => {
      const r = await put('h', 'a', '1');
      await put('h', 'b', '1');
      const rb = await put('h', 'c', '1');
      await put('h', 'a', '2');
      await del('h', 'b');
      const old = await f.reader.list(SUITE_PREFIX, { mode: { kind: 'exact', revision: rb }, limit: 1, count: true });
      expect([old.revision, names(old.entries), dataOf(old.entries[0]), old.more, old.remaining]).toEqual([rb, ['h/a'], '1', true, 2]);
      const rest = await f.reader.list(SUITE_PREFIX, { mode: { kind: 'exact', revision: rb }, after: old.entries[0]!.key });
      expect(names(rest.entries)).toEqual(['h/b', 'h/c']);
      expect(names((await f.reader.list(SUITE_PREFIX, { mode: { kind: 'exact', revision: r } })).entries)).toEqual(['h/a']);
    });

    it('filters within a namespace; more tells whether another match follows', async () => {
      await put('a', '1', '', { app: 'web' });
      await put('a', '2', '', { app: 'db' });
      await put('a', '3', '', { app: 'web' });
      await put('a', '4', '', { app: 'db' });
      await put('b', '1', '', { app: 'web' });
      const web = (e: CacheEntry) => e.labels.app === 'web';
      const nsPrefix = `${SUITE_PREFIX}a/`;
      const mode = { kind: 'consistent' } as const;
      const one = await f.reader.list(nsPrefix, { mode, filter: web, limit: 1 });
      expect([names(one.entries), one.more]).toEqual([['a/1'], true]);
      const two = await f.reader.list(nsPrefix, { mode, filter: web, limit: 2 });
      expect([names(two.entries), two.more]).toEqual([['a/1', 'a/3'], false]);
      const after = await f.reader.list(nsPrefix, { mode, filter: web, after: key('a', '1') });
      expect(names(after.entries)).toEqual(['a/3']);
      const everywhere = await f.reader.list(SUITE_PREFIX, { mode, filter: web });
      expect(names(everywhere.entries)).toEqual(['a/1', 'a/3', 'b/1']);
      // The namespace prefix is a key prefix of whole segments: "a/" does not match "ab".
      await put('ab', '1', '', { app: 'web' });
      expect(names((await f.reader.list(nsPrefix, { mode, filter: web })).entries)).toEqual(['a/1', 'a/3']);
    });

    it('refuses history below the compacted revision and revisions not reached yet', async () => {
      const r1 = await put('k', 'a', '1');
      await put('k', 'b', '1');
      const r3 = await put('k', 'a', '2');
      await f.store.compact(r3);
      await expect(f.reader.get(key('k', 'a'), { kind: 'exact', revision: r1 })).rejects.toSatisfy(failsWith('STORE_COMPACTED'));
      await expect(f.reader.list(SUITE_PREFIX, { mode: { kind: 'exact', revision: r1 } })).rejects.toSatisfy(failsWith('STORE_COMPACTED'));
      await expect(f.reader.list(SUITE_PREFIX, { mode: { kind: 'exact', revision: r1 }, after: key('k', 'a'), limit: 1 })).rejects.toSatisfy(
        failsWith('STORE_COMPACTED'),
      );
      expect(dataOf(await f.reader.get(key('k', 'a'), { kind: 'exact', revision: r3 }))).toBe('2');
      const future = r3 + 5;
      await expect(f.reader.get(key('k', 'a'), { kind: 'exact', revision: future })).rejects.toSatisfy(failsWith('STORE_FUTURE_REVISION'));
      await expect(f.reader.list(SUITE_PREFIX, { mode: { kind: 'exact', revision: future } })).rejects.toSatisfy(failsWith('STORE_FUTURE_REVISION'));
      const tooLarge = await f.reader.get(key('k', 'a'), { kind: 'notOlderThan', revision: future }).catch((e: unknown) => e);
      expect(tooLarge).toSatisfy(failsWith('STORE_FUTURE_REVISION'));
      expect(isStoreError(tooLarge) && tooLarge.details).toEqual({ revision: future, currentRevision: r3 });
      await expect(f.reader.list(SUITE_PREFIX, { mode: { kind: 'notOlderThan', revision: future } })).rejects.toSatisfy(failsWith('STORE_FUTURE_REVISION'));
    });

    it('returns values that do not decode as corrupt entries, for the caller to refuse', async () => {
      await put('z', 'good', 'ok');
      await f.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: key('z', 'bad'), value: Buffer.from('not json') }] });
      const bad = await f.reader.get(key('z', 'bad'), { kind: 'consistent' });
      expect(bad?.corrupt).toMatch(/unable to decode stored object/);
      // Unfiltered only: with a filter the store keeps corrupt entries while the cache judges
      // them by their (empty) labels and fields, a difference kept as it was.
      const list = await f.reader.list(SUITE_PREFIX, { mode: { kind: 'consistent' } });
      expect(list.entries.map((e) => [e.name, Boolean(e.corrupt)])).toEqual([
        ['bad', true],
        ['good', false],
      ]);
    });
  });
}
