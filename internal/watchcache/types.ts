// internal/watchcache/types owns the vocabulary of the watch cache: cached objects (held once,
// as serving bytes, with the few attributes selectors need), cache events, and what a watcher
// delivers, the filters watchers select with, and the memo of an entry's other encodings.
// Imports: encoding-arena (types only).

import type { EncodingSlab } from './encoding-arena.js';

/** One object as the cache holds it. Immutable but for the encodings memo: a change replaces the entry. */
export interface CacheEntry {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  /** The object's resourceVersion (modRevision of its last change). */
  readonly revision: number;
  /** JSON bytes with metadata.resourceVersion set: written to clients as they are. */
  readonly bytes: Buffer;
  readonly labels: Readonly<Record<string, string>>;
  /** Selectable fields (metadata.name, metadata.namespace and per-kind fields) as strings. */
  readonly fields: Readonly<Record<string, string>>;
  /** Set when the stored value cannot be decoded: reads fail with this message; only forced deletion removes it. */
  readonly corrupt?: string;
  /**
   * Other encodings of `bytes`, made on first use by whoever serves them (http/serializers) and
   * shared by lists, gets and watch events. The one mutable field: a memo of a pure function of
   * `bytes`, so it stays absent for entries nobody asks in another encoding.
   */
  encodings?: EntryEncodings;
}

/**
 * Memoised encodings of an entry's serving bytes, kept in the encoding arena (see
 * encoding-arena: read and written through it). It applies only while `of` is the entry's
 * `bytes`: an entry copied with a new resourceVersion (`{ ...prev, revision, bytes }`) carries
 * the old memo along, and must not serve it.
 */
export interface EntryEncodings {
  readonly of: Buffer;
  /** The slab holding the object's protobuf message, without the envelope, and where in it. */
  protobuf: EncodingSlab | undefined;
  protobufOffset: number;
  protobufLength: number;
  /** The slab holding the object's CBOR data item, without the self-described tag. */
  cbor: EncodingSlab | undefined;
  cborOffset: number;
  cborLength: number;
}

/** The memo of `entry` for its current bytes, created empty when absent or stale. */
export function encodingsOf(entry: CacheEntry): EntryEncodings {
  const memo = entry.encodings;
  if (memo && memo.of === entry.bytes) return memo;
  const fresh: EntryEncodings = { of: entry.bytes, protobuf: undefined, protobufOffset: 0, protobufLength: 0, cbor: undefined, cborOffset: 0, cborLength: 0 };
  entry.encodings = fresh;
  return fresh;
}

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** A change of one object, as the cache records it (before any watcher's filter). */
export interface CacheEvent {
  readonly type: EventType;
  readonly revision: number;
  /** The new state; for DELETED the last state, versioned at the delete's revision. */
  readonly entry: CacheEntry;
  /** The state before the change (absent for ADDED). */
  readonly prev?: CacheEntry;
}

/** What a watcher hands its consumer. */
export type WatchOutput =
  | { type: EventType; entry: CacheEntry }
  | { type: 'BOOKMARK'; revision: number; initialEventsEnd?: boolean }
  | { type: 'ERROR'; code: number; reason: string; message: string; details?: Readonly<Record<string, unknown>> };

/** Attributes of an object a resource's selectors can use; computed once per change. */
export interface ObjectAttributes {
  labels: Record<string, string>;
  fields: Record<string, string>;
}

/** Per-resource knowledge the cache needs: supplied by the registry, keyed by storage prefix. */
export interface ResourceSpec {
  attributes(obj: Record<string, unknown>): ObjectAttributes;
  /**
   * Identifies how `attributes` derives fields (their names and how each is computed). Stored
   * attributes with another stamp are derived again from the object at start.
   */
  readonly stamp: string;
}

/**
 * What a filter guarantees of every entry it accepts, so the cache can pass a change by the
 * watchers it cannot concern (see watcher-index). A promise only: the filter still decides.
 */
export type FilterIndex =
  /** The filter accepts every entry. */
  | { readonly kind: 'all' }
  /** Accepted entries carry this label with this value. */
  | { readonly kind: 'label'; readonly key: string; readonly value: string }
  /** Accepted entries have this selectable field with this value (a missing field reads as ''). */
  | { readonly kind: 'field'; readonly key: string; readonly value: string }
  /** Accepted entries have this name. */
  | { readonly kind: 'name'; readonly value: string };

/** A predicate over cache entries (selectors, namespace, name), with what it promises for indexing. */
export type EntryFilter = ((entry: CacheEntry) => boolean) & { readonly index?: FilterIndex };

/** `filter` carrying `index` (which `filter` must imply). */
export function indexedFilter(filter: (entry: CacheEntry) => boolean, index: FilterIndex): EntryFilter {
  return Object.assign(filter, { index });
}

/** The filter of a watch without selectors. */
export const selectAll: EntryFilter = indexedFilter(() => true, { kind: 'all' });
