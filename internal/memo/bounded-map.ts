// internal/memo/bounded-map owns the eviction rule of the server's small per-process memos: a Map
// that holds at most `limit` entries and, when a new key would pass the limit, forgets the key
// inserted longest ago. Memos keyed by client input (tokens, request attributes) use it so a
// client cannot grow the heap without bound.
// Imports: none.

export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly limit: number) {
    super();
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a bounded map needs a positive whole limit, not ${limit}`);
  }

  override set(key: K, value: V): this {
    if (this.size >= this.limit && !this.has(key)) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}
