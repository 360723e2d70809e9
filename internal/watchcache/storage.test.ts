import { LevelRevisionStore } from '../store/revision-store.js';
import { Cacher } from './cacher.js';
import { runReaderSuite, type ReaderFixture } from './reader-suite.js';
import { StoreReader } from './store-reader.js';
import { WatchCache } from './watch-cache.js';

const newCache = (store: LevelRevisionStore) => new WatchCache(store, { root: '/registry/', specFor: () => undefined, ringCapacity: 4 });

runReaderSuite('store', async (): Promise<ReaderFixture> => {
  const store = await LevelRevisionStore.open({ storage: 'memory' });
  // Never started: only its decoding of stored values is used.
  const decoder = newCache(store);
  return { store, reader: new StoreReader(store, (kv) => decoder.entryFromKv(kv)), close: () => store.close() };
});

const cached = (listSnapshotTtlMs: number) => async (): Promise<ReaderFixture> => {
  const store = await LevelRevisionStore.open({ storage: 'memory' });
  const cache = newCache(store);
  await cache.start();
  return {
    store,
    reader: new Cacher(store, cache, { tooLargeWaitMs: 20, listSnapshotTtlMs }),
    close: async () => {
      cache.stop();
      await store.close();
    },
  };
};
runReaderSuite('watch cache', cached(0));
runReaderSuite('watch cache with list snapshots', cached(60_000));
