// internal/store/key-index owns the in-memory multi-version index (etcd's MVCC key index, in
// our words): for every key, the revisions at which it was put or deleted, plus the keys in
// sorted order for ranges. Values live in the level database under (key, revision); the index
// says which (key, revision) holds the value visible at any revision. Pure data structure.
// Imports: sorted-keys.

import { SortedKeys } from './sorted-keys.js';

/** One change of a key: a put (with its generation's create revision and version) or a tombstone. */
export interface Revision {
  revision: number;
  tombstone: boolean;
  createRevision: number;
  version: number;
}

export class KeyIndex {
  /**
   * Revisions per key, ascending; the last is the key's current state. A key with one retained
   * revision (most keys once compacted, every key of a store opened after compaction) holds it
   * alone: an array of one costs about 70 B more per key (with 50,000 pods, 3.5 MB). A key
   * whose one revision is its creation (version 1: objects never changed since, which many
   * are) holds just that revision's number (see Held).
   */
  private readonly revisions = new Map<string, Held>();
  /** All keys with any retained revision, sorted. */
  private readonly sortedKeys = new SortedKeys();

  get size(): number {
    return this.sortedKeys.size;
  }

  /** Forgets everything (the store is about to be replaced by a snapshot image). */
  clear(): void {
    this.sortedKeys.clear();
    this.revisions.clear();
  }

  /** The revision visible at `atRevision` (undefined when absent or deleted then). */
  visible(key: string, atRevision: number): Revision | undefined {
    const revs = this.revisions.get(key);
    if (revs === undefined) return undefined;
    if (typeof revs === 'number') return revs <= atRevision ? created(revs) : undefined;
    const r = Array.isArray(revs) ? floor(revs, atRevision) : revs.revision <= atRevision ? revs : undefined;
    return r && !r.tombstone ? r : undefined;
  }

  /** The latest change, tombstone included. */
  latest(key: string): Revision | undefined {
    const revs = this.revisions.get(key);
    return revs === undefined ? undefined : lastOf(revs);
  }

  /** All retained changes of a key (ascending). */
  history(key: string): readonly Revision[] {
    const revs = this.revisions.get(key);
    return revs === undefined ? [] : Array.isArray(revs) ? revs : [typeof revs === 'number' ? created(revs) : revs];
  }

  /** Appends a later revision of a key that has one. */
  private append(key: string, revs: Held, r: Revision): void {
    if (Array.isArray(revs)) revs.push(r);
    else this.revisions.set(key, [typeof revs === 'number' ? created(revs) : revs, r]);
  }

  /** Records a put at `revision` and returns it; the generation continues unless the key was absent. */
  put(key: string, revision: number): Revision {
    const revs = this.revisions.get(key);
    if (revs === undefined) {
      this.revisions.set(key, revision);
      this.sortedKeys.add(key);
      return created(revision);
    }
    const last = lastOf(revs);
    const r: Revision =
      last && !last.tombstone
        ? { revision, tombstone: false, createRevision: last.createRevision, version: last.version + 1 }
        : { revision, tombstone: false, createRevision: revision, version: 1 };
    this.append(key, revs, r);
    return r;
  }

  /** Records a delete at `revision`; returns false when the key was not live. */
  tombstone(key: string, revision: number): boolean {
    const revs = this.revisions.get(key);
    const last = revs === undefined ? undefined : lastOf(revs);
    if (revs === undefined || !last || last.tombstone) return false;
    this.append(key, revs, { revision, tombstone: true, createRevision: last.createRevision, version: 0 });
    return true;
  }

  /** Restores an entry read back from disk at start-up (entries may arrive in any key order, revisions ascending per key). */
  restore(key: string, r: Revision): void {
    const revs = this.revisions.get(key);
    if (revs === undefined) {
      this.revisions.set(key, heldOne(r));
      this.sortedKeys.add(key);
      return;
    }
    this.append(key, revs, r);
  }

  /**
   * restore for a key's first record, when the caller knows no record of it came before (the
   * open's scan reads each key's records adjacent, in revision order): no lookup that would
   * miss. With 50,000 stored pods the misses were about 1.5 % of the start's CPU.
   */
  restoreFirst(key: string, r: Revision): void {
    this.revisions.set(key, heldOne(r));
    this.sortedKeys.add(key);
  }

  /**
   * Drops history at or below `revision`, keeping for each key the newest put at or below it
   * (it is still visible at later revisions) unless that is a tombstone. Calls `drop` for every
   * (key, revision) removed so the caller can delete the stored value.
   */
  compact(revision: number, drop: (key: string, revision: number) => void): void {
    const emptied: string[] = [];
    for (const [key, held] of this.revisions) {
      if (typeof held === 'number') continue; // a creation: visible until deleted
      if (!Array.isArray(held)) {
        // One revision: it stays visible unless it is a tombstone at or below `revision`.
        if (held.tombstone && held.revision <= revision) {
          drop(key, held.revision);
          emptied.push(key);
        }
        continue;
      }
      const revs = held;
      let keepFrom = 0;
      for (let i = revs.length - 1; i >= 0; i--) {
        if (revs[i]!.revision <= revision) {
          keepFrom = revs[i]!.tombstone ? i + 1 : i;
          break;
        }
      }
      if (keepFrom === 0) continue;
      for (let i = 0; i < keepFrom; i++) drop(key, revs[i]!.revision);
      revs.splice(0, keepFrom);
      if (revs.length === 0) emptied.push(key);
      else if (revs.length === 1) this.revisions.set(key, heldOne(revs[0]!));
    }
    for (const key of emptied) {
      this.revisions.delete(key);
      this.sortedKeys.delete(key);
    }
  }

  /** Keys starting with `prefix`, after `after` (exclusive) when given, in order. */
  keys(prefix: string, after?: string): Generator<string> {
    return this.sortedKeys.range(prefix, after);
  }
}

/**
 * What the index holds for a key: its revisions, its only one, or — for a key whose only
 * revision is its creation — that revision's number, which costs nothing besides the map's
 * slot (a Revision object is about 56 B: with 50,000 pods never changed since, 2.8 MB).
 */
type Held = Revision | Revision[] | number;

/** The creation of a key at `revision` (what a number in the index stands for). */
function created(revision: number): Revision {
  return { revision, tombstone: false, createRevision: revision, version: 1 };
}

/** A single revision as the index holds it. */
function heldOne(r: Revision): Revision | number {
  return !r.tombstone && r.version === 1 && r.createRevision === r.revision ? r.revision : r;
}

function lastOf(revs: Held): Revision | undefined {
  return typeof revs === 'number' ? created(revs) : Array.isArray(revs) ? revs[revs.length - 1] : revs;
}

/** The last entry with revision ≤ at. */
function floor(revs: Revision[], at: number): Revision | undefined {
  let lo = 0;
  let hi = revs.length - 1;
  let found: Revision | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (revs[mid]!.revision <= at) {
      found = revs[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}
