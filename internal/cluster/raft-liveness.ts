// internal/cluster/raft-liveness owns the diagnostics that explain a lost leader, in the spirit
// of etcd's "leader failed to send out heartbeat on time" and "slow fdatasync" warnings: it
// sits between the Raft node and its transport and log store (wrappers that only observe) and
// watches the process's own event loop, and warns, with the figures, when
//   - the event loop was blocked for a good part of an election timeout;
//   - the leader sent a heartbeat to a peer much later than one heartbeat interval after the last;
//   - a member heard nothing from its leader for half an election timeout;
//   - a log write took long (fsync);
//   - the term moved (an election was held);
//   - this member left the membership it applied (removed while still running: it knows no
//     leader from then, and would otherwise say nothing about why);
//   - a peer refused this member as removed (removed while it was stopped or cut off: it never
//     applied its removal, and would otherwise campaign unanswered without saying why).
// The largest gaps since the last scrape are metrics too, and the synced log writes a histogram
// as etcd's WAL fsync one. Imports: raft types, log.

import { Gauge, Histogram, type Registry } from 'prom-client';
import { MessageType, type Message, type NodeId } from '../../raft/types.js';
import type { DurableLogStore } from '../../raft/storage/log-store.js';
import type { Transport, TransportHandler } from '../../raft/transport/transport.js';
import type { Logger } from '../log/logger.js';

export interface LivenessOptions {
  log: Logger;
  heartbeatIntervalMs: number;
  electionTimeoutMs: number;
  /** This member's id. */
  id: NodeId;
  /**
   * This member's view: role, leader, term and whether it is in the membership it applied
   * (undefined before the node runs); polled.
   */
  status: () => { role: string; leader: NodeId; term: number; isMember?: boolean; removed?: { by: NodeId; at: number } } | undefined;
  /** A member's name for the log, when known (default: none; its id is logged). */
  peerName?: (id: NodeId) => string | undefined;
  /** The leader this member knows (0: none); asked for every message, so it must be cheap. */
  leader: () => NodeId;
  /** Clock (ms); performance.now by default. */
  now?: () => number;
}

/** What an operator does with a replica that is no longer a member. */
const ACTION = 'stop it; to bring the name back, start it on an empty data directory with --join and a new token';

/** A log write slower than this is reported (etcd warns of fdatasync above 1 s; a tenth of the election timeout matters here). */
const SLOW_SAVE_MS = 100;

export class RaftLivenessMonitor {
  private readonly now: () => number;
  private readonly lastHeartbeatSent = new Map<NodeId, number>();
  private readonly lastHeardFrom = new Map<NodeId, number>();
  private timer: NodeJS.Timeout | undefined;
  private lastTick = 0;
  private lastTerm = -1;
  /** Membership as last polled: was this replica ever a member, since when is it not, was it said. */
  private membership: { was: boolean; outSince: number | undefined; warned: boolean } = { was: false, outSince: undefined, warned: false };
  /** Largest figures since the last scrape (ms). */
  private max = { loopStall: 0, heartbeatGap: 0, leaderSilence: 0, save: 0 };
  /**
   * Every synced log write, with etcd's etcd_disk_wal_fsync_duration_seconds buckets (1 ms
   * doubling to 8.192 s), so an etcd operator's p99 alert carries over. Made here, registered
   * by registerMetrics, so that writes before the registry exists count too.
   */
  private readonly fsyncs = new Histogram({
    name: 'clusterd_raft_wal_fsync_duration_seconds',
    help: 'Duration of the Raft log writes that were synced (etcd_disk_wal_fsync_duration_seconds).',
    buckets: Array.from({ length: 14 }, (_, k) => 0.001 * 2 ** k),
    registers: [],
  });

  constructor(private readonly o: LivenessOptions) {
    this.now = o.now ?? (() => performance.now());
  }

  /** Starts the event-loop watch and the term watch. */
  start(): void {
    const period = Math.max(10, Math.floor(this.o.heartbeatIntervalMs / 2));
    this.lastTick = this.now();
    this.timer = setInterval(() => {
      const t = this.now();
      const stall = t - this.lastTick - period;
      this.lastTick = t;
      this.note('loopStall', stall);
      if (stall > this.o.electionTimeoutMs / 4) this.o.log.warn('raft liveness: event loop blocked', { ms: Math.round(stall) });
      this.pollStatus();
    }, period);
    this.timer.unref();
  }

  /** One look at the member's status (each tick of the event-loop watch; tests call it directly). */
  pollStatus(): void {
    const s = this.o.status();
    if (!s) return;
    if (s.term !== this.lastTerm) {
      if (this.lastTerm >= 0) this.o.log.warn('raft liveness: term changed', { from: this.lastTerm, to: s.term, role: s.role, leader: s.leader });
      this.lastTerm = s.term;
    }
    if (s.isMember === undefined) return;
    if (s.removed) {
      // Said at once: a peer's refusal is certain, unlike a membership that may be about to change.
      if (this.membership.warned) return;
      this.membership = { was: true, outSince: undefined, warned: true };
      const name = this.o.peerName?.(s.removed.by);
      this.o.log.warn('raft membership: this replica was removed from the cluster while it was stopped or cut off; its peers refuse it', {
        peer: name ?? s.removed.by,
        ...(name === undefined ? {} : { peerId: s.removed.by }),
        removedAtIndex: s.removed.at,
        reason: 'it never applied its own removal, so it still counted itself a member; it campaigns no more, knows no leader, confirms no consistent read and takes no write',
        action: ACTION,
      });
      return;
    }
    const m = this.membership;
    if (s.isMember) {
      this.membership = { was: true, outSince: undefined, warned: false };
      return;
    }
    // Said once, and only of a member that stayed out for two election timeouts: a joiner
    // restoring a snapshot taken before its own admission is out for the moment between
    // installing it and applying the entry that adds it.
    if (!m.was || m.warned) return;
    const t = this.now();
    m.outSince ??= t;
    if (t - m.outSince < 2 * this.o.electionTimeoutMs) return;
    m.warned = true;
    this.o.log.warn('raft membership: this replica is no longer a member of the cluster', {
      reason: 'removed (clusterd members remove) while running: it knows no leader, confirms no consistent read and takes no write',
      action: ACTION,
    });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The handler RaftNode gives the transport, observed: when each peer was last heard from. */
  handler(inner: TransportHandler): TransportHandler {
    return {
      process: (m: Message) => {
        this.received(m);
        inner.process(m);
      },
      reportUnreachable: (id) => inner.reportUnreachable(id),
      reportSnapshot: (id, status) => inner.reportSnapshot(id, status),
      reportPeerDown: (id) => inner.reportPeerDown(id),
      ...(inner.removedAt ? { removedAt: (from: NodeId, fromApplied: number) => inner.removedAt!(from, fromApplied) } : {}),
      ...(inner.appliedIndex ? { appliedIndex: () => inner.appliedIndex!() } : {}),
      ...(inner.reportRemoved ? { reportRemoved: (by: NodeId, at: number) => inner.reportRemoved!(by, at) } : {}),
    };
  }

  /** The transport, observed: when heartbeats leave. */
  transport(inner: Transport): Transport {
    return {
      start: () => inner.start(),
      send: (messages) => {
        this.sending(messages);
        inner.send(messages);
      },
      addPeer: (id, url) => inner.addPeer(id, url),
      removePeer: (id) => {
        this.lastHeartbeatSent.delete(id);
        this.lastHeardFrom.delete(id);
        inner.removePeer(id);
      },
      updatePeer: (id, url) => inner.updatePeer(id, url),
      stop: () => inner.stop(),
    };
  }

  /**
   * The log store, observed: how long each write takes (its save() is wrapped in place, the
   * store keeps its identity). The caller gets the store's own promise back and the timing
   * hangs off it beside the caller, so that observing adds no promise hop to the write path
   * (every reply waits for a save).
   */
  store<S extends DurableLogStore>(inner: S): S {
    const save = inner.save.bind(inner);
    inner.save = (batch) => {
      const t = this.now();
      const saving = save(batch);
      saving.then(
        () => {
          const ms = this.now() - t;
          this.note('save', ms);
          if (batch.sync !== false) this.fsyncs.observe(ms / 1000);
          if (ms > SLOW_SAVE_MS) this.o.log.warn('raft liveness: slow log write', { ms: Math.round(ms), entries: batch.entries.length, sync: batch.sync ?? true });
        },
        // The caller sees (and handles) the failure on the promise it was given.
        () => undefined,
      );
      return saving;
    };
    return inner;
  }

  registerMetrics(registry: Registry): void {
    this.collectInto(registry, 'clusterd_raft_event_loop_stall_seconds_max', 'Longest event-loop stall since the last scrape.', 'loopStall');
    this.collectInto(registry, 'clusterd_raft_heartbeat_send_gap_seconds_max', 'Longest time between two heartbeats this leader sent to one peer, since the last scrape.', 'heartbeatGap');
    this.collectInto(registry, 'clusterd_raft_leader_silence_seconds_max', 'Longest time this member heard nothing from its leader, since the last scrape.', 'leaderSilence');
    this.collectInto(registry, 'clusterd_raft_log_write_seconds_max', 'Longest Raft log write (with fsync) since the last scrape.', 'save');
    registry.registerMetric(this.fsyncs);
  }

  private collectInto(registry: Registry, name: string, help: string, key: keyof RaftLivenessMonitor['max']): void {
    const max = this.max;
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(max[key] / 1000);
        max[key] = 0;
      },
    });
  }

  private note(key: keyof RaftLivenessMonitor['max'], ms: number): void {
    if (ms > this.max[key]) this.max[key] = ms;
  }

  private sending(messages: readonly Message[]): void {
    const t = this.now();
    for (const m of messages) {
      if (m.type !== MessageType.Heartbeat) continue;
      const last = this.lastHeartbeatSent.get(m.to);
      this.lastHeartbeatSent.set(m.to, t);
      if (last === undefined) continue;
      const gap = t - last;
      this.note('heartbeatGap', gap);
      if (gap > 3 * this.o.heartbeatIntervalMs && gap < 4 * this.o.electionTimeoutMs) {
        this.o.log.warn('raft liveness: leader sent a heartbeat late', { to: m.to, gapMs: Math.round(gap), expectedMs: this.o.heartbeatIntervalMs });
      }
    }
  }

  /** Milliseconds since this member last heard from `id`, undefined when it never has. */
  silenceMs(id: NodeId): number | undefined {
    const last = this.lastHeardFrom.get(id);
    return last === undefined ? undefined : this.now() - last;
  }

  private received(m: Message): void {
    const t = this.now();
    const last = this.lastHeardFrom.get(m.from);
    this.lastHeardFrom.set(m.from, t);
    if (last === undefined || m.from === this.o.id || this.o.leader() !== m.from) return;
    const gap = t - last;
    this.note('leaderSilence', gap);
    if (gap > this.o.electionTimeoutMs / 2) this.o.log.warn('raft liveness: nothing heard from the leader', { leader: m.from, gapMs: Math.round(gap), then: m.type, entries: m.entries.length });
  }
}
