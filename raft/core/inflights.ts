// raft/core/inflights.ts owns the leader's flow-control window toward one follower: the
// MsgApps sent but not yet acknowledged, bounded both by count and by bytes. When full the
// leader stops pipelining to that follower until acknowledgements free room.

import { invariant } from './errors.js';

export class Inflights {
  /** Last entry index of each inflight MsgApp, in send order (ascending). */
  private indexes: number[] = [];
  private sizes: number[] = [];
  private bytes = 0;
  readonly maxCount: number;
  /** 0 means no byte limit. */
  readonly maxBytes: number;

  constructor(maxCount: number, maxBytes: number) {
    this.maxCount = maxCount;
    this.maxBytes = maxBytes;
  }

  clone(): Inflights {
    const c = new Inflights(this.maxCount, this.maxBytes);
    c.indexes = [...this.indexes];
    c.sizes = [...this.sizes];
    c.bytes = this.bytes;
    return c;
  }

  /** Records a MsgApp whose last entry is `index`, carrying `bytes` of entries. */
  add(index: number, bytes: number): void {
    invariant(!this.full(), 'cannot add into a full inflights');
    const last = this.indexes[this.indexes.length - 1];
    invariant(last === undefined || index > last, () => `inflight index ${index} not above ${last}`);
    this.indexes.push(index);
    this.sizes.push(bytes);
    this.bytes += bytes;
  }

  /** The follower acknowledged everything up to `to`: free those messages. */
  freeLE(to: number): void {
    let n = 0;
    while (n < this.indexes.length && this.indexes[n] <= to) {
      this.bytes -= this.sizes[n];
      n++;
    }
    if (n > 0) {
      this.indexes = this.indexes.slice(n);
      this.sizes = this.sizes.slice(n);
    }
  }

  full(): boolean {
    return this.indexes.length >= this.maxCount || (this.maxBytes > 0 && this.bytes >= this.maxBytes);
  }

  count(): number {
    return this.indexes.length;
  }

  reset(): void {
    this.indexes = [];
    this.sizes = [];
    this.bytes = 0;
  }
}
