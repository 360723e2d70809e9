// internal/watchcache/resource-cache owns the cached state of one stored resource (one key
// prefix such as /registry/apps/deployments/): its current objects in key order, a bounded
// ring of recent events for watch replay, and its watchers (indexed: see watcher-index).
// Imports: store/sorted-keys, types, watcher, watcher-index.

import { SortedKeys } from '../store/sorted-keys.js';
import type { CacheEntry, CacheEvent, EntryFilter } from './types.js';
import type { CacheWatcher } from './watcher.js';
import { WatcherIndex } from './watcher-index.js';

export interface ListOptions {
  /** Restrict to keys under this sub-prefix (a namespace: `<prefix><ns>/`). */
  keyPrefix?: string;
  /** Start strictly after this key. */
  after?: string;
  /** At most this many matching entries; `more` tells whether others follow. */
  limit?: number;
  filter?: EntryFilter;
}

export interface ListResult {
  entries: CacheEntry[];
  /** True when matching entries remain after the last one returned. */
  more: boolean;
  /** How many entries (unfiltered, within keyPrefix) follow the last one returned. */
  remaining: number;
}

/**
 * An immutable view of a resource's entries at one revision, kept for a while so the chunks
 * of a paginated list (and exact reads at that revision) come from memory, not the store.
 */
export class EntrySnapshot {
  constructor(
    readonly revision: number,
    /** Entries in key order. */
    private readonly entries: readonly CacheEntry[],
    readonly expiresAt: number,
  ) {}

  list(options: ListOptions & { keyPrefix: string }): ListResult {
    const { keyPrefix, after, filter } = options;
    const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
    const from = after !== undefined && after >= keyPrefix ? upperBoundEntry(this.entries, after) : lowerBoundEntry(this.entries, keyPrefix);
    const out: CacheEntry[] = [];
    let i = from;
    let more = false;
    let remaining = 0;
    for (; i < this.entries.length; i++) {
      const e = this.entries[i]!;
      if (!e.key.startsWith(keyPrefix)) break;
      if (filter && !filter(e)) continue;
      if (out.length >= limit) {
        more = true;
        break;
      }
      out.push(e);
    }
    if (more) {
      for (let j = i; j < this.entries.length && this.entries[j]!.key.startsWith(keyPrefix); j++) remaining++;
    }
    return { entries: out, more, remaining };
  }
}

function lowerBoundEntry(a: readonly CacheEntry[], key: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]!.key < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function upperBoundEntry(a: readonly CacheEntry[], key: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]!.key <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const MAX_SNAPSHOTS = 8;

export class ResourceCache {
  private readonly snapshots: EntrySnapshot[] = [];
  private readonly entries = new Map<string, CacheEntry>();
  private readonly sortedKeys = new SortedKeys();
  private readonly ring: CacheEvent[] = [];
  private ringStart = 0;
  /** Every event with revision > oldestReplayable is in the ring. */
  private oldestReplayable: number;
  /** Every registered watcher (for closing them all and for metrics); delivery goes through the index. */
  private readonly registered = new Set<CacheWatcher>();
  private readonly index: WatcherIndex;

  constructor(
    readonly prefix: string,
    private readonly ringCapacity: number,
    startRevision: number,
  ) {
    this.oldestReplayable = startRevision;
    this.index = new WatcherIndex(prefix);
  }

  get watchers(): ReadonlySet<CacheWatcher> {
    return this.registered;
  }

  /** Registers a watcher of keys under `keyPrefix` that `selected` accepts (its filter is both). */
  addWatcher(w: CacheWatcher, keyPrefix: string, selected: EntryFilter): void {
    // Closed already (its initial state overflowed its queue): registered, it would never leave.
    if (w.closed) return;
    this.registered.add(w);
    this.index.add(w, keyPrefix, selected);
  }

  removeWatcher(w: CacheWatcher): void {
    this.registered.delete(w);
    this.index.remove(w);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): CacheEntry | undefined {
    return this.entries.get(key);
  }

  /** Loads an entry during priming (no event, no watchers yet). */
  load(entry: CacheEntry): void {
    this.sortedKeys.add(entry.key);
    this.entries.set(entry.key, entry);
  }

  /** Applies one change and fans it out. `next` undefined means the key was deleted. */
  apply(ev: CacheEvent): void {
    if (ev.type === 'DELETED') {
      this.entries.delete(ev.entry.key);
      this.sortedKeys.delete(ev.entry.key);
    } else {
      this.sortedKeys.add(ev.entry.key);
      this.entries.set(ev.entry.key, ev.entry);
    }
    this.record(ev);
    this.index.deliver(ev);
  }

  private record(ev: CacheEvent): void {
    if (this.ring.length - this.ringStart >= this.ringCapacity) {
      this.oldestReplayable = this.ring[this.ringStart]!.revision;
      this.ringStart++;
      // Compact the backing array now and then instead of shifting on every event.
      if (this.ringStart > this.ringCapacity) {
        this.ring.splice(0, this.ringStart);
        this.ringStart = 0;
      }
    }
    this.ring.push(ev);
  }

  /**
   * Events with revision > `after` from the ring, or undefined when the ring no longer holds
   * all of them (the caller then replays from the store's history).
   */
  eventsSince(after: number): CacheEvent[] | undefined {
    if (after < this.oldestReplayable) return undefined;
    const out: CacheEvent[] = [];
    // Binary search for the first event newer than `after`.
    let lo = this.ringStart;
    let hi = this.ring.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ring[mid]!.revision <= after) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.ring.length; i++) out.push(this.ring[i]!);
    return out;
  }

  /** Drops ring history at or below a compacted revision: it can no longer be replayed consistently. */
  forgetBefore(revision: number): void {
    if (revision > this.oldestReplayable) {
      while (this.ringStart < this.ring.length && this.ring[this.ringStart]!.revision <= revision) this.ringStart++;
      this.oldestReplayable = revision;
    }
  }

  /** Keeps the current entries as a snapshot at `revision` until `now + ttlMs`. */
  takeSnapshot(revision: number, now: number, ttlMs: number): EntrySnapshot {
    this.dropExpired(now);
    const existing = this.snapshots.find((s) => s.revision === revision);
    if (existing) return existing;
    const entries: CacheEntry[] = [];
    for (const key of this.sortedKeys.range(this.prefix)) entries.push(this.entries.get(key)!);
    const snap = new EntrySnapshot(revision, entries, now + ttlMs);
    this.snapshots.push(snap);
    if (this.snapshots.length > MAX_SNAPSHOTS) this.snapshots.shift();
    return snap;
  }

  /** The unexpired snapshot at exactly `revision`, if one was kept. */
  snapshotAt(revision: number, now: number): EntrySnapshot | undefined {
    this.dropExpired(now);
    return this.snapshots.find((s) => s.revision === revision);
  }

  private dropExpired(now: number): void {
    for (let i = this.snapshots.length - 1; i >= 0; i--) if (this.snapshots[i]!.expiresAt <= now) this.snapshots.splice(i, 1);
  }

  list(options: ListOptions = {}): ListResult {
    const { keyPrefix = this.prefix, after, filter } = options;
    const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
    const { start, end } = this.sortedKeys.span(keyPrefix, after);
    const entries: CacheEntry[] = [];
    let i = start;
    for (; i < end; i++) {
      const e = this.entries.get(this.sortedKeys.at(i))!;
      if (filter && !filter(e)) continue;
      if (entries.length >= limit) break;
      entries.push(e);
    }
    let more = false;
    if (i < end) {
      if (!filter) more = true;
      else {
        for (let j = i; j < end; j++) {
          if (filter(this.entries.get(this.sortedKeys.at(j))!)) {
            more = true;
            break;
          }
        }
      }
    }
    return { entries, more, remaining: more ? end - i : 0 };
  }
}
