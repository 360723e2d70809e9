// raft/core/read-only.ts owns the leader's pending linearizable reads (ReadIndex, thesis
// §6.4): each request remembers the commit index at the time it arrived and collects heartbeat
// acknowledgements; once a quorum acknowledged a heartbeat sent after the request, the leader
// knows it was still leader when the request arrived, and the read may be served at that index.

import type { Message, NodeId } from '../types.js';
import { bytesKey } from './messages.js';

export type ReadOnlyOption = 'safe' | 'lease-based';

/** A read request answered: serve it once the local state machine has applied `index`. */
export interface ReadState {
  index: number;
  /** The context given to readIndex(); identifies the request. */
  requestCtx: Uint8Array;
}

interface ReadIndexStatus {
  req: Message;
  index: number;
  acks: Map<NodeId, boolean>;
}

export class ReadOnly {
  readonly option: ReadOnlyOption;
  private pending = new Map<string, ReadIndexStatus>();
  /** Request keys in arrival order: an ack for one request also confirms every earlier one. */
  private queue: string[] = [];

  constructor(option: ReadOnlyOption) {
    this.option = option;
  }

  /** Adds a request that arrived when the commit index was `index`. Duplicate contexts are ignored. */
  addRequest(index: number, m: Message): void {
    const key = bytesKey(m.context);
    if (this.pending.has(key)) return;
    this.pending.set(key, { index, req: m, acks: new Map() });
    this.queue.push(key);
  }

  /** Records that `id` acknowledged the heartbeat carrying ctx; returns the acks so far. */
  recvAck(id: NodeId, ctx: Uint8Array): ReadonlyMap<NodeId, boolean> | undefined {
    const rs = this.pending.get(bytesKey(ctx));
    if (!rs) return undefined;
    rs.acks.set(id, true);
    return rs.acks;
  }

  /** Removes and returns every request up to and including the one with ctx (all confirmed). */
  advance(ctx: Uint8Array): { req: Message; index: number }[] {
    const key = bytesKey(ctx);
    const at = this.queue.indexOf(key);
    if (at < 0) return [];
    const done = this.queue.slice(0, at + 1);
    this.queue = this.queue.slice(at + 1);
    return done.map((k) => {
      const rs = this.pending.get(k) as ReadIndexStatus;
      this.pending.delete(k);
      return { req: rs.req, index: rs.index };
    });
  }

  /** Context of the newest pending request: heartbeats carry it so acks confirm all pending. */
  lastPendingRequestCtx(): Uint8Array | undefined {
    if (this.queue.length === 0) return undefined;
    return (this.pending.get(this.queue[this.queue.length - 1]) as ReadIndexStatus).req.context;
  }

  pendingCount(): number {
    return this.queue.length;
  }
}
