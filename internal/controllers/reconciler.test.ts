import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../log/logger.js';
import { LevelRevisionStore } from '../store/revision-store.js';
import { encodeStored } from '../storedobject/stored-object.js';
import { WatchCache } from '../watchcache/watch-cache.js';
import { Reconciler } from './reconciler.js';

const PREFIX = '/registry/core/configmaps/';

describe('Reconciler', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('takes a prefix holding more objects than a watcher may queue, each once, and keeps following changes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reconciler-'));
    const store = await LevelRevisionStore.open({ storage: 'leveldb', path: dir });
    const put = (name: string) => store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: `${PREFIX}ns/${name}`, value: encodeStored({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' } }) }] });
    for (let i = 0; i < 50; i++) await put(`cm${i}`);
    // A bound of 5 queued events: a watch from revision 0 of these 50 objects would overflow at once.
    const cache = new WatchCache(store, { root: '/registry/', specFor: () => undefined, watcherCapacity: 5 });
    await cache.start();
    const seen = new Map<string, number>();
    const r = new Reconciler({ name: 'test', sources: [{ prefix: PREFIX, keys: (_t, e) => [e.name] }], reconcile: async (k) => void seen.set(k, (seen.get(k) ?? 0) + 1) }, cache, silentLogger);
    cleanups.push(async () => {
      r.stop();
      cache.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    r.start();
    for (let i = 0; i < 100 && seen.size < 50; i++) await new Promise((res) => setTimeout(res, 10));
    expect(seen.size).toBe(50);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    await put('late');
    for (let i = 0; i < 100 && !seen.has('late'); i++) await new Promise((res) => setTimeout(res, 10));
    expect(seen.get('late')).toBe(1);
  });
});
