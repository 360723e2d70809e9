// internal/watchcache/types owns the vocabulary of the watch cache: cached objects (held once,
// as serving bytes, with the few attributes selectors need), cache events, and what a watcher
// delivers. Imports: nothing from the project.

/** One object as the cache holds it. Immutable: a change replaces the entry. */
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
}

/** A predicate over cache entries (selectors, namespace, name). */
export type EntryFilter = (entry: CacheEntry) => boolean;
