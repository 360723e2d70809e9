// internal/watchcache/memory-cache-fixture owns the tests' fixture of a watch cache over a fresh
// memory store, opened before and closed after each test of the describe block that calls it
// (the cache is not started: tests start it when their scenario needs it).
// Imports: vitest, store (the level store), watch-cache.

import { afterEach, beforeEach } from 'vitest';
import { LevelRevisionStore } from '../store/revision-store.js';
import { WatchCache, type WatchCacheOptions } from './watch-cache.js';

export interface MemoryCacheFixture {
  readonly store: LevelRevisionStore;
  readonly cache: WatchCache;
}

/** Call inside a describe block; read `store` and `cache` inside its tests. */
export function memoryCacheFixture(options: Partial<WatchCacheOptions> = {}): MemoryCacheFixture {
  let store: LevelRevisionStore | undefined;
  let cache: WatchCache | undefined;
  beforeEach(async () => {
    store = await LevelRevisionStore.open({ storage: 'memory' });
    cache = new WatchCache(store, { root: '/registry/', specFor: () => undefined, ...options });
  });
  afterEach(async () => {
    cache?.stop();
    await store?.close();
  });
  return {
    get store() {
      return store!;
    },
    get cache() {
      return cache!;
    },
  };
}
