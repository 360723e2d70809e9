import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { errors } from '../apierrors/status.js';
import { createLogger, silentLogger } from '../log/logger.js';
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

  it('retries a write that lost a race (409) soon and without a warning; a key that keeps conflicting, or fails otherwise, is warned of', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reconciler-'));
    const store = await LevelRevisionStore.open({ storage: 'leveldb', path: dir });
    const cache = new WatchCache(store, { root: '/registry/', specFor: () => undefined });
    await cache.start();
    const lines: Array<{ level: string; msg: string; key?: string }> = [];
    const log = createLogger('debug', (l) => void lines.push(JSON.parse(l) as { level: string; msg: string; key?: string }));
    // 'racy' conflicts twice then succeeds; 'stuck' always conflicts; 'broken' fails otherwise.
    const calls = new Map<string, number>();
    const race = () => errors.conflict({ group: 'apiregistration.k8s.io', name: 'apiservices' }, 'v1.', 'the object has been modified; please apply your changes to the latest version and try again');
    const r = new Reconciler(
      {
        name: 'test',
        sources: [],
        retryMs: 60_000,
        reconcile: async (k) => {
          const n = (calls.get(k) ?? 0) + 1;
          calls.set(k, n);
          if (k === 'racy' && n <= 2) throw race();
          if (k === 'stuck') throw race();
          if (k === 'broken') throw new Error('no such thing');
        },
      },
      cache,
      log,
    );
    cleanups.push(async () => {
      r.stop();
      cache.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    r.start();
    for (const k of ['racy', 'stuck', 'broken']) r.enqueue(k);
    // retryMs is a minute: only the conflict retry can bring these calls about within the wait.
    for (let i = 0; i < 500 && ((calls.get('racy') ?? 0) < 3 || (calls.get('stuck') ?? 0) < 5); i++) await new Promise((res) => setTimeout(res, 10));
    expect(calls.get('racy')).toBe(3);
    expect(calls.get('stuck')).toBeGreaterThanOrEqual(5);
    expect(calls.get('broken')).toBe(1);
    const warned = (key: string) => lines.filter((l) => l.level === 'warn' && l.key === key).length;
    expect(warned('racy')).toBe(0);
    expect(lines.filter((l) => l.level === 'debug' && l.key === 'racy')).toHaveLength(2);
    expect(warned('stuck')).toBe(1);
    expect(warned('broken')).toBe(1);
  });
});
