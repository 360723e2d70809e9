// internal/watchcache/store-reader owns answering the storage read interface straight from the
// revision store, as upstream's etcd3 store answers storage.Interface: no waiting (a revision the
// store has not reached is too large at once), history for exact reads. The Cacher delegates to it
// for what its memory cannot answer (older revisions, continuations past its snapshots).
// Imports: store (types), storage, types.

import type { KeyValue, RevisionStore } from '../store/types.js';
import { tooLargeRevision, type ReadMode, type StorageList, type StorageListOptions, type StorageReader } from './storage.js';
import type { CacheEntry } from './types.js';

/** What reading needs from the store; writes never go through here. */
export type StoreReads = Pick<RevisionStore, 'currentRevision' | 'consistentRevision' | 'compactedRevision' | 'get' | 'range'>;

export class StoreReader implements StorageReader {
  constructor(
    private readonly store: StoreReads,
    /** The cache's form of a stored value (undefined for keys outside the object root). */
    private readonly decode: (kv: KeyValue) => CacheEntry | undefined,
  ) {}

  /** The revision to read at; undefined = the latest this replica has applied. */
  private async revisionFor(mode: ReadMode): Promise<number | undefined> {
    switch (mode.kind) {
      case 'consistent':
        // Applied here once it resolves, so the latest local state is at least that new.
        await this.store.consistentRevision();
        return undefined;
      case 'any':
        return undefined;
      case 'notOlderThan': {
        const current = this.store.currentRevision();
        if (mode.revision > current) throw tooLargeRevision(mode.revision, current);
        return undefined;
      }
      case 'exact':
        return mode.revision > 0 ? mode.revision : undefined;
    }
  }

  async get(key: string, mode: ReadMode): Promise<CacheEntry | undefined> {
    const kv = await this.store.get(key, await this.revisionFor(mode));
    return kv ? this.decode(kv) : undefined;
  }

  async list(keyPrefix: string, options: StorageListOptions): Promise<StorageList> {
    // Every page at one revision, so a list is one snapshot however many ranges it takes.
    const revision = (await this.revisionFor(options.mode)) ?? this.store.currentRevision();
    const limit = options.limit && options.limit > 0 ? options.limit : 0;
    const { filter } = options;
    const entries: CacheEntry[] = [];
    let cursor = options.after;
    let more = false;
    for (;;) {
      // Pages of at least 100, so a selective filter does not cost a range per match.
      const page = await this.store.range(keyPrefix, { revision, after: cursor, limit: limit > 0 ? Math.max(limit, 100) : 0 });
      for (const kv of page.kvs) {
        const entry = this.decode(kv);
        // Corrupt entries stay in: the caller refuses them loudly instead of hiding them.
        if (!entry || (filter && !entry.corrupt && !filter(entry))) continue;
        if (limit > 0 && entries.length >= limit) {
          more = true;
          break;
        }
        entries.push(entry);
      }
      if (more || !page.more || page.kvs.length === 0) break;
      cursor = page.kvs[page.kvs.length - 1]!.key;
    }
    const result: StorageList = { revision, entries, more };
    if (more && options.count) {
      const counted = await this.store.range(keyPrefix, { revision, count: true, limit: 1, after: entries[entries.length - 1]!.key });
      result.remaining = counted.count ?? 0;
    }
    return result;
  }
}
