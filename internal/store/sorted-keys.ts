// internal/store/sorted-keys owns a sorted set of string keys with prefix ranges, used by the
// store's key index and by the watch cache (both list keys in order for pagination).
// The keys live in sorted chunks of at most CHUNK keys (a one-level B-tree): an insert or
// delete moves at most a chunk's keys, not every key after it. One flat array made each
// create of a name that sorts before the last one (bench-c-10 before bench-c-9) move half
// the keys — about 20 µs at 50,000 keys, twice per create (store and watch cache).
// Imports: nothing from the project.

/** Keys per chunk at most; a full chunk that takes one more splits in two halves. */
const CHUNK = 512;

export class SortedKeys {
  /** Non-empty sorted chunks, each key less than every key of the next chunk. */
  private chunks: string[][] = [];
  private count = 0;
  /** Index of each chunk's first key, rebuilt lazily after a change (only positions need it). */
  private starts: number[] | undefined;
  /** The chunk at() found last and its first key's index: list pagination asks for consecutive positions. */
  private current: string[] | undefined;
  private currentStart = 0;

  get size(): number {
    return this.count;
  }

  clear(): void {
    this.chunks = [];
    this.count = 0;
    this.changed();
  }

  add(key: string): void {
    const n = this.chunks.length;
    // Loads (the store's index at open, the watch cache's priming) add keys in ascending order:
    // one comparison with the last key instead of a binary search each.
    const tail = n === 0 ? undefined : this.chunks[n - 1]!;
    if (tail === undefined || tail[tail.length - 1]! < key) {
      if (tail === undefined || tail.length >= CHUNK) this.chunks.push([key]);
      else tail.push(key);
      this.count++;
      this.changed();
      return;
    }
    const c = this.chunkFor(key);
    const chunk = this.chunks[c]!;
    const i = lowerBound(chunk, key);
    if (chunk[i] === key) return;
    chunk.splice(i, 0, key);
    this.count++;
    this.changed();
    if (chunk.length > CHUNK) this.chunks.splice(c + 1, 0, chunk.splice(chunk.length >> 1));
  }

  delete(key: string): void {
    if (this.count === 0) return;
    const c = this.chunkFor(key);
    const chunk = this.chunks[c];
    if (!chunk) return;
    const i = lowerBound(chunk, key);
    if (chunk[i] !== key) return;
    chunk.splice(i, 1);
    this.count--;
    this.changed();
    if (chunk.length === 0) this.chunks.splice(c, 1);
  }

  /** Index range [start, end) of keys with `prefix`, starting strictly after `after` when given. */
  span(prefix: string, after?: string): { start: number; end: number } {
    const start = after !== undefined && after >= prefix ? this.position(after, true) : this.position(prefix, false);
    const end = prefix === '' ? this.count : this.position(prefixEnd(prefix), false);
    return { start, end: Math.max(start, end) };
  }

  at(i: number): string {
    const rel = i - this.currentStart;
    if (this.current !== undefined && rel >= 0 && rel < this.current.length) return this.current[rel]!;
    const starts = this.chunkStarts();
    const c = upperBoundNumber(starts, i) - 1;
    // Out of range is undefined, as indexing the one array was.
    if (c < 0) return this.chunks[c]?.[i]!;
    this.current = this.chunks[c]!;
    this.currentStart = starts[c]!;
    return this.current[i - this.currentStart]!;
  }

  *range(prefix: string, after?: string): Generator<string> {
    const { start, end } = this.span(prefix, after);
    for (let i = start; i < end; i++) yield this.at(i);
  }

  /** The chunk that holds `key` or would take it: the first whose last key is not below it (the last chunk when none is). */
  private chunkFor(key: string): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const chunk = this.chunks[mid]!;
      if (chunk[chunk.length - 1]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The number of keys below `key` (or at most `key` when `inclusive`). */
  private position(key: string, inclusive: boolean): number {
    if (this.count === 0) return 0;
    const c = inclusive ? this.chunkAfter(key) : this.chunkFor(key);
    if (c >= this.chunks.length) return this.count;
    const chunk = this.chunks[c]!;
    return this.chunkStarts()[c]! + (inclusive ? upperBound(chunk, key) : lowerBound(chunk, key));
  }

  /** The first chunk whose last key is above `key` (chunks.length when none is). */
  private chunkAfter(key: string): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const chunk = this.chunks[mid]!;
      if (chunk[chunk.length - 1]! <= key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private changed(): void {
    this.starts = undefined;
    this.current = undefined;
  }

  private chunkStarts(): number[] {
    if (this.starts) return this.starts;
    const starts = new Array<number>(this.chunks.length);
    let n = 0;
    for (let c = 0; c < this.chunks.length; c++) {
      starts[c] = n;
      n += this.chunks[c]!.length;
    }
    return (this.starts = starts);
  }
}

/** The smallest string greater than every string with this prefix. */
function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

function lowerBound(a: readonly string[], x: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function upperBound(a: readonly string[], x: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function upperBoundNumber(a: readonly number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
