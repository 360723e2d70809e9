// raft/node/testing/partitionable-transport.ts owns a Transport decorator for fault injection:
// while partitioned, the member neither sends (messages are dropped and reported unreachable,
// as a real transport does when the network is down) nor receives. Used by the multi-process
// tests to cut one member off without touching the others.

import type { Message, NodeId } from '../../types.js';
import type { SnapshotStatus, Transport, TransportHandler } from '../../transport/transport.js';

export class PartitionableTransport implements Transport {
  partitioned = false;
  private inner!: Transport;
  private readonly handler: TransportHandler;

  constructor(outer: TransportHandler, build: (handler: TransportHandler) => Transport) {
    this.handler = outer;
    const filtered: TransportHandler = {
      process: (m: Message) => {
        if (!this.partitioned) outer.process(m);
      },
      reportUnreachable: (id: NodeId) => outer.reportUnreachable(id),
      reportSnapshot: (id: NodeId, status: SnapshotStatus) => outer.reportSnapshot(id, status),
      // A cut-off network times connections out; it never shows a refusal.
      reportPeerDown: (id: NodeId) => {
        if (!this.partitioned) outer.reportPeerDown(id);
      },
      ...(outer.removedAt ? { removedAt: (from: NodeId, fromApplied: number) => outer.removedAt!(from, fromApplied) } : {}),
      ...(outer.appliedIndex ? { appliedIndex: () => outer.appliedIndex!() } : {}),
      ...(outer.reportRemoved ? { reportRemoved: (by: NodeId, at: number) => outer.reportRemoved!(by, at) } : {}),
    };
    this.inner = build(filtered);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(messages: readonly Message[]): void {
    if (!this.partitioned) return this.inner.send(messages);
    for (const m of messages) {
      if (m.snapshot) this.handler.reportSnapshot(m.to, 'failure');
      this.handler.reportUnreachable(m.to);
    }
  }

  addPeer(id: NodeId, url: string): void {
    this.inner.addPeer(id, url);
  }

  removePeer(id: NodeId): void {
    this.inner.removePeer(id);
  }

  updatePeer(id: NodeId, url: string): void {
    this.inner.updatePeer(id, url);
  }

  stop(): Promise<void> {
    return this.inner.stop();
  }
}
