// raft/transport/local-transport.ts owns an in-process Transport for tests of the driver: every
// member of a LocalNetwork delivers to the others on a later event-loop turn (setImmediate: never synchronously, so
// re-entrancy bugs show up as they would over a socket). The network can cut links both ways
// to simulate partitions; a cut link drops and reports the peer unreachable, while a member that
// stops is reported down to its peers. A member refuses messages from one whose removal it
// applied after that one's applied index (TransportHandler.removedAt), as http2-transport
// refuses its connection: dropped, and the sender is told (reportRemoved).

import { MessageType, type Message, type NodeId } from '../types.js';
import type { Transport, TransportHandler } from './transport.js';

export class LocalNetwork {
  private readonly members = new Map<NodeId, LocalTransport>();
  private readonly cuts = new Set<string>();
  private holding: ((m: Message) => boolean) | undefined;
  private held: Message[] = [];

  /** A transport for member `id`; it joins the network when started. */
  transport(id: NodeId, handler: TransportHandler): LocalTransport {
    return new LocalTransport(id, handler, this);
  }

  /** Cuts every link of `id` in both directions. */
  isolate(id: NodeId): void {
    for (const other of this.members.keys()) if (other !== id) this.cut(id, other);
  }

  /** Cuts the link between a and b in both directions. */
  cut(a: NodeId, b: NodeId): void {
    this.cuts.add(`${a}>${b}`);
    this.cuts.add(`${b}>${a}`);
  }

  healAll(): void {
    this.cuts.clear();
  }

  /**
   * Holds back the messages `which` selects, cut links or not, as a stalled connection would
   * (the sender sees them sent), until release().
   */
  hold(which: (m: Message) => boolean): void {
    this.holding = which;
  }

  /** Stops holding and delivers what was held to the members still there; returns how many. */
  release(): number {
    const held = this.held;
    this.holding = undefined;
    this.held = [];
    for (const m of held) {
      const target = this.members.get(m.to);
      if (target) setImmediate(() => target.receive(m));
    }
    return held.length;
  }

  /** @internal */ join(t: LocalTransport): void {
    this.members.set(t.id, t);
  }

  /**
   * A stopped member's peers learn it is down, as a process's peers do when its address starts
   * refusing connections (http2-transport's reportPeerDown). A cut link never reports this.
   */
  /** @internal */ leave(t: LocalTransport): void {
    if (this.members.get(t.id) !== t) return;
    this.members.delete(t.id);
    for (const other of this.members.values()) other.peerLeft(t.id);
  }

  /** @internal Returns false when the message cannot be delivered. */
  route(sender: LocalTransport, m: Message): boolean {
    const from = sender.id;
    if (this.holding?.(m)) {
      this.held.push(structuredClone(m));
      return true;
    }
    const target = this.members.get(m.to);
    if (!target || this.cuts.has(`${from}>${m.to}`)) return false;
    const removedAt = target.refusal(from, sender.appliedIndex());
    if (removedAt !== undefined) {
      sender.refusedAsRemoved(m.to, removedAt);
      return false;
    }
    const copy = structuredClone(m);
    setImmediate(() => target.receive(copy));
    return true;
  }
}

export class LocalTransport implements Transport {
  private readonly peers = new Set<NodeId>();
  private running = false;

  constructor(
    readonly id: NodeId,
    private readonly handler: TransportHandler,
    private readonly network: LocalNetwork,
  ) {}

  async start(): Promise<void> {
    this.running = true;
    this.network.join(this);
  }

  send(messages: readonly Message[]): void {
    if (!this.running) return;
    for (const m of messages) {
      const ok = this.peers.has(m.to) && this.network.route(this, m);
      if (m.type === MessageType.Snap) {
        const status = ok ? 'finish' : 'failure';
        queueMicrotask(() => this.running && this.handler.reportSnapshot(m.to, status));
      }
      if (!ok) queueMicrotask(() => this.running && this.handler.reportUnreachable(m.to));
    }
  }

  addPeer(id: NodeId): void {
    this.peers.add(id);
  }

  removePeer(id: NodeId): void {
    this.peers.delete(id);
  }

  updatePeer(): void {
    /* addresses mean nothing in process */
  }

  async stop(): Promise<void> {
    this.running = false;
    this.network.leave(this);
  }

  /** @internal */ receive(m: Message): void {
    if (this.running) this.handler.process(m);
  }

  /** @internal The index at which this member applied `from`'s removal, when it refuses `from` (see TransportHandler.removedAt). */
  refusal(from: NodeId, fromApplied: number | undefined): number | undefined {
    return this.running && fromApplied !== undefined ? this.handler.removedAt?.(from, fromApplied) : undefined;
  }

  /** @internal */ appliedIndex(): number | undefined {
    return this.handler.appliedIndex?.();
  }

  /** @internal Peer `by` refused a message as one from a member removed at `removedAt`. */
  refusedAsRemoved(by: NodeId, removedAt: number): void {
    queueMicrotask(() => this.running && this.handler.reportRemoved?.(by, removedAt));
  }

  /** @internal */ peerLeft(id: NodeId): void {
    if (this.peers.has(id)) queueMicrotask(() => this.running && this.handler.reportPeerDown(id));
  }
}
