// internal/watchcache/watch-cache owns this replica's in-memory view of the store: it primes
// from a consistent range, then follows applied batches only (never writes), keeping one
// ResourceCache per stored resource. It serves get/list at its current revision, waits for a
// revision on behalf of consistent reads, and starts watches with replay from its rings or,
// further back, from the store's history.
// Imports: store (types), storedobject, types, storage, byte-slab, encoding-arena, entry-object, resource-cache, watcher.

import type { AppliedBatch, KeyValue, OpenScanConsumer, RevisionStore, StoreEvent } from '../store/types.js';
import { StoreError } from '../store/types.js';
import { decodeStored, replaceResourceVersion, withResourceVersion } from '../storedobject/stored-object.js';
import { ByteSlabs } from './byte-slab.js';
import { rememberDecoded } from './entry-object.js';
import { aheadEncoding } from './encoding-arena.js';
import { ResourceCache } from './resource-cache.js';
import { reinitializing, tooLargeRevision } from './storage.js';
import type { CacheEntry, CacheEvent, EntryFilter, ResourceSpec } from './types.js';
import { CacheWatcher } from './watcher.js';

export interface WatchCacheOptions {
  /** Root of all object keys (`/registry/`); keys are `<root><group>/<resource>/[<ns>/]<name>`. */
  root: string;
  /** Resolves the spec of a resource prefix (`/registry/apps/deployments/`). */
  specFor(prefix: string): ResourceSpec | undefined;
  /** Events kept per resource for watch replay. */
  ringCapacity?: number;
  /** Outputs a watcher may have queued before it is closed as too slow. */
  watcherCapacity?: number;
}

export interface WatchOptions {
  /** Resource prefix (`/registry/core/pods/`). */
  prefix: string;
  filter: EntryFilter;
  /**
   * 0 = start with synthetic ADDED events for the current state, then changes;
   * n > 0 = changes after revision n (410-style StoreError STORE_COMPACTED when that is gone).
   */
  fromRevision: number;
  /** Restrict the initial state to keys under this prefix (a namespace). */
  keyPrefix?: string;
}

const DEFAULT_SPEC: ResourceSpec = {
  stamp: 'default',
  attributes: (obj) => {
    const meta = (obj.metadata ?? {}) as { name?: string; namespace?: string; labels?: Record<string, string> };
    const fields: Record<string, string> = { 'metadata.name': meta.name ?? '' };
    if (meta.namespace !== undefined) fields['metadata.namespace'] = meta.namespace;
    return { labels: meta.labels ?? {}, fields };
  },
};

/**
 * Interns short strings so the cache holds one copy of values that repeat across objects.
 * Bounded: once full it stops adding (it is an optimisation, not an index).
 */
export class StringTable {
  private readonly table = new Map<string, string>();

  constructor(private readonly capacity: number) {}

  intern(s: string): string {
    if (s.length > 64) return s;
    const known = this.table.get(s);
    if (known !== undefined) return known;
    if (this.table.size < this.capacity) this.table.set(s, s);
    return s;
  }

  /**
   * The same record with interned values (a fresh object: the input may be shared). Values that
   * are not strings (a stored `labels: {a: null}` or a number) must not stop the cache: null
   * reads as "" (what Go's decoder makes of it), scalars as their text, anything else is left
   * out. A throw here ran inside the store's apply and failed every later write, and at start
   * it stopped the server from starting at all. `name`: the object's name, which a
   * `metadata.name` field shares instead of keeping a copy (see sharedValue).
   */
  internValues(record: Record<string, unknown>, name?: string): Record<string, string> {
    const out: Record<string, string> = {};
    if (typeof record !== 'object' || record === null) return out;
    for (const k in record) {
      const v = this.sharedValue(k, record[k], name);
      if (v !== undefined) out[k] = v;
    }
    return out;
  }

  /**
   * internValues for a record nobody else holds (fresh from JSON.parse), changed in place: it
   * keeps the compact shape JSON.parse gave it, where a copy built key by key takes an object
   * with an out-of-object property array besides (with 50,000 pods, about 60 B each).
   */
  internOwned(record: Record<string, unknown>, name?: string): Record<string, string> {
    for (const k in record) {
      const v = this.sharedValue(k, record[k], name);
      if (v !== undefined) record[k] = v;
      else delete record[k];
    }
    return record as Record<string, string>;
  }

  /**
   * A label or field value as the cache keeps it (see internValues). The `metadata.name` field
   * is the name itself: names rarely repeat, so interning them only filled the table with one
   * entry per object and left the entry holding two copies of its name.
   */
  private sharedValue(k: string, v: unknown, name: string | undefined): string | undefined {
    if (typeof v === 'string') return k === 'metadata.name' && v === name ? name : this.intern(v);
    if (v === null || v === undefined) return '';
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    return undefined;
  }
}

/** The attributes of a cache entry besides its key, revision and bytes. */
type Describe = Pick<CacheEntry, 'namespace' | 'name' | 'labels' | 'fields'>;

/**
 * An entry built as one literal: every member in the object itself. Spread from the
 * attributes, it had room for four and kept the rest in a property array of its own (about
 * 40 B more per cached object).
 */
function cacheEntry(key: string, a: Describe, revision: number, bytes: Buffer): CacheEntry {
  return { key, namespace: a.namespace, name: a.name, revision, bytes, labels: a.labels, fields: a.fields };
}

export class WatchCache {
  private readonly resources = new Map<string, ResourceCache>();
  private rev = 0;
  private started = false;
  private readonly waiters: Array<{ revision: number; resolve: () => void }> = [];
  private unsubscribe: (() => void) | undefined;
  private readonly ringCapacity: number;
  private readonly watcherCapacity: number;
  /** Label and field values repeat across objects (namespaces, phases, images): keep one copy. */
  private readonly strings = new StringTable(200_000);
  /** What attributeBytes derived, by the writer's decoded object (see toEntry). */
  private readonly describedWrites = new WeakMap<object, { spec: ResourceSpec; a: Describe }>();

  private attached: RevisionStore | undefined;

  /** `store` undefined: made before its store opens (see preload); attach it before start. */
  constructor(
    store: RevisionStore | undefined,
    private readonly options: WatchCacheOptions,
  ) {
    this.attached = store;
    this.ringCapacity = options.ringCapacity ?? 4096;
    this.watcherCapacity = options.watcherCapacity ?? 10_000;
  }

  private get store(): RevisionStore {
    if (this.attached === undefined) throw new Error('watch cache has no store: attach it before start');
    return this.attached;
  }

  attach(store: RevisionStore): void {
    this.attached = store;
  }

  /** Entries built from the store's scan at open (see preload), for the first load. */
  private preloaded: { entries: CacheEntry[]; revision: number | undefined } | undefined;

  /**
   * A consumer for the store's open (OpenStoreOptions.latest): it builds this cache's entries
   * from the values the open's scan reads, as load builds them from a range, so the start reads
   * each stored value once. The first load takes them if the store is still at the revision
   * they are at, and reads the store as before otherwise (something was applied meanwhile).
   */
  preload(): OpenScanConsumer {
    const slabs = new ByteSlabs();
    const load: { entries: CacheEntry[]; revision: number | undefined } = { entries: [], revision: undefined };
    this.preloaded = load;
    return {
      value: (kv) => {
        const entry = this.toEntry(kv, kv.modRevision, { stored: kv.attributes, alloc: slabs.alloc });
        if (entry) load.entries.push(entry);
      },
      done: (revision) => {
        load.revision = revision;
      },
    };
  }

  /** The revision of the last applied batch this cache has processed. */
  get revision(): number {
    return this.rev;
  }

  get ready(): boolean {
    return this.started;
  }

  /**
   * Primes from the store. Batches applied while the range is read are held and replayed
   * after it, skipping what the range already contains.
   */
  async start(): Promise<void> {
    this.unsubscribe = this.store.subscribe((batch) => {
      if (this.held) this.held.push(batch);
      else if (batch.reset) void this.reload();
      else this.onBatch(batch);
    });
    await this.prime();
    this.started = true;
    this.wakeWaiters();
  }

  /** Batches applied while the cache (re)loads from a range; replayed after it. */
  private held: AppliedBatch[] | null = null;

  private async prime(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      this.held = [];
      let revision: number;
      try {
        revision = await this.load();
      } catch (e) {
        // A replica catching up applies compactions (and may install a snapshot) while the
        // paged range is read at one revision: that revision can vanish under it. Read again
        // at the new current revision; what was held meanwhile is in that read.
        const moved = this.held.some((b) => b.reset || b.compactedRevision !== undefined);
        this.held = null;
        if (attempt < 20 && (moved || (e instanceof StoreError && (e.code === 'STORE_COMPACTED' || e.code === 'STORE_CORRUPT')))) {
          this.resources.clear();
          continue;
        }
        throw e;
      }
      this.rev = revision;
      const held = this.held;
      this.held = null;
      for (const batch of held) {
        if (batch.reset) return this.reload();
        if (batch.revision > this.rev) this.onBatch(batch);
      }
      return;
    }
  }

  /** Loads every stored object at the current revision (paged); returns that revision. */
  private async load(): Promise<number> {
    // Paged, so priming never holds every stored value at once on top of the cache itself.
    const revision = this.store.currentRevision();
    const preloaded = this.preloaded;
    this.preloaded = undefined;
    if (preloaded !== undefined && preloaded.revision === revision) {
      for (const entry of preloaded.entries) this.resourceFor(entry.key, revision)?.load(entry);
      return revision;
    }
    // Everything loaded lives until changed: packed, not one allocation per object (see byte-slab).
    const slabs = new ByteSlabs();
    let after: string | undefined;
    for (;;) {
      // With the attributes records store beside values: the objects need no parse (see toEntry).
      const page = await this.store.range(this.options.root, { revision, limit: 1000, attributes: true, once: true, ...(after !== undefined ? { after } : {}) });
      for (const kv of page.kvs) {
        const entry = this.toEntry(kv, kv.modRevision, { stored: kv.attributes, alloc: slabs.alloc });
        if (entry) this.resourceFor(kv.key, revision)?.load(entry);
      }
      if (!page.more || page.kvs.length === 0) return revision;
      after = page.kvs[page.kvs.length - 1]!.key;
    }
  }

  /**
   * The store's whole state was replaced (a Raft snapshot installed on a replica that had
   * fallen behind): every watcher ends (its client resumes from the last version it saw; the
   * image carries the retained history) and the cache loads again, as upstream's cacher
   * re-lists when its watch of the store breaks.
   */
  private async reload(): Promise<void> {
    // Reads wait meanwhile (waitForRevision needs a started cache) instead of seeing it empty.
    this.started = false;
    for (const rc of this.resources.values()) for (const w of rc.watchers) w.close('cache-stopped');
    this.resources.clear();
    try {
      await this.prime();
      this.started = true;
      this.wakeWaiters();
    } catch {
      // Reads keep waiting (and time out with 504) rather than see a half-loaded cache; the
      // store is readable again once what disturbed the load is over.
      if (!this.stopped) setTimeout(() => void this.reload(), 500).unref();
    }
  }

  private stopped = false;

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    for (const rc of this.resources.values()) for (const w of rc.watchers) w.close('cache-stopped');
  }

  /** Open watchers over every resource. */
  watcherCount(): number {
    let n = 0;
    for (const rc of this.resources.values()) n += rc.watchers.size;
    return n;
  }

  /** Objects and watchers per resource prefix, for metrics. */
  stats(): Array<{ prefix: string; objects: number; watchers: number }> {
    return [...this.resources.values()].map((rc) => ({ prefix: rc.prefix, objects: rc.size, watchers: rc.watchers.size }));
  }

  /** The resource prefix of an object key: `<root><group>/<resource>/`. */
  prefixOf(key: string): string | undefined {
    const root = this.options.root;
    if (!key.startsWith(root)) return undefined;
    const a = key.indexOf('/', root.length);
    const b = a < 0 ? -1 : key.indexOf('/', a + 1);
    return b < 0 ? undefined : key.slice(0, b + 1);
  }

  resource(prefix: string): ResourceCache {
    let rc = this.resources.get(prefix);
    if (!rc) {
      rc = new ResourceCache(prefix, this.ringCapacity, this.rev);
      this.resources.set(prefix, rc);
    }
    return rc;
  }

  private resourceFor(key: string, atRevision: number): ResourceCache | undefined {
    const prefix = this.prefixOf(key);
    if (!prefix) return undefined;
    let rc = this.resources.get(prefix);
    if (!rc) {
      rc = new ResourceCache(prefix, this.ringCapacity, atRevision);
      this.resources.set(prefix, rc);
    }
    return rc;
  }

  /** Builds the cache's form of a stored value (also used for reads served from the store). */
  entryFromKv(kv: KeyValue): CacheEntry | undefined {
    return this.toEntry(kv, kv.modRevision);
  }

  /**
   * What the cache derives from an object written under `key`, as bytes to travel with the
   * write to the other replicas (the replicator puts them in the log entry) and to be stored
   * beside the value (the store's record): with them a replica builds its entry without
   * parsing the object, live or at start. Undefined outside the cache's root. The format:
   * JSON `[namespace, name, labels, fields, stamp]`, the stamp being the resource spec's at
   * derivation (entries of older log entries and records have no stamp: four members).
   */
  attributeBytes(key: string, obj: unknown): Uint8Array | undefined {
    const prefix = this.prefixOf(key);
    if (!prefix || typeof obj !== 'object' || obj === null || Array.isArray(obj)) return undefined;
    const spec = this.options.specFor(prefix) ?? DEFAULT_SPEC;
    const a = this.describe(spec, obj as Record<string, unknown>);
    // The same write's cache entry is built from the same decoded object right after: it takes
    // these instead of deriving them a second time.
    this.describedWrites.set(obj, { spec, a });
    return Buffer.from(JSON.stringify([a.namespace, a.name, a.labels, a.fields, spec.stamp]), 'utf8');
  }

  /**
   * Reads attributeBytes; undefined for anything not in its shape (the object is parsed then),
   * or, when `stamp` is given, derived under another stamp (or none).
   */
  private readAttributes(bytes: Uint8Array, stamp?: string): Describe | undefined {
    let v: unknown;
    try {
      v = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
    } catch {
      return undefined;
    }
    if (!Array.isArray(v) || (v.length !== 4 && v.length !== 5)) return undefined;
    const [namespace, name, labels, fields, derived] = v as unknown[];
    if (stamp !== undefined && derived !== stamp) return undefined;
    const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
    if (typeof namespace !== 'string' || typeof name !== 'string' || !isRecord(labels) || !isRecord(fields)) return undefined;
    // Fresh from JSON.parse: interned in place (see internOwned).
    return { namespace: this.strings.intern(namespace), name, labels: this.strings.internOwned(labels), fields: this.strings.internOwned(fields, name) };
  }

  /** The attributes of an entry by `spec` (namespace, name, selectable labels and fields), interned. */
  private describe(spec: ResourceSpec, obj: Record<string, unknown>): Describe {
    const meta = (obj.metadata ?? {}) as { name?: string; namespace?: string };
    const { labels, fields } = spec.attributes(obj);
    const name = typeof meta.name === 'string' ? meta.name : '';
    return {
      namespace: this.strings.intern(typeof meta.namespace === 'string' ? meta.namespace : ''),
      name,
      labels: this.strings.internValues(labels),
      fields: this.strings.internValues(fields, name),
    };
  }

  /**
   * The cache's entry for a stored value at `revision`. What spares parsing the object, best first:
   * `decoded`, the writer's decoded form when it was written here (only read from);
   * `carried`, what the proposing replica derived from it, from the log entry;
   * `stored`, what the store's record keeps beside the value: used when derived under the
   * resource's current stamp, or when the resource has no spec now (a custom resource before
   * its definition is served again: its stored fields are those the definition declared, and
   * selection derives any field they lack from the object).
   * `share`: the entry is an applied change, whose other consumers may use what is parsed here.
   * `alloc`: where its serving bytes go (exact-size buffers of their own unless given).
   */
  private toEntry(
    kv: KeyValue,
    revision: number,
    how: { decoded?: unknown; carried?: Uint8Array; stored?: Uint8Array; share?: boolean; alloc?: (n: number) => Buffer } = {},
  ): CacheEntry | undefined {
    const prefix = this.prefixOf(kv.key);
    if (!prefix) return undefined;
    const { decoded, alloc } = how;
    const hinted = decoded !== undefined && typeof decoded === 'object' && decoded !== null;
    let known: Describe | undefined;
    if (!hinted && how.carried !== undefined) known = this.readAttributes(how.carried);
    else if (!hinted && how.stored !== undefined) known = this.readAttributes(how.stored, this.options.specFor(prefix)?.stamp);
    if (known) return cacheEntry(kv.key, known, revision, withResourceVersion(kv.value, revision, alloc));
    let obj: Record<string, unknown>;
    try {
      obj = hinted ? (decoded as Record<string, unknown>) : decodeStored(kv.value, revision);
      if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw new Error('stored value is not an object');
    } catch (e) {
      // Kept as a marker so reads fail loudly (500) instead of pretending the object is absent.
      const rest = kv.key.slice(prefix.length).split('/');
      const name = rest.pop() ?? '';
      return {
        key: kv.key,
        namespace: rest.join('/'),
        name,
        revision,
        bytes: Buffer.alloc(0),
        labels: {},
        fields: {},
        corrupt: `unable to decode stored object ${kv.key}: ${e instanceof Error ? e.message : String(e)}`,
      };
    }
    const spec = this.options.specFor(prefix) ?? DEFAULT_SPEC;
    const described = hinted ? this.describedWrites.get(obj) : undefined;
    const attributes = described?.spec === spec ? described.a : this.describe(spec, obj);
    const entry = cacheEntry(kv.key, attributes, revision, withResourceVersion(kv.value, revision, alloc));
    // What was parsed for a change being applied (decodeStored gives what parsing the entry's
    // bytes gives, the resourceVersion first in metadata as withResourceVersion writes it)
    // serves the change's other consumers. Not the writer's hint: the writer still holds and
    // changes that object. Not at priming or for reads: nobody is about to consume those, and
    // the last ones loaded would stay in memory for nothing.
    if (!hinted && how.share) rememberDecoded(entry, obj);
    return entry;
  }

  private onBatch(batch: AppliedBatch): void {
    const touched = new Set<ResourceCache>();
    for (const ev of batch.events) {
      const rc = this.resourceFor(ev.kv.key, this.rev);
      if (!rc) continue;
      const cacheEvent = this.toCacheEvent(rc, ev);
      if (cacheEvent) {
        rc.apply(cacheEvent);
        touched.add(rc);
        // Encoded in idle time once writes pause (see AheadEncoding).
        if (cacheEvent.type === 'DELETED') aheadEncoding.deleted(cacheEvent.entry.key);
        else aheadEncoding.changed(cacheEvent.entry);
      }
    }
    if (batch.compactedRevision !== undefined) {
      for (const rc of this.resources.values()) rc.forgetBefore(batch.compactedRevision);
    }
    // Watchers read this as their progress (for bookmarks) when they need it: see CacheWatcher's clock.
    this.rev = batch.revision;
    this.wakeWaiters();
  }

  private toCacheEvent(rc: ResourceCache, ev: StoreEvent): CacheEvent | undefined {
    const prev = rc.get(ev.kv.key);
    const revision = ev.kv.modRevision;
    if (ev.type === 'delete') {
      if (!prev) return undefined;
      const last: CacheEntry = prev.corrupt ? { ...prev, revision } : { ...prev, revision, bytes: replaceResourceVersion(prev.bytes, revision) };
      return { type: 'DELETED', revision, entry: last, prev };
    }
    const entry = this.toEntry(ev.kv, revision, { decoded: ev.decoded, carried: ev.attributes, share: true });
    if (!entry) return undefined;
    return prev ? { type: 'MODIFIED', revision, entry, prev } : { type: 'ADDED', revision, entry };
  }

  /** Resolves once the cache has applied `revision` (or rejects after `timeoutMs`). */
  waitForRevision(revision: number, timeoutMs: number): Promise<void> {
    if (this.started && this.rev >= revision) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = { revision, resolve: () => (clearTimeout(timer), resolve()) };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        // Still (re)loading — a replica reloads after installing a Raft snapshot — says nothing
        // of the version asked for: "too large resource version: 0" misled, and a client that
        // retries on Retry-After (client-go) waits the reload out, as upstream's 429 "storage
        // is (re)initializing" lets it.
        reject(this.started ? tooLargeRevision(revision, this.rev) : reinitializing());
      }, timeoutMs);
      timer.unref?.();
      this.waiters.push(waiter);
    });
  }

  private wakeWaiters(): void {
    if (!this.started) return;
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (w.revision <= this.rev) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  /**
   * Starts a watch. Registration and the choice of replay happen synchronously, so no applied
   * batch can fall between the state a watcher starts from and the live events it receives.
   */
  watch(options: WatchOptions): CacheWatcher {
    const rc = this.resource(options.prefix);
    const start = options.fromRevision > 0 ? options.fromRevision : this.rev;
    // The key prefix (a namespace) scopes every event, not only the initial state: upstream's
    // cacher filters each event by key prefix before the selectors. Without it a namespaced
    // watch received the changes of every namespace.
    const { filter: selected } = options;
    const keyPrefix = options.keyPrefix || options.prefix;
    const filter: EntryFilter = keyPrefix !== options.prefix ? (e) => e.key.startsWith(keyPrefix) && selected(e) : selected;
    const watcher = new CacheWatcher(filter, this.watcherCapacity, start, (w) => rc.removeWatcher(w), this.rev, this);
    if (options.fromRevision <= 0) {
      for (const entry of rc.list({ keyPrefix }).entries) watcher.initial(entry);
      rc.addWatcher(watcher, keyPrefix, selected);
      return watcher;
    }
    if (options.fromRevision < this.store.compactedRevision()) {
      watcher.fail(410, 'Expired', `too old resource version: ${options.fromRevision} (${this.store.compactedRevision()})`);
      return watcher;
    }
    const fromRing = rc.eventsSince(options.fromRevision);
    rc.addWatcher(watcher, keyPrefix, selected);
    if (fromRing) {
      watcher.release(fromRing);
      return watcher;
    }
    // Older than the ring: replay from the store's history, holding live events meanwhile.
    watcher.hold();
    const upTo = this.rev;
    this.store
      .eventsSince(options.prefix, options.fromRevision)
      .then((events) => {
        const replay: CacheEvent[] = [];
        const state = new Map<string, CacheEntry>();
        for (const ev of events) {
          if (ev.kv.modRevision > upTo) break;
          const prevEntry = state.get(ev.kv.key) ?? (ev.prevKv ? this.toEntry(ev.prevKv, ev.prevKv.modRevision) : undefined);
          if (ev.type === 'delete') {
            if (!prevEntry) continue;
            const last = prevEntry.corrupt
              ? { ...prevEntry, revision: ev.kv.modRevision }
              : { ...prevEntry, revision: ev.kv.modRevision, bytes: replaceResourceVersion(prevEntry.bytes, ev.kv.modRevision) };
            replay.push({ type: 'DELETED', revision: ev.kv.modRevision, entry: last, prev: prevEntry });
            state.delete(ev.kv.key);
          } else {
            const entry = this.toEntry(ev.kv, ev.kv.modRevision);
            if (!entry) continue;
            replay.push(prevEntry ? { type: 'MODIFIED', revision: entry.revision, entry, prev: prevEntry } : { type: 'ADDED', revision: entry.revision, entry });
            state.set(ev.kv.key, entry);
          }
        }
        watcher.release(replay);
      })
      .catch((e: unknown) => {
        if (e instanceof StoreError && e.code === 'STORE_COMPACTED') {
          watcher.fail(410, 'Expired', `too old resource version: ${options.fromRevision} (${this.store.compactedRevision()})`);
        } else {
          watcher.fail(500, 'InternalError', `watch replay failed: ${String(e)}`);
        }
      });
    return watcher;
  }
}
