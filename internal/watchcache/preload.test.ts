// Tests of the start's single read (WatchCache.preload fed by the store's open scan): the cache
// ends with exactly the entries a range-primed cache holds, the start reads no stored value a
// second time, and a store changed between its open and the cache's start loads by a range.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LevelRevisionStore } from '../store/revision-store.js';
import type { OpenScanConsumer } from '../store/types.js';
import { encodeStored } from '../storedobject/stored-object.js';
import type { CacheEntry, ResourceSpec, WatchOutput } from './types.js';
import { WatchCache } from './watch-cache.js';

const PODS = '/registry/core/pods/';
const MAPS = '/registry/core/configmaps/';
const spec: ResourceSpec = {
  attributes(obj) {
    const meta = obj.metadata as { name: string; namespace: string; labels?: Record<string, string> };
    return { labels: meta.labels ?? {}, fields: { 'metadata.name': meta.name, 'metadata.namespace': meta.namespace, 'spec.nodeName': String((obj.spec as { nodeName?: string } | undefined)?.nodeName ?? '') } };
  },
  stamp: 'v1',
};
const options = { root: '/registry/', specFor: (p: string) => (p === PODS ? spec : undefined) };
const obj = (ns: string, name: string, labels: Record<string, string>, nodeName = '') => ({ kind: 'Pod', apiVersion: 'v1', metadata: { name, namespace: ns, labels }, spec: { nodeName } });

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A data directory with creations, updates, deletions, a re-creation, a compaction, values with and without attributes, a corrupt value and keys outside the root. */
async function history(): Promise<string> {
  const path = join(mkdtempSync(join(tmpdir(), 'clusterd-preload-')), 'db');
  dirs.push(join(path, '..'));
  const store = await LevelRevisionStore.open({ storage: 'leveldb', path });
  const cache = new WatchCache(store, options);
  const put = async (key: string, o: Record<string, unknown> | Uint8Array, described = true) => {
    const value = o instanceof Uint8Array ? o : encodeStored(o);
    await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key, value }] }, described && !(o instanceof Uint8Array) ? new Map([[key, o]]) : undefined);
  };
  const del = (key: string) => store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key }] });
  await put('/other/x', Buffer.from('not an object'));
  for (let i = 0; i < 40; i++) await put(`${PODS}ns-${i % 3}/p-${i}`, obj(`ns-${i % 3}`, `p-${i}`, { app: `a${i % 4}` }, `node-${i % 5}`), i % 7 !== 0);
  // Without attributes in the record (written before the cache described writes).
  await put(`${MAPS}a/plain`, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'plain', namespace: 'a' }, data: { k: 'v' } }, false);
  for (let i = 0; i < 40; i += 3) await put(`${PODS}ns-${i % 3}/p-${i}`, obj(`ns-${i % 3}`, `p-${i}`, { app: 'changed', v: String(i) }, 'node-x'));
  for (let i = 1; i < 40; i += 5) await del(`${PODS}ns-${i % 3}/p-${i}`);
  await store.compact(store.currentRevision() - 10);
  await put(`${PODS}ns-1/p-1`, obj('ns-1', 'p-1', { back: 'yes' }));
  await del(`${PODS}ns-0/p-0`);
  await put(`${MAPS}b/broken`, Buffer.from('{not json'));
  await put('/registry/x', Buffer.from('{}'));
  await store.close();
  return path;
}

const view = (e: CacheEntry) => ({ ...e, bytes: e.bytes.toString('utf8'), labels: { ...e.labels }, fields: { ...e.fields } });
const summary = (outs: WatchOutput[]) => outs.map((o) => ('entry' in o ? `${o.type} ${o.entry.key}@${o.entry.revision}` : o.type));

/** Opens the store at `path` and starts a cache on it, through the open's scan or not; counts the store's reads after the open. */
async function start(path: string, preload: boolean, meanwhile?: (store: LevelRevisionStore) => Promise<unknown>) {
  const cache = new WatchCache(undefined, options);
  let values = 0;
  let latest: OpenScanConsumer | undefined;
  if (preload) {
    const consumer = cache.preload();
    latest = { value: (kv) => (values++, consumer.value(kv)), done: (r) => consumer.done(r) };
  }
  const store = await LevelRevisionStore.open({ storage: 'leveldb', path, ...(latest ? { latest } : {}) });
  store.describeWith((key, o) => cache.attributeBytes(key, o));
  await meanwhile?.(store);
  const reads: string[] = [];
  store.observeRequests((operation, key) => reads.push(`${operation} ${key}`));
  cache.attach(store);
  await cache.start();
  const held = (prefix: string) => cache.resource(prefix).list().entries.map(view);
  return { cache, store, reads, values, held };
}

describe('a start through the store open scan', () => {
  it('holds exactly the entries a range-primed cache holds and reads no stored value again', async () => {
    const path = await history();
    const ranged = await start(path, false);
    const want = { revision: ranged.cache.revision, stats: ranged.cache.stats(), pods: ranged.held(PODS), maps: ranged.held(MAPS), x: ranged.held('/registry/x/') };
    expect(ranged.reads.length).toBeGreaterThan(0);
    ranged.cache.stop();
    await ranged.store.close();

    const scanned = await start(path, true);
    expect(scanned.reads).toEqual([]);
    // Each live key of the store (those outside the root included) was handed over once.
    expect(scanned.values).toBe(want.pods.length + want.maps.length + 1 /* /other/x */ + 1 /* /registry/x */);
    expect(want.pods.length).toBeGreaterThan(20);
    expect(want.maps.map((e) => e.key)).toEqual([`${MAPS}a/plain`, `${MAPS}b/broken`]);
    expect(want.maps[1]!.corrupt).toMatch(/unable to decode/);
    expect(scanned.cache.revision).toBe(want.revision);
    expect(scanned.cache.stats()).toEqual(want.stats);
    expect(scanned.held(PODS)).toEqual(want.pods);
    expect(scanned.held(MAPS)).toEqual(want.maps);
    expect(scanned.held('/registry/x/')).toEqual(want.x);
    // Selectors, pages and watches from the start revision work on the loaded entries.
    const rc = scanned.cache.resource(PODS);
    expect(rc.list({ filter: (e) => e.labels.app === 'changed' }).entries.map((e) => e.key)).toEqual(want.pods.filter((e) => e.labels.app === 'changed').map((e) => e.key));
    const w = scanned.cache.watch({ prefix: PODS, filter: () => true, fromRevision: scanned.cache.revision });
    await scanned.store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: `${PODS}ns-2/p-2` }] });
    await scanned.cache.waitForRevision(scanned.store.currentRevision(), 5000);
    expect(summary(w.drain())).toEqual([`DELETED ${PODS}ns-2/p-2@${scanned.store.currentRevision()}`]);
    scanned.cache.stop();
    await scanned.store.close();
  });

  it('hands over every live key once when the scan reads its records in several batches', async () => {
    // More records than one read of the scan gathers (1,000), a key's revisions on both sides
    // of a read's end among them.
    const path = join(mkdtempSync(join(tmpdir(), 'clusterd-preload-')), 'db');
    dirs.push(join(path, '..'));
    const store = await LevelRevisionStore.open({ storage: 'leveldb', path, sync: false });
    const keyOf = (i: number) => `${PODS}ns/p-${String(i).padStart(4, '0')}`;
    const write = async (ids: number[], labels: (i: number) => Record<string, string>) => {
      for (let at = 0; at < ids.length; at += 100) {
        const chunk = ids.slice(at, at + 100);
        const objs = new Map(chunk.map((i) => [keyOf(i), obj('ns', `p-${String(i).padStart(4, '0')}`, labels(i))]));
        await store.execute({ type: 'txn', compares: [], ops: chunk.map((i) => ({ type: 'put' as const, key: keyOf(i), value: encodeStored(objs.get(keyOf(i))!) })) }, objs);
      }
    };
    const all = Array.from({ length: 1200 }, (_, i) => i);
    await write(all, () => ({ v: '1' }));
    await write(all.filter((i) => i % 3 === 0), () => ({ v: '2' }));
    await write(all.filter((i) => i % 6 === 0), () => ({ v: '3' }));
    for (const i of all.filter((i) => i % 5 === 0)) await store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: keyOf(i) }] });
    await store.close();

    const ranged = await start(path, false);
    const want = ranged.held(PODS);
    expect(want.length).toBe(960);
    expect(want.filter((e) => e.labels.v === '3').length).toBe(160);
    ranged.cache.stop();
    await ranged.store.close();
    const scanned = await start(path, true);
    expect(scanned.reads).toEqual([]);
    expect(scanned.values).toBe(960);
    expect(scanned.held(PODS)).toEqual(want);
    // The key index has every key's history: an old revision of a changed key is still there.
    const changed = await scanned.store.range(keyOf(6), { revision: 12 });
    expect(changed.kvs.map((kv) => kv.modRevision)).toEqual([1]);
    scanned.cache.stop();
    await scanned.store.close();
  });

  it('loads by a range when the store changed between its open and the start', async () => {
    const path = await history();
    const late = obj('ns-9', 'late', { app: 'late' });
    const scanned = await start(path, true, (store) =>
      store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: `${PODS}ns-9/late`, value: encodeStored(late) }] }, new Map([[`${PODS}ns-9/late`, late]])),
    );
    expect(scanned.reads.filter((r) => r.startsWith('list')).length).toBeGreaterThan(0);
    expect(scanned.held(PODS).some((e) => e.key === `${PODS}ns-9/late`)).toBe(true);
    const revision = scanned.cache.revision;
    scanned.cache.stop();
    await scanned.store.close();
    const ranged = await start(path, false);
    expect(ranged.cache.revision).toBe(revision);
    expect(scanned.held(PODS)).toEqual(ranged.held(PODS));
    ranged.cache.stop();
    await ranged.store.close();
  });
});
