// internal/store/sorted-keys owns a sorted set of string keys with prefix ranges, used by the
// store's key index and by the watch cache (both list keys in order for pagination).
// Binary search over an array: inserts are memmoves, which stay cheap at 10^5 keys.
// Imports: nothing from the project.

export class SortedKeys {
  private readonly keys: string[] = [];

  get size(): number {
    return this.keys.length;
  }

  clear(): void {
    this.keys.length = 0;
  }

  add(key: string): void {
    // Loads (the store's index at open, the watch cache's priming) add keys in ascending order:
    // one comparison with the last key instead of a binary search each.
    const n = this.keys.length;
    if (n === 0 || this.keys[n - 1]! < key) {
      this.keys.push(key);
      return;
    }
    const i = lowerBound(this.keys, key);
    if (this.keys[i] !== key) this.keys.splice(i, 0, key);
  }

  delete(key: string): void {
    const i = lowerBound(this.keys, key);
    if (this.keys[i] === key) this.keys.splice(i, 1);
  }

  /** Index range [start, end) of keys with `prefix`, starting strictly after `after` when given. */
  span(prefix: string, after?: string): { start: number; end: number } {
    const start = after !== undefined && after >= prefix ? upperBound(this.keys, after) : lowerBound(this.keys, prefix);
    const end = prefix === '' ? this.keys.length : lowerBound(this.keys, prefixEnd(prefix));
    return { start, end: Math.max(start, end) };
  }

  at(i: number): string {
    return this.keys[i]!;
  }

  *range(prefix: string, after?: string): Generator<string> {
    const { start, end } = this.span(prefix, after);
    for (let i = start; i < end; i++) yield this.keys[i]!;
  }
}

/** The smallest string greater than every string with this prefix. */
function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

function lowerBound(a: string[], x: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function upperBound(a: string[], x: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
