// internal/watchcache/entry-object owns the short-lived sharing of a cache entry's decoded
// object between the read-only consumers of one change. Every write's entry was parsed again by
// each of them — the watch cache itself on a replica that did not propose it, the node
// authorizer's graph on every replica, the garbage collector and the claim-protection
// controller on the leader — several parses of the same bytes per write on the write path. The
// cache parses at most once and keeps the result for the most recent changes only (bounded: the
// entries themselves hold bytes, never decoded objects, so memory per stored object is
// unchanged; the watch cache shares only what it parses for changes being applied, never
// what it loads at start). Consumers that need only metadata read it without parsing the rest
// (entryMetadata). Imports: storedobject, types.

import { metadataMembers } from '../storedobject/stored-object.js';
import type { CacheEntry } from './types.js';

/** Entries whose decoded object is kept: enough for one busy batch to reach every consumer. */
const RECENT = 256;

const recent = new Map<CacheEntry, Readonly<Record<string, unknown>>>();

/**
 * Records `obj` as the decoded form of `entry`: the same value JSON.parse(entry.bytes) gives.
 * The caller hands the object over: nothing may change it afterwards.
 */
export function rememberDecoded(entry: CacheEntry, obj: Readonly<Record<string, unknown>>): void {
  if (recent.size >= RECENT) recent.delete(recent.keys().next().value!);
  recent.set(entry, obj);
}

/**
 * The entry's object, parsed from its bytes unless a recent parse is kept; undefined for a
 * corrupt entry or bytes that are not a JSON object. SHARED and READ-ONLY: a caller that
 * wants to change or keep parts of it must copy them (JSON.parse(entry.bytes) for its own).
 */
export function decodedEntry(entry: CacheEntry): Readonly<Record<string, unknown>> | undefined {
  if (entry.corrupt) return undefined;
  const known = recent.get(entry);
  if (known !== undefined) return known;
  let obj: unknown;
  try {
    obj = JSON.parse(entry.bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return undefined;
  rememberDecoded(entry, obj as Record<string, unknown>);
  return obj as Record<string, unknown>;
}

/**
 * The entry's metadata, or at least its members `names`: from a recent parse when one is
 * kept, else just those members read from the bytes (see metadataMembers), and not kept: a
 * consumer that reads every stored object at start, such as the garbage collector, would
 * otherwise push a parse of each through the recent memo and into the old generation.
 * Undefined where decodedEntry is. SHARED and READ-ONLY, as decodedEntry's.
 */
export function entryMetadata(entry: CacheEntry, names: readonly string[]): Readonly<Record<string, unknown>> | undefined {
  if (entry.corrupt) return undefined;
  const known = recent.get(entry);
  if (known === undefined) {
    const members = metadataMembers(entry.bytes, names);
    if (members !== undefined) return members;
  }
  const whole = known ?? decodedEntry(entry);
  return whole === undefined ? undefined : isRecord(whole.metadata) ? whole.metadata : {};
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
