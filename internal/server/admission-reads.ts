// internal/server/admission-reads owns how admission plugins read objects from this replica's
// watch cache: every entry of a resource (or of one namespace of it) decoded once per stored
// version (memoised on the entry), and the StorageClasses and pods the storage and PodSecurity
// plugins need. Imports: admission (types), naming, registry/keys, schema, watchcache.

import type { JsonObject } from '../admission/admission.js';
import type { StorageClassInfo } from '../admission/storage.js';
import type { Naming } from '../naming/naming.js';
import { namespacePrefix, resourcePrefix } from '../registry/keys.js';
import type { ApiCatalog, ResourceInfo } from '../schema/catalog.js';
import type { CacheEntry } from '../watchcache/types.js';
import type { WatchCache } from '../watchcache/watch-cache.js';

/** The cached objects of `r` (one namespace's when given), each decoded by `parse` once per stored version. */
export function parsedEntries<T>(cache: WatchCache, r: ResourceInfo | undefined, memo: WeakMap<object, T>, parse: (o: JsonObject, e: CacheEntry) => T, namespace?: string): T[] {
  if (!r) return [];
  const out: T[] = [];
  const opts = namespace && r.namespaced ? { keyPrefix: namespacePrefix(r, namespace) } : {};
  for (const e of cache.resource(resourcePrefix(r)).list(opts).entries) {
    if (e.corrupt) continue;
    let v = memo.get(e);
    if (v === undefined) {
      v = parse(JSON.parse(e.bytes.toString('utf8')) as JsonObject, e);
      memo.set(e, v);
    }
    out.push(v);
  }
  return out;
}

const storageClassMemo = new WeakMap<object, StorageClassInfo>();

export function storageClassesIn(cache: WatchCache, catalog: ApiCatalog, naming: Naming): StorageClassInfo[] {
  return parsedEntries(cache, catalog.resource(naming.group('storage.k8s.io'), 'v1', 'storageclasses'), storageClassMemo, (o, e) => {
    const m = (o.metadata ?? {}) as { name?: string; creationTimestamp?: string; annotations?: Record<string, string> };
    return { name: m.name ?? e.name, creationTimestamp: m.creationTimestamp ?? '', annotations: m.annotations ?? {} };
  });
}

const podMemo = new WeakMap<object, JsonObject>();

export function podsIn(cache: WatchCache, catalog: ApiCatalog, namespace: string): JsonObject[] {
  return parsedEntries(cache, catalog.resource('', 'v1', 'pods'), podMemo, (o) => o, namespace);
}
