// raft/transport/transport.ts owns the contract between a Raft driver and the network: the
// driver hands over outgoing messages after it has persisted the Ready they came from, and
// receives incoming messages and delivery reports through a TransportHandler.
// Implementations: http2-transport.ts (mutual TLS between processes) and local-transport.ts
// (in-process, for tests). Raft tolerates loss, duplication and reordering across batches, so
// a transport may drop; it must never block the caller.

import type { Message, NodeId } from '../types.js';

export type SnapshotStatus = 'finish' | 'failure';

/** What the transport calls back into. All methods are called synchronously and must not throw. */
export interface TransportHandler {
  /**
   * One message from a peer, already decoded and addressed to this member. Messages from one
   * peer arrive in the order that peer sent them, except snapshots, which travel separately.
   */
  process(message: Message): void;
  /** Messages to `id` were dropped (queue full, connection failed): the leader should probe it. */
  reportUnreachable(id: NodeId): void;
  /** Outcome of sending a snapshot message to `id` (etcd's ReportSnapshot). */
  reportSnapshot(id: NodeId, status: SnapshotStatus): void;
  /**
   * A connection to `id` was refused: nothing listens at its address, so its process is most
   * likely gone (a crash, kill -9 or a stop), not merely slow or cut off. Stronger than
   * unreachable, and only a hint (transports that cannot tell never call it).
   */
  reportPeerDown(id: NodeId): void;
  /**
   * Optional. Receiver side, asked once per incoming connection (per message in process): the
   * log index at which this member applied the removal of `from` from the cluster, when `from`
   * is not a member again and the applied index it announced (`fromApplied`) is before that
   * index: it is a removed member that never learnt of its removal (stopped or cut off then),
   * and its traffic is refused with that index (etcd's "removed member"). Undefined accepts.
   * A sender that announced nothing (an earlier version) is never asked about.
   */
  removedAt?(from: NodeId, fromApplied: number): number | undefined;
  /** Optional. Sender side: this member's applied log index, announced on connecting (see removedAt). */
  appliedIndex?(): number;
  /** Optional. Sender side: peer `by` refused this member as one removed from the cluster at log index `removedAt`. */
  reportRemoved?(by: NodeId, removedAt: number): void;
}

export interface Transport {
  /** Starts accepting connections. Resolves once listening (a no-op for in-process transports). */
  start(): Promise<void>;
  /**
   * Queues messages for their `to` peers and returns at once. Messages queued in one call (and
   * in calls within the same synchronous run) go to each peer as one batch. Messages to an
   * unknown peer, or beyond a peer's queue bound, are dropped and reported unreachable;
   * snapshot messages (type Snap) are streamed on their own channel and reported through
   * reportSnapshot. The caller keeps ownership of the array; the messages must not be
   * mutated afterwards.
   */
  send(messages: readonly Message[]): void;
  /** Starts (or keeps) a connection to `id` at `url`. Adding a known peer is a no-op. */
  addPeer(id: NodeId, url: string): void;
  /**
   * Stops sending to `id`; queued messages are dropped, an in-flight snapshot fails. The
   * connections `id` opened to this member may close too (a member leaving the membership:
   * reconnecting, it learns whether it was removed; see TransportHandler.removedAt).
   */
  removePeer(id: NodeId): void;
  /** Changes `id`'s address; the next connection attempt uses it. */
  updatePeer(id: NodeId, url: string): void;
  /**
   * Closes every connection and the listener. Afterwards send() drops silently and no handler
   * method is called. Idempotent.
   */
  stop(): Promise<void>;
}
