// raft/transport/peer-queue.ts owns the bounded outgoing queue of one peer. It never blocks
// and never grows past its bounds: push() refuses instead, and the caller reports the peer
// unreachable (Raft recovers lost messages by retrying from the leader's progress).

import type { Message } from '../types.js';

export interface PeerQueueLimits {
  maxMessages: number;
  maxBytes: number;
}

/** A cheap upper-bound estimate of a message's encoded size. */
export function approximateSize(m: Message): number {
  let n = 64 + m.context.length;
  for (const e of m.entries) n += 24 + e.data.length;
  if (m.snapshot) n += 64 + m.snapshot.data.length;
  return n;
}

export class PeerQueue {
  private items: Message[] = [];
  private bytes = 0;

  constructor(private readonly limits: PeerQueueLimits) {}

  get length(): number {
    return this.items.length;
  }

  /** Appends unless a bound would be exceeded; returns whether the message was queued. */
  push(m: Message): boolean {
    const size = approximateSize(m);
    if (this.items.length >= this.limits.maxMessages) return false;
    // A single message larger than maxBytes is still accepted into an empty queue, or it could
    // never be sent at all.
    if (this.items.length > 0 && this.bytes + size > this.limits.maxBytes) return false;
    this.items.push(m);
    this.bytes += size;
    return true;
  }

  /** Removes and returns messages in order, stopping before `maxBytes` would be exceeded (at least one). */
  takeBatch(maxBytes: number): Message[] {
    let taken = 0;
    let size = 0;
    while (taken < this.items.length) {
      const s = approximateSize(this.items[taken]!);
      if (taken > 0 && size + s > maxBytes) break;
      size += s;
      taken++;
    }
    const batch = this.items.splice(0, taken);
    this.bytes -= size;
    return batch;
  }

  /** Drops everything; returns how many messages were dropped. */
  clear(): number {
    const n = this.items.length;
    this.items = [];
    this.bytes = 0;
    return n;
  }
}
