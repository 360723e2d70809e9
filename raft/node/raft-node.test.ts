// RaftNode driven in-process: three or four members over LocalNetwork, memory-level log
// stores and a ManualClock, so time moves only when the test advances it (no real sleeps).
// Covers: election and proposals from any member, read barriers, restart from the store,
// snapshot catch-up of a new member, removal, leadership transfer, the precise rejection
// codes of proposals (DROPPED vs OUTCOME_UNKNOWN), membership changes refused before they
// are proposed or ignored when an old log holds one the membership cannot take, and state
// machines applied in batches (StateMachine.applyBatch), the bound on pending proposals, and
// state machines that are their own snapshot (StateMachine.persist: in-place snapshots).

import { MemoryLevel } from 'memory-level';
import type { AbstractLevel } from 'abstract-level';
import { afterEach, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelLogStore, type LevelLogStoreOptions } from '../storage/level-log-store.js';
import type { DurableLogStore, LogSaveBatch } from '../storage/log-store.js';
import { LocalNetwork } from '../transport/local-transport.js';
import type { TransportHandler } from '../transport/transport.js';
import { removedMembersFile, type RemovedMembersStore } from '../storage/removed-members.js';
import { encodeConfChange } from '../core/conf-change.js';
import { ConfChangeType, EntryType, MessageType, type Message, type NodeId } from '../types.js';
import { isRaftNodeError } from './node-errors.js';
import { RaftNode } from './raft-node.js';
import { BatchingKvStateMachine, KvStateMachine, encodeKvCommand } from './testing/kv-state-machine.js';
import { ManualClock } from './testing/manual-clock.js';

type Db = AbstractLevel<Uint8Array, Uint8Array, Uint8Array>;
const TICK = 10;

/** Lets pending I/O callbacks and microtasks run (memory-level completes on later turns). */
async function settle(turns = 8): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}

class Cluster {
  readonly clock = new ManualClock();
  readonly net = new LocalNetwork();
  readonly dbs = new Map<NodeId, Db>();
  readonly sms = new Map<NodeId, KvStateMachine>();
  readonly nodes = new Map<NodeId, RaftNode>();
  readonly peers = new Map<NodeId, string>();
  /** Every save() and compact() each member's store received, in order. */
  readonly writes = new Map<NodeId, StoreWrite[]>();
  /** Every batch each member handed to its transport. */
  readonly sent = new Map<NodeId, Message[][]>();
  readonly gates = new Map<NodeId, SaveGate>();
  /** The handler each member gave its transport (a test may speak for a peer through it). */
  readonly handlers = new Map<NodeId, TransportHandler>();

  constructor(
    private readonly opts: {
      snapshotEntries?: number;
      catchUpEntries?: number;
      proposalTimeoutMs?: number;
      stateMachine?: (id: NodeId) => KvStateMachine;
      bootstrapLearners?: NodeId[];
      onFatal?: (id: NodeId, err: Error) => void;
      maxPendingProposals?: number;
      /** Options of each member's (memory-level) log store: a snapshot directory, say. */
      storeOptions?: (id: NodeId) => LevelLogStoreOptions;
      /** Each member's RaftNodeOptions.removedMembers. */
      removedMembers?: (id: NodeId) => RemovedMembersStore;
      /** Seeds each member's election timeouts (seed + id), for a reproducible run. */
      seed?: number;
    } = {},
  ) {}

  async start(id: NodeId, peers: ReadonlyMap<NodeId, string> = this.peers, join = false): Promise<RaftNode> {
    let db = this.dbs.get(id);
    if (!db) {
      db = new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' }) as unknown as Db;
      this.dbs.set(id, db);
    }
    const sm = this.opts.stateMachine?.(id) ?? new KvStateMachine();
    this.sms.set(id, sm);
    const writes: StoreWrite[] = [];
    this.writes.set(id, writes);
    const sent: Message[][] = [];
    this.sent.set(id, sent);
    const node = await RaftNode.start({
      id,
      peers,
      join,
      bootstrapLearners: this.opts.bootstrapLearners,
      store: recordingStore(new LevelLogStore(db, this.opts.storeOptions?.(id)), writes, this.gates.get(id) ?? this.gates.set(id, new SaveGate()).get(id)!),
      transport: (handler) => {
        this.handlers.set(id, handler);
        const t = this.net.transport(id, handler);
        const send = t.send.bind(t);
        t.send = (msgs) => {
          sent.push([...msgs]);
          send(msgs);
        };
        return t;
      },
      stateMachine: sm,
      tickMs: TICK,
      electionTicks: 10,
      heartbeatTicks: 1,
      snapshotEntries: this.opts.snapshotEntries ?? 10_000,
      catchUpEntries: this.opts.catchUpEntries ?? 5_000,
      proposalTimeoutMs: this.opts.proposalTimeoutMs ?? 60_000,
      maxPendingProposals: this.opts.maxPendingProposals,
      readTimeoutMs: 2_000,
      clock: this.clock,
      // Seeded election timeouts, so that a run's schedule is the same every time (the clock is
      // manual too): one test failed now and then on the draws of node:crypto.
      random: seeded((this.opts.seed ?? 1_000) + id),
      ...(this.opts.removedMembers ? { removedMembers: this.opts.removedMembers(id) } : {}),
      onFatal: (err) => {
        if (this.opts.onFatal) this.opts.onFatal(id, err);
        else throw err;
      },
    });
    this.nodes.set(id, node);
    return node;
  }

  async startAll(n: number): Promise<void> {
    for (let id = 1; id <= n; id++) this.peers.set(id, `local://${id}`);
    for (let id = 1; id <= n; id++) await this.start(id);
  }

  /** Advances time tick by tick, letting I/O settle in between, until `cond` holds. */
  async runUntil(cond: () => boolean, maxTicks = 500): Promise<void> {
    for (let i = 0; i < maxTicks; i++) {
      if (cond()) return;
      this.clock.advance(TICK);
      await settle();
    }
    if (!cond()) throw new Error(`condition not reached in ${maxTicks} ticks`);
  }

  /** Resolves `p` while advancing time. */
  async drive<T>(p: Promise<T>, maxTicks = 500): Promise<T> {
    let done = false;
    const tracked = p.finally(() => (done = true));
    tracked.catch(() => undefined);
    await this.runUntil(() => done, maxTicks);
    return tracked;
  }

  leader(among: Iterable<RaftNode> = this.nodes.values()): RaftNode | undefined {
    return [...among].find((n) => n.status().role === 'leader');
  }

  async electLeader(among?: RaftNode[]): Promise<RaftNode> {
    await this.runUntil(() => this.leader(among) !== undefined);
    const l = this.leader(among)!;
    // Wait until every listed member knows it, so that proposals from followers are forwarded.
    await this.runUntil(() => (among ?? [...this.nodes.values()]).every((n) => n.status().leader === l.id));
    return l;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.nodes.values()].map((n) => n.stop()));
  }
}

const put = (key: string, value: string): Uint8Array => encodeKvCommand({ op: 'put', key, value });

/** A deterministic RandomSource (a linear congruential generator). */
function seeded(seed: number): { int(n: number): number } {
  let x = seed >>> 0;
  return {
    int: (n) => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return (x >>> 16) % n;
    },
  };
}

type StoreWrite = { kind: 'save'; batch: LogSaveBatch } | { kind: 'compact'; index: number };

/** Holds back a store's saves while closed; release() lets the waiting ones through. */
class SaveGate {
  closed = false;
  private waiting: (() => void)[] = [];
  pass(): Promise<void> {
    return this.closed ? new Promise((resolve) => this.waiting.push(resolve)) : Promise.resolve();
  }
  get held(): number {
    return this.waiting.length;
  }
  release(): void {
    for (const f of this.waiting.splice(0)) f();
  }
}

/** Wraps a store so that a test can see each write the driver made, and hold saves back. */
function recordingStore(inner: DurableLogStore, writes: StoreWrite[], gate: SaveGate): DurableLogStore {
  return {
    open: () => inner.open(),
    close: () => inner.close(),
    save: async (batch) => {
      writes.push({ kind: 'save', batch });
      await gate.pass();
      return inner.save(batch);
    },
    compact: (index) => {
      writes.push({ kind: 'compact', index });
      return inner.compact(index);
    },
    ...(inner.stageSnapshot ? { stageSnapshot: (snap) => inner.stageSnapshot!(snap) } : {}),
    ...(inner.stageSnapshotStream ? { stageSnapshotStream: (meta, chunks) => inner.stageSnapshotStream!(meta, chunks) } : {}),
    ...(inner.recordedSnapshotData ? { recordedSnapshotData: () => inner.recordedSnapshotData!() } : {}),
  };
}

/** A KV state machine whose snapshot images are finished by the test (finishSnapshots). */
class SlowSnapshotKv extends KvStateMachine {
  private pending: (() => void)[] = [];
  /** Off while RaftNode bootstraps (it awaits the initial image). */
  hold = false;
  snapshotsRequested = 0;
  override snapshot(): Promise<Uint8Array> {
    const image = super.snapshot();
    if (!this.hold) return image;
    this.snapshotsRequested++;
    return new Promise((resolve) => this.pending.push(() => resolve(image)));
  }
  finishSnapshots(): void {
    for (const f of this.pending.splice(0)) f();
  }
}

let cluster: Cluster | null = null;
afterEach(async () => {
  await cluster?.stopAll();
  cluster = null;
});

describe('RaftNode', () => {
  it('elects a leader and applies proposals from any member, in order, everywhere', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    const follower = [...c.nodes.values()].find((n) => n !== leader)!;
    const a = await c.drive(leader.propose(put('a', '1')));
    const b = await c.drive(follower.propose(put('a', '2')));
    expect(a.result).toBeNull();
    expect(b.result).toBe('1');
    expect(b.index).toBeGreaterThan(a.index);
    await c.runUntil(() => [...c.sms.values()].every((sm) => sm.get('a') === '2'));
    for (const sm of c.sms.values()) expect(sm.appliedIndexes).toEqual([...sm.appliedIndexes].sort((x, y) => x - y));
  });

  it('serves a read barrier that covers every acknowledged write', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    const w = await c.drive(leader.propose(put('k', 'v')));
    for (const n of c.nodes.values()) {
      const idx = await c.drive(n.readIndex());
      expect(idx).toBeGreaterThanOrEqual(w.index);
      expect(c.sms.get(n.id)!.get('k')).toBe('v');
    }
  });

  it('rejects with PROPOSAL_DROPPED when no leader is known', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const n1 = c.nodes.get(1)!;
    const err = await n1.propose(put('x', 'y')).catch((e: unknown) => e);
    expect(isRaftNodeError(err, 'PROPOSAL_DROPPED')).toBe(true);
    const readErr = await n1.readIndex().catch((e: unknown) => e);
    expect(isRaftNodeError(readErr, 'READ_INDEX_FAILED')).toBe(true);
  });

  it('a deposed leader reports PROPOSAL_DROPPED once another leader fills the slot', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const old = await c.electLeader();
    await c.drive(old.propose(put('before', '1')));
    c.net.isolate(old.id);
    const lost = old.propose(put('lost', 'x'));
    lost.catch(() => undefined);
    const others = [...c.nodes.values()].filter((n) => n !== old);
    const next = await c.electLeader(others);
    for (let i = 0; i < 3; i++) await c.drive(next.propose(put('after', String(i))));
    c.net.healAll();
    const err = await c.drive(lost).catch((e: unknown) => e);
    expect(isRaftNodeError(err, 'PROPOSAL_DROPPED')).toBe(true);
    await c.runUntil(() => c.sms.get(old.id)!.get('after') === '2');
    expect(c.sms.get(old.id)!.get('lost')).toBeUndefined();
  });

  it('times out a proposal that cannot commit with PROPOSAL_OUTCOME_UNKNOWN', async () => {
    const c = (cluster = new Cluster({ proposalTimeoutMs: 500 }));
    await c.startAll(3);
    const leader = await c.electLeader();
    c.net.isolate(leader.id);
    const err = await c.drive(leader.propose(put('p', 'q'))).catch((e: unknown) => e);
    expect(isRaftNodeError(err, 'PROPOSAL_OUTCOME_UNKNOWN')).toBe(true);
  });

  it('fails a write forwarded to a leader that is gone as PROPOSAL_DROPPED once the new leader\'s first entry is applied, and never appends it later', async () => {
    // The proposal timeout is far away (60 s = 6,000 ticks): only the leader change may end it.
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const old = await c.electLeader();
    const follower = [...c.nodes.values()].find((n) => n !== old)!;
    // The old leader is cut off with the forwarded proposal held back, not lost: it arrives
    // once the partition heals, at a member that no longer leads that term.
    c.net.hold((m) => m.from === follower.id && m.to === old.id && m.type === MessageType.Prop);
    c.net.isolate(old.id);
    const forwarded = follower.propose(put('forwarded', 'x'));
    forwarded.catch(() => undefined);
    const next = await c.electLeader([...c.nodes.values()].filter((n) => n !== old));
    // Answered as soon as the new leader's no-op is applied here, far inside the proposal
    // timeout and before the two election timeouts that end an orphan.
    const err = await c.drive(forwarded, 30).catch((e: unknown) => e);
    expect(isRaftNodeError(err, 'PROPOSAL_DROPPED')).toBe(true);
    expect((err as Error).message).toMatch(/lost leadership before appending it/);
    c.net.healAll();
    expect(c.net.release()).toBe(1);
    await c.drive(follower.propose(put('marker', '1')));
    await c.runUntil(() => [...c.nodes.values()].every((n) => c.sms.get(n.id)!.get('marker') === '1'));
    for (const n of c.nodes.values()) expect(c.sms.get(n.id)!.get('forwarded')).toBeUndefined();
    // The cluster goes on; a write made after the change commits from the same follower.
    await c.drive(follower.propose(put('after', '1')));
    expect(c.sms.get(next.id)!.get('after')).toBe('1');
  });

  it('fails a forwarded write lost on the way, the leader unchanged, as PROPOSAL_DROPPED once a later one is appended; its late copy is never appended', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    const follower = [...c.nodes.values()].find((n) => n !== leader)!;
    // The first proposal the follower forwards is held back (a connection that stalls), the
    // leader and its term stay the same.
    let first = true;
    c.net.hold((m) => {
      if (m.from !== follower.id || m.type !== MessageType.Prop || !first) return false;
      first = false;
      return true;
    });
    const lost = follower.propose(put('lost', 'x'));
    lost.catch(() => undefined);
    await c.runUntil(() => !first);
    await c.drive(follower.propose(put('later', 'y')));
    const err = await c.drive(lost, 5).catch((e: unknown) => e);
    expect(isRaftNodeError(err, 'PROPOSAL_DROPPED')).toBe(true);
    expect((err as Error).message).toMatch(/was appended before it/);
    // The held copy arrives after all: the leader has appended a later one of the same
    // proposer in this term, so it drops it.
    expect(c.net.release()).toBe(1);
    await c.drive(follower.propose(put('marker', '1')));
    await c.runUntil(() => [...c.nodes.values()].every((n) => c.sms.get(n.id)!.get('marker') === '1'));
    for (const n of c.nodes.values()) {
      expect(c.sms.get(n.id)!.get('later')).toBe('y');
      expect(c.sms.get(n.id)!.get('lost')).toBeUndefined();
    }
  });

  it('a follower forwards its proposals in the order it made them, whatever its writes: none is dropped as overtaken', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    const followers = [...c.nodes.values()].filter((n) => n !== leader);
    // Followers' writes (the leader's appends) finish a seeded number of I/O turns later, and
    // proposals arrive between them: some are handed to the core by the loop just before it
    // takes a Ready with a write, others while such a write is in flight (sent early). A
    // proposal of the first kind must not wait for the write while one of the second overtakes
    // it: the leader appends a proposer's forwarded proposals only in order, so the overtaken
    // one would be dropped although nothing was lost.
    let seed = 11;
    const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    for (const f of followers) c.gates.get(f.id)!.closed = true;
    const outcomes: Promise<string>[] = [];
    for (let turn = 0; turn < 400; turn++) {
      if (rand(2) === 0) {
        const f = followers[rand(followers.length)]!;
        outcomes.push(f.propose(put(`k${turn}`, String(turn))).then(
          () => 'ok',
          (e: unknown) => (e as Error).message,
        ));
      }
      if (rand(4) === 0) void leader.propose(put(`l${turn}`, String(turn))).catch(() => undefined);
      for (const f of followers) if (rand(3) === 0) c.gates.get(f.id)!.release();
      await new Promise((r) => setImmediate(r));
    }
    for (const f of followers) {
      const gate = c.gates.get(f.id)!;
      gate.closed = false;
      gate.release();
    }
    const results = await c.drive(Promise.all(outcomes));
    expect(results.length).toBeGreaterThan(150);
    expect(results.filter((r) => r !== 'ok')).toEqual([]);
  });

  it('a leader cut off from its quorum answers its uncommitted writes OUTCOME_UNKNOWN within two election timeouts of stepping down, not at the proposal timeout', async () => {
    // The proposal timeout is far away (60 s = 6,000 ticks). The leader appends the write but
    // cannot commit it; check-quorum makes it step down after an election timeout; nobody will
    // answer for the entry while it is cut off (it may still commit: a later term of its own,
    // or a voter that holds it), so the client hears "may still be applied" soon after.
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.propose(put('before', '1')));
    c.net.isolate(leader.id);
    const cut = leader.propose(put('cut-off', 'x'));
    cut.catch(() => undefined);
    // Step down (about one election timeout, 10 ticks) plus two election timeouts, with room.
    const err = await c.drive(cut, 60).catch((e: unknown) => e);
    expect(isRaftNodeError(err, 'PROPOSAL_OUTCOME_UNKNOWN'), String(err)).toBe(true);
    expect((err as Error).message).toMatch(/no leader took over the entry/);
    // Once healed the member follows the new leader and takes writes again.
    c.net.healAll();
    const next = await c.electLeader();
    await c.drive(next.propose(put('after', '1')));
    await c.runUntil(() => c.sms.get(leader.id)!.get('after') === '1');
  });

  /**
   * f1 forwards a write; the leader appends it and sends it to f1 (f2 is cut off) while the
   * leader's own write of it is held, so it cannot commit: f1 holds the entry in its log,
   * uncommitted. Then the leader is cut off for good.
   */
  const strandOnFollower = async (c: Cluster): Promise<{ old: RaftNode; f1: RaftNode; f2: RaftNode; w: Promise<{ index: number; result: unknown }> }> => {
    await c.startAll(3);
    const old = await c.electLeader();
    const [f1, f2] = [...c.nodes.values()].filter((n) => n !== old) as [RaftNode, RaftNode];
    c.net.isolate(f2.id);
    const gate = c.gates.get(old.id)!;
    gate.closed = true;
    const w = f1.propose(put('stranded', 'x'));
    w.catch(() => undefined);
    await c.runUntil(() => c.writes.get(f1.id)!.some((x) => x.kind === 'save' && x.batch.entries.some((e) => e.data.length > 0)), 50);
    await settle();
    c.net.isolate(old.id);
    gate.closed = false;
    gate.release();
    return { old, f1, f2, w };
  };

  it('a follower left without a quorum answers a write already in its log OUTCOME_UNKNOWN within two election timeouts of losing its leader', async () => {
    const c = (cluster = new Cluster());
    const { f1, w } = await strandOnFollower(c);
    // Leader loss noticed within about two election timeouts (randomized), then two more.
    const err = await c.drive(w, 80).catch((e: unknown) => e);
    expect(isRaftNodeError(err, 'PROPOSAL_OUTCOME_UNKNOWN'), String(err)).toBe(true);
    expect((err as Error).message).toMatch(/no leader took over the entry/);
    expect(c.sms.get(f1.id)!.get('stranded')).toBeUndefined();
  });

  it('a write already in a follower\'s log waits for a new leader to settle it when one is known in time, and commits', async () => {
    const c = (cluster = new Cluster());
    const { old, f1, w } = await strandOnFollower(c);
    // f2 is back: f1, whose log is the longer, is elected and commits the entry.
    c.net.healAll();
    c.net.isolate(old.id);
    const result = await c.drive(w, 300);
    expect(result.index).toBeGreaterThan(0);
    expect(c.sms.get(f1.id)!.get('stranded')).toBe('x');
  });

  it('a forwarded write the old leader replicated before it died still commits after the leader change', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const old = await c.electLeader();
    const [f1, f2] = [...c.nodes.values()].filter((n) => n !== old);
    // The old leader appends the forwarded entry and sends it to both followers, then dies.
    const w = f1!.propose(put('survivor', 'x'));
    w.catch(() => undefined);
    await c.runUntil(() => c.sent.get(old.id)!.some((b) => b.some((m) => m.entries.some((e) => e.data.length > 0 && m.to === f2!.id))), 50);
    c.net.isolate(old.id);
    const result = await c.drive(w, 300);
    expect(result.index).toBeGreaterThan(0);
    expect(c.sms.get(f1!.id)!.get('survivor')).toBe('x');
  });

  it('restarts from its store and rebuilds the state machine', async () => {
    const c = (cluster = new Cluster({ snapshotEntries: 4, catchUpEntries: 1 }));
    await c.startAll(3);
    const leader = await c.electLeader();
    for (let i = 0; i < 10; i++) await c.drive(leader.propose(put(`k${i}`, String(i))));
    const victim = [...c.nodes.values()].find((n) => n !== leader)!;
    await c.runUntil(() => c.sms.get(victim.id)!.get('k9') === '9');
    expect(victim.status().snapshotIndex).toBeGreaterThan(1);
    await victim.stop();
    const again = await c.start(victim.id);
    await c.runUntil(() => c.sms.get(victim.id)!.get('k9') === '9');
    expect(c.sms.get(victim.id)!.data.size).toBe(10);
    await c.drive(again.propose(put('k10', '10')));
  });

  it('adds a member that catches up from a snapshot, then removes another', async () => {
    const c = (cluster = new Cluster({ snapshotEntries: 5, catchUpEntries: 0 }));
    await c.startAll(3);
    const leader = await c.electLeader();
    for (let i = 0; i < 12; i++) await c.drive(leader.propose(put(`k${i}`, String(i))));
    expect(leader.status().snapshotIndex).toBeGreaterThan(5);
    const cs = await c.drive(leader.addMember(4, 'local://4'));
    expect(cs.voters).toContain(4);
    // Joins with an empty store: everything comes from the leader, as a snapshot.
    await c.start(4, new Map([...c.peers, [4, 'local://4']]), true);
    await c.runUntil(() => c.sms.get(4)!.get('k11') === '11');
    expect(c.sms.get(4)!.data.size).toBe(12);
    expect(c.nodes.get(4)!.status().peers.get(1)).toBe('local://1');
    const victim = [...c.nodes.values()].find((n) => n !== leader && n.id !== 4)!;
    const after = await c.drive(leader.removeMember(victim.id));
    expect(after.voters).not.toContain(victim.id);
    await c.drive(c.nodes.get(4)!.propose(put('z', 'z')));
  });

  it('with stores that keep snapshots in files: streams images to files, ships and installs them from files', async () => {
    // A state machine that streams its image (in small slices) and restores from a stream.
    class StreamingKv extends KvStateMachine {
      streamedOut = 0;
      streamedIn = 0;
      snapshotStream(): AsyncIterable<Uint8Array> {
        const image = this.snapshot();
        const self = this;
        return (async function* () {
          const bytes = await image;
          self.streamedOut++;
          for (let at = 0; at < bytes.length; at += 7) yield bytes.subarray(at, at + 7);
        })();
      }
      async restoreStream(chunks: AsyncIterable<Uint8Array>): Promise<void> {
        this.streamedIn++;
        const parts: Uint8Array[] = [];
        for await (const c of chunks) parts.push(c);
        this.restore(Buffer.concat(parts));
      }
    }
    const dir = await mkdtemp(join(tmpdir(), 'raft-node-files-'));
    try {
      const c = (cluster = new Cluster({
        snapshotEntries: 5,
        catchUpEntries: 0,
        stateMachine: () => new StreamingKv(),
        // The log in memory-level (driven by the manual clock), snapshots in real files.
        storeOptions: (id) => ({ snapshotDir: join(dir, String(id), 'snapshots'), snapshotRefs: true }),
      }));
      await c.startAll(3);
      const leader = await c.electLeader();
      // (Snapshot files are written on libuv's threads: more turns per step than memory-level.)
      for (let i = 0; i < 12; i++) await c.drive(leader.propose(put(`k${i}`, String(i))), 20_000);
      expect(leader.status().snapshotIndex).toBeGreaterThan(5);
      expect((c.sms.get(leader.id) as StreamingKv).streamedOut).toBeGreaterThan(0);
      // The leader's snapshot is a file, recorded by reference.
      const snapFiles = async (id: NodeId): Promise<string[]> => (await readdir(join(dir, String(id), 'snapshots'))).filter((n) => n.endsWith('.snap'));
      // (The recorded one, and perhaps a newer one being staged.)
      expect((await snapFiles(leader.id)).length).toBeGreaterThanOrEqual(1);
      expect((await snapFiles(leader.id)).length).toBeLessThanOrEqual(2);
      await c.drive(leader.addMember(4, 'local://4'), 20_000);
      await c.start(4, new Map([...c.peers, [4, 'local://4']]), true);
      await c.runUntil(() => c.sms.get(4)!.get('k11') === '11', 20_000);
      const sm4 = c.sms.get(4) as StreamingKv;
      expect(sm4.data.size).toBe(12);
      expect(sm4.streamedIn).toBe(1);
      // The new member holds the image in a file of its own.
      expect((await snapFiles(4)).length).toBeGreaterThanOrEqual(1);
      // And restarts from it (restored from the file, then the log after it).
      await c.drive(leader.propose(put('after', 'x')), 20_000);
      await c.runUntil(() => c.sms.get(4)!.get('after') === 'x', 20_000);
      await c.nodes.get(4)!.stop();
      await c.start(4, new Map([...c.peers, [4, 'local://4']]));
      await c.runUntil(() => c.sms.get(4)!.get('after') === 'x', 20_000);
      expect((c.sms.get(4) as StreamingKv).streamedIn).toBe(1);
      expect(c.sms.get(4)!.get('k3')).toBe('3');
    } finally {
      await cluster?.stopAll();
      cluster = null;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('adds a learner and promotes it', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.propose(put('a', 'b')));
    const cs = await c.drive(leader.addLearner(4, 'local://4'));
    expect(cs.learners).toEqual([4]);
    await c.start(4, new Map([...c.peers, [4, 'local://4']]), true);
    await c.runUntil(() => c.sms.get(4)!.get('a') === 'b');
    const promoted = await c.drive(leader.promote(4));
    expect(promoted.voters).toContain(4);
    expect(promoted.learners).toEqual([]);
  });

  it('transfers leadership', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    const target = [...c.nodes.values()].find((n) => n !== leader)!;
    await c.drive(leader.transferLeadership(target.id));
    expect(target.status().role).toBe('leader');
    await c.drive(target.propose(put('t', '1')));
  });

  /** Ticks of the manual clock until the members other than `gone` agree on a new leader. */
  async function ticksToNewLeader(c: Cluster, gone: RaftNode): Promise<{ ticks: number; leader: RaftNode }> {
    const others = [...c.nodes.values()].filter((n) => n !== gone);
    let ticks = 0;
    const agreed = (): boolean => {
      const l = c.leader(others);
      return l !== undefined && others.every((n) => n.status().leader === l.id);
    };
    while (!agreed()) {
      if (++ticks > 500) throw new Error('no new leader in 500 ticks');
      c.clock.advance(TICK);
      await settle();
    }
    return { ticks, leader: c.leader(others)! };
  }

  it('followers whose leader\'s process is gone elect a new one without waiting out the election timeout', async () => {
    // electionTicks is 10: a follower that only misses heartbeats campaigns after 10-19 ticks.
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const old = await c.electLeader();
    await old.stop(); // its peers are told it is down (LocalTransport, as a refused connection)
    const { ticks, leader } = await ticksToNewLeader(c, old);
    expect(ticks).toBeLessThan(10);
    expect(leader.stats().leaderDownReports + [...c.nodes.values()].filter((n) => n !== leader && n !== old)[0]!.stats().leaderDownReports).toBe(2);
    await c.drive(leader.propose(put('after', '1')));
  });

  it('members starting together elect their first leader by rank, without waiting out the election timeout', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    let ticks = 0;
    while (!c.leader() || ![...c.nodes.values()].every((n) => n.status().leader === c.leader()!.id)) {
      if (++ticks > 500) throw new Error('no leader in 500 ticks');
      c.clock.advance(TICK);
      await settle();
    }
    expect(ticks).toBeLessThan(10);
    expect(c.leader()!.id).toBe(1); // the first in rank
  });

  it('a member restarted into a running cluster does not disturb its leader', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    const term = leader.status().term;
    const f = [...c.nodes.values()].find((n) => n !== leader)!;
    await f.stop();
    const again = await c.start(f.id);
    await c.runUntil(() => again.status().leader === leader.id);
    await c.runUntil(() => false, 30).catch(() => undefined);
    expect(leader.status()).toMatchObject({ role: 'leader', term });
  });

  it('a leader that is only cut off (no refusal) is replaced after the election timeout, as before', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const old = await c.electLeader();
    c.net.isolate(old.id);
    const { ticks } = await ticksToNewLeader(c, old);
    expect(ticks).toBeGreaterThanOrEqual(10);
    expect([...c.nodes.values()].every((n) => n.stats().leaderDownReports === 0)).toBe(true);
  });

  it('a down report about a member that is not the leader, or on the leader, changes nothing', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    const [f1, f2] = [...c.nodes.values()].filter((n) => n !== leader) as [RaftNode, RaftNode];
    await f2.stop();
    await c.runUntil(() => false, 30).catch(() => undefined);
    expect(leader.status().role).toBe('leader');
    expect(f1.status().leader).toBe(leader.id);
    expect(f1.stats().leaderDownReports + leader.stats().leaderDownReports).toBe(0);
    await c.drive(f1.propose(put('still', '1')));
  });

  it('group commit: commands proposed together become one write and one append per follower', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.propose(put('warm', 'up')));
    const writes = c.writes.get(leader.id)!;
    const sent = c.sent.get(leader.id)!;
    const writesBefore = writes.length;
    const sentBefore = sent.length;
    // As many callers as an HTTP server would hand over in one turn of the event loop.
    const results = await c.drive(Promise.all(Array.from({ length: 20 }, (_, i) => leader.propose(put(`k${i}`, String(i))))));
    const indexes = results.map((r) => r.index);
    expect(indexes).toEqual(indexes.map((_, i) => indexes[0]! + i));
    const withEntries = writes.slice(writesBefore).filter((w) => w.kind === 'save' && w.batch.entries.length > 0);
    expect(withEntries.map((w) => (w.kind === 'save' ? w.batch.entries.length : 0))).toEqual([20]);
    const apps = sent.slice(sentBefore).flat().filter((m) => m.type === MessageType.App && m.entries.length > 0);
    const followers = [...c.nodes.keys()].filter((id) => id !== leader.id);
    expect(apps.map((m) => [m.to, m.entries.length]).sort()).toEqual(followers.map((id) => [id, 20]));
    for (const sm of c.sms.values()) await c.runUntil(() => sm.get('k19') === '19');
  });

  it('tells the store a save is idle only when nothing else is in flight: one put at a time, not one behind an uncommitted entry or with others', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.propose(put('warm', 'up')));
    for (const sm of c.sms.values()) await c.runUntil(() => sm.get('warm') === 'up');
    const entrySaves = (id: NodeId, from: number): LogSaveBatch[] =>
      c.writes.get(id)!.slice(from).flatMap((w) => (w.kind === 'save' && w.batch.entries.length > 0 ? [w.batch] : []));
    const marks = (): Map<NodeId, number> => new Map([...c.writes].map(([id, w]) => [id, w.length]));

    // Several at once: the write carrying them is not idle.
    let from = marks();
    await c.drive(Promise.all(Array.from({ length: 4 }, (_, i) => leader.propose(put(`many${i}`, 'x')))));
    expect(entrySaves(leader.id, from.get(leader.id)!).map((b) => [b.entries.length, b.idle])).toEqual([[4, false]]);

    // One put at a time, as a client with one request in flight: once a run of such writes
    // shows it is no passing lull, every member's writes are idle.
    from = marks();
    for (let i = 0; i < 12; i++) await c.drive(leader.propose(put(`one${i}`, 'x')));
    for (const sm of c.sms.values()) await c.runUntil(() => sm.get('one11') === 'x');
    for (const id of c.nodes.keys()) {
      const saves = entrySaves(id, from.get(id)!);
      expect(saves.length, `member ${id}`).toBe(12);
      expect(saves[0]!.idle, `member ${id}`).toBe(false);
      expect(saves.slice(-3).map((b) => b.idle), `member ${id}`).toEqual([true, true, true]);
    }

    // A put proposed while the previous one is not committed yet (the followers' writes are
    // held): the leader's write of it is not idle, though it carries one entry.
    const followers = [...c.nodes.keys()].filter((id) => id !== leader.id);
    for (const id of followers) c.gates.get(id)!.closed = true;
    from = marks();
    const first = leader.propose(put('held', '1'));
    await c.runUntil(() => entrySaves(leader.id, from.get(leader.id)!).length === 1);
    const second = leader.propose(put('behind', '2'));
    await c.runUntil(() => entrySaves(leader.id, from.get(leader.id)!).length === 2);
    for (const id of followers) {
      const gate = c.gates.get(id)!;
      gate.closed = false;
      gate.release();
    }
    await c.drive(Promise.all([first, second]));
    // Each follower too: its append of the second arrives before it heard the first committed.
    for (const id of [leader.id, ...followers]) {
      expect(entrySaves(id, from.get(id)!).map((b) => [b.entries.length, b.idle]), `member ${id}`).toEqual([
        [1, true],
        [1, false],
      ]);
    }
  });

  it('a leader hands the commands both followers forwarded in one turn to its followers in one append each', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.propose(put('warm', 'up')));
    // A write of the leader in flight (as under load): what arrives meanwhile is batched.
    const gate = c.gates.get(leader.id)!;
    gate.closed = true;
    const held = leader.propose(put('held', '1'));
    await c.runUntil(() => gate.held === 1);
    const sent = c.sent.get(leader.id)!;
    const sentBefore = sent.length;
    const followers = [...c.nodes.values()].filter((n) => n !== leader);
    // Each follower forwards its three in one MsgProp; both arrive in the same turn.
    const forwarded = followers.flatMap((f, i) => [0, 1, 2].map((j) => f.propose(put(`f${i}-${j}`, String(j)))));
    await c.runUntil(() => sent.slice(sentBefore).flat().some((m) => m.type === MessageType.App && m.entries.length > 0));
    await settle();
    const apps = sent.slice(sentBefore).flat().filter((m) => m.type === MessageType.App && m.entries.length > 0);
    expect(apps.map((m) => [m.to, m.entries.length]).sort()).toEqual(followers.map((f) => [f.id, 6]).sort());
    gate.closed = false;
    gate.release();
    await c.drive(held);
    const results = await c.drive(Promise.all(forwarded));
    for (const sm of c.sms.values()) await c.runUntil(() => results.every((_, k) => sm.get(`f${Math.floor(k / 3)}-${k % 3}`) === String(k % 3)));
  });

  it('writes a hard state that only moves the commit index with the next write, not on its own', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    const first = await c.drive(leader.propose(put('a', '1')));
    await c.drive(leader.propose(put('b', '2')));
    for (const [id, writes] of c.writes) {
      const saves = writes.flatMap((w) => (w.kind === 'save' ? [w.batch] : []));
      const alone = saves.filter((b) => b.entries.length === 0 && !b.snapshot && b.sync === false);
      expect(alone, `member ${id}`).toEqual([]);
    }
    // The write of the second command carries the commit of the first.
    const leaderSaves = c.writes.get(leader.id)!.flatMap((w) => (w.kind === 'save' && w.batch.entries.length > 0 ? [w.batch] : []));
    expect(leaderSaves.at(-1)!.hardState!.commit).toBeGreaterThanOrEqual(first.index);
  });

  it('applies committed entries it already holds durably while the next write is in flight', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.propose(put('warm', 'up')));
    // One follower cut off: the leader's own write is part of every quorum (nothing is
    // acknowledged ahead of it, see the next test).
    const [f1, f2] = [...c.nodes.keys()].filter((id) => id !== leader.id);
    c.net.isolate(f2!);
    const gate = c.gates.get(leader.id)!;
    gate.closed = true;
    let aDone = false;
    const a = leader.propose(put('a', '1')).then((r) => ((aDone = true), r));
    const holdsA = (id: NodeId): boolean =>
      c.writes.get(id)!.some((w) => w.kind === 'save' && w.batch.entries.some((e) => new TextDecoder().decode(e.data).includes('"a"')));
    await c.runUntil(() => gate.held === 1 && holdsA(f1!));
    await c.runUntil(() => false, 5).catch(() => undefined);
    expect(aDone).toBe(false);
    const b = leader.propose(put('b', '2'));
    gate.release(); // `a` is now durable on the leader; the write carrying `b` is held
    await c.runUntil(() => aDone);
    expect(gate.held).toBe(1);
    const last = c.writes.get(leader.id)!.at(-1)!;
    expect(last.kind === 'save' && last.batch.entries.length).toBe(1);
    gate.closed = false;
    gate.release();
    expect((await c.drive(b)).index).toBe((await a).index + 1);
    c.net.healAll();
  });

  it('a leader acknowledges an entry both followers hold durably while its own write is held', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.propose(put('warm', 'up')));
    const gate = c.gates.get(leader.id)!;
    gate.closed = true;
    const a = await c.drive(leader.propose(put('a', '1')));
    // Acknowledged and applied here, though the leader's own write of it has not finished.
    expect(gate.held).toBe(1);
    expect(c.sms.get(leader.id)!.get('a')).toBe('1');
    expect(leader.stats().entriesAppliedAhead).toBeGreaterThanOrEqual(1);
    // With one follower cut off, the leader's own write is needed for a quorum: it waits.
    const f = [...c.nodes.values()].find((n) => n !== leader)!;
    c.net.isolate(f.id);
    gate.release();
    let bDone = false;
    const b = leader.propose(put('b', '2')).then((r) => ((bDone = true), r));
    await c.runUntil(() => gate.held === 1);
    await c.runUntil(() => false, 30).catch(() => undefined);
    expect(bDone).toBe(false);
    gate.closed = false;
    gate.release();
    expect((await c.drive(b)).index).toBe(a.index + 1);
    c.net.healAll();
  });

  it('a leader whose own write is held for five election timeouts keeps its leadership: heartbeats and read answers do not wait for it', async () => {
    // Issue 13: a slow fsync on a loaded host held every heartbeat queued behind a read
    // answer until the write finished, and the followers elected another leader.
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.propose(put('warm', 'up')));
    const term = leader.status().term;
    const follower = [...c.nodes.values()].find((n) => n !== leader)!;
    const gate = c.gates.get(leader.id)!;
    gate.closed = true;
    const a = await c.drive(leader.propose(put('a', '1'))); // acknowledged by the followers' copies
    expect(gate.held).toBe(1);
    const read = await c.drive(follower.readIndex());
    expect(read).toBeGreaterThanOrEqual(a.index);
    await c.runUntil(() => false, 50).catch(() => undefined);
    expect(gate.held).toBe(1); // still writing
    for (const n of c.nodes.values()) expect([n.id, n.status().term, n.status().leader]).toEqual([n.id, term, leader.id]);
    gate.closed = false;
    gate.release();
    await c.drive(follower.propose(put('b', '2')));
  });

  it('a single voter does not tell learners of a commit before its own write of the entry is durable', async () => {
    // The voter alone is a quorum: it commits an entry in the Ready that appends it. Sent
    // early, that commit index let the learner apply an entry a crash of the voter could lose.
    const c = (cluster = new Cluster({ bootstrapLearners: [2] }));
    await c.startAll(2);
    const leader = await c.electLeader([c.nodes.get(1)!]);
    const warm = await c.drive(leader.propose(put('warm', 'up')));
    await c.runUntil(() => c.sms.get(2)!.get('warm') === 'up');
    const gate = c.gates.get(leader.id)!;
    gate.closed = true;
    const sentBefore = c.sent.get(leader.id)!.length;
    let xDone = false;
    const x = leader.propose(put('x', '1')).then((r) => ((xDone = true), r));
    try {
      await c.runUntil(() => gate.held === 1);
      await c.runUntil(() => false, 10).catch(() => undefined);
      const early = c.sent.get(leader.id)!.slice(sentBefore).flat();
      expect(early.filter((m) => m.commit > warm.index)).toEqual([]);
      expect(c.sms.get(2)!.get('x')).toBeUndefined();
      expect(xDone).toBe(false);
    } finally {
      gate.closed = false;
      gate.release();
    }
    await c.drive(x);
    await c.runUntil(() => c.sms.get(2)!.get('x') === '1');
  });

  it('keeps committing while a snapshot image is encoded, then persists it and compacts', async () => {
    const c = (cluster = new Cluster({ snapshotEntries: 5, catchUpEntries: 1, stateMachine: () => new SlowSnapshotKv() }));
    await c.startAll(3);
    const leader = await c.electLeader();
    const sm = c.sms.get(leader.id) as SlowSnapshotKv;
    for (const s of c.sms.values()) (s as SlowSnapshotKv).hold = true;
    for (let i = 0; i < 6; i++) await c.drive(leader.propose(put(`a${i}`, String(i))));
    await c.runUntil(() => sm.snapshotsRequested === 1);
    const takenAt = leader.status().snapshotIndex;
    // The image is still being encoded: commands commit and apply meanwhile.
    for (let i = 0; i < 6; i++) await c.drive(leader.propose(put(`b${i}`, String(i))));
    expect(sm.get('b5')).toBe('5');
    // (The bootstrap snapshot at index 1 aside.)
    const snapshotWrites = (): StoreWrite[] =>
      c.writes.get(leader.id)!.filter((w) => (w.kind === 'save' && (w.batch.snapshot?.metadata.index ?? 0) > 1) || w.kind === 'compact');
    expect(snapshotWrites()).toEqual([]);
    for (const s of c.sms.values()) (s as SlowSnapshotKv).finishSnapshots();
    await c.runUntil(() => snapshotWrites().length === 2);
    const [saved, compacted] = snapshotWrites();
    expect(saved!.kind === 'save' && saved!.batch.snapshot!.metadata.index).toBe(takenAt);
    expect(compacted).toEqual({ kind: 'compact', index: takenAt - 1 });
    // A restart recovers from that snapshot and the log after it.
    await leader.stop();
    const again = await c.start(leader.id);
    await c.runUntil(() => c.sms.get(again.id)!.get('b5') === '5');
  });

  it('drops its own snapshot when a newer one from the leader was installed while it was encoded', async () => {
    const c = (cluster = new Cluster({ snapshotEntries: 5, catchUpEntries: 0, stateMachine: () => new SlowSnapshotKv() }));
    await c.startAll(3);
    const leader = await c.electLeader();
    const f = [...c.nodes.values()].find((n) => n !== leader)!;
    const fsm = c.sms.get(f.id) as SlowSnapshotKv;
    fsm.hold = true;
    for (let i = 0; i < 6; i++) await c.drive(leader.propose(put(`a${i}`, String(i))));
    await c.runUntil(() => fsm.snapshotsRequested === 1);
    const ownAt = f.status().snapshotIndex;
    // Cut off, the follower falls behind a leader that compacts everything it snapshots.
    c.net.isolate(f.id);
    for (let i = 0; i < 12; i++) await c.drive(leader.propose(put(`b${i}`, String(i))));
    c.net.healAll();
    await c.runUntil(() => fsm.get('b11') === '11');
    const installed = f.status().snapshotIndex;
    expect(installed).toBeGreaterThan(ownAt);
    fsm.hold = false;
    fsm.finishSnapshots();
    await c.runUntil(() => false, 20).catch(() => undefined);
    // The older image was not recorded over the newer snapshot, and the member carries on.
    const saved = c.writes.get(f.id)!.flatMap((w) => (w.kind === 'save' && w.batch.snapshot ? [w.batch.snapshot.metadata.index] : []));
    expect(saved).not.toContain(ownAt);
    expect(f.status().snapshotIndex).toBeGreaterThanOrEqual(installed);
    await c.drive(f.propose(put('after', 'yes')));
  });

  it('rejects pending work with STOPPED / OUTCOME_UNKNOWN on stop', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    c.net.isolate(leader.id);
    const pending = leader.propose(put('x', 'y')).catch((e: unknown) => e);
    await settle();
    await leader.stop();
    expect(isRaftNodeError(await pending, 'PROPOSAL_OUTCOME_UNKNOWN')).toBe(true);
    const after = await leader.propose(put('x', 'y')).catch((e: unknown) => e);
    expect(isRaftNodeError(after, 'STOPPED')).toBe(true);
  });
});

describe('RaftNode read barriers', () => {
  /** The contexts (hex) of the read-index requests `id` handed to its transport, in order. */
  const readRequestsSent = (c: Cluster, id: NodeId): string[] =>
    c.sent
      .get(id)!
      .flat()
      .filter((m) => m.type === MessageType.ReadIndex)
      .map((m) => Buffer.from(m.context).toString('hex'));

  /** Three members with a leader elected and one write applied; `follower` is one of the others. */
  async function threeWithWrite(): Promise<{ c: Cluster; leader: RaftNode; follower: RaftNode; w: { index: number } }> {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    const w = await c.drive(leader.propose(put('k', 'v')));
    const follower = [...c.nodes.values()].find((n) => n !== leader)!;
    return { c, leader, follower, w };
  }

  it('concurrent reads on a follower share one request to the leader', async () => {
    const { c, follower, w } = await threeWithWrite();
    const before = readRequestsSent(c, follower.id).length;
    const reads = Array.from({ length: 20 }, () => follower.readIndex());
    const indexes = await c.drive(Promise.all(reads));
    for (const i of indexes) expect(i).toBeGreaterThanOrEqual(w.index);
    expect(readRequestsSent(c, follower.id).length - before).toBe(1);
    expect(follower.stats().readsServed).toBe(20);
  });

  it('a read that arrives while a request is in flight goes with the next one, and a lost request is sent again', async () => {
    const { c, leader, follower } = await threeWithWrite();
    c.net.cut(follower.id, leader.id);
    const first = follower.readIndex();
    await settle();
    const sent = readRequestsSent(c, follower.id);
    expect(sent.length).toBeGreaterThan(0);
    // A write acknowledged after the first request left: the second read must see it, so it
    // cannot be answered by the first request.
    c.net.healAll();
    const w = await c.drive(leader.propose(put('k', 'w')));
    let distinctWhenServed = 0;
    const second = follower.readIndex().then((i) => ((distinctWhenServed = new Set(readRequestsSent(c, follower.id)).size), i));
    const [i1, i2] = await c.drive(Promise.all([first, second]));
    expect(i1).toBeGreaterThan(0);
    expect(i2).toBeGreaterThanOrEqual(w.index);
    const all = readRequestsSent(c, follower.id);
    // The first request went twice (lost, then sent again with the same context), the second once.
    expect(all.filter((k) => k === sent[0]).length).toBeGreaterThanOrEqual(2);
    expect(distinctWhenServed).toBe(new Set(sent).size + 1);
  });

  it('serves a confirmed read at once while a write of this member is in flight', async () => {
    const { c, leader, w: warm } = await threeWithWrite();
    const [f1, f2] = [...c.nodes.values()].filter((n) => n !== leader);
    // f2 cut off and f1's write held: `a` cannot commit, and f1 has a write in flight.
    c.net.isolate(f2!.id);
    await c.runUntil(() => f1!.status().applied >= warm.index);
    const gate = c.gates.get(f1!.id)!;
    gate.closed = true;
    const a = leader.propose(put('a', '1')).catch((e: unknown) => e);
    await c.runUntil(() => gate.held === 1);
    const read = await c.drive(f1!.readIndex(), 50);
    expect(read).toBeGreaterThanOrEqual(warm.index);
    expect(gate.held).toBe(1);
    gate.closed = false;
    gate.release();
    c.net.healAll();
    await c.drive(a);
  });

  it('a request whose leader is deposed before answering goes to the new leader', async () => {
    const { c, leader, follower } = await threeWithWrite();
    c.net.isolate(leader.id);
    const read = follower.readIndex();
    const others = [...c.nodes.values()].filter((n) => n !== leader);
    const next = await c.electLeader(others);
    expect(next.id).not.toBe(leader.id);
    const w = await c.drive(next.propose(put('k', 'after')));
    expect(await c.drive(read)).toBeGreaterThan(0);
    // And reads after the change are answered by the new leader.
    expect(await c.drive(follower.readIndex())).toBeGreaterThanOrEqual(w.index);
    c.net.healAll();
  });

  it('a read that cannot be confirmed fails with READ_INDEX_FAILED after readTimeoutMs, and later reads are served', async () => {
    const { c, leader, follower } = await threeWithWrite();
    c.net.isolate(follower.id);
    const err = await c.drive(follower.readIndex().catch((e: unknown) => e));
    expect(isRaftNodeError(err, 'READ_INDEX_FAILED')).toBe(true);
    c.net.healAll();
    await c.electLeader();
    const w = await c.drive(leader.propose(put('k', 'w')).catch(() => c.leader()!.propose(put('k', 'w'))));
    expect(await c.drive(follower.readIndex())).toBeGreaterThanOrEqual(w.index);
  });
});

describe('RaftNode membership changes', () => {
  /** Every conf change entry a member's store was asked to write. */
  const confChangesWritten = (c: Cluster, id: NodeId): number =>
    c.writes.get(id)!.reduce((n, w) => n + (w.kind === 'save' ? w.batch.entries.filter((e) => e.type === EntryType.ConfChange).length : 0), 0);

  it('refuses removing the last voter with MEMBERSHIP_INVALID, proposing nothing', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(1);
    const leader = await c.electLeader();
    const before = leader.status().commit;
    const err = await leader.removeMember(1).catch((e: unknown) => e);
    expect(isRaftNodeError(err, 'MEMBERSHIP_INVALID')).toBe(true);
    expect((err as Error).message).toMatch(/1 is the last voter/);
    await c.runUntil(() => false, 5).catch(() => undefined);
    expect(leader.status().commit).toBe(before);
    expect(confChangesWritten(c, 1)).toBe(0);
    // Still serving.
    await c.drive(leader.propose(put('still', 'up')));
  });

  it('refuses changes that make no sense for the membership, on the leader and on followers', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.addLearner(4, 'local://4'));
    await c.runUntil(() => [...c.nodes.values()].every((n) => n.status().membership.learners.includes(4)));
    const written = [...c.nodes.keys()].map((id) => confChangesWritten(c, id));
    for (const n of c.nodes.values()) {
      const cases: [Promise<unknown>, RegExp][] = [
        [n.removeMember(9), /9 is not a member/],
        [n.addMember(2, 'local://2'), /2 is already a voter/],
        [n.addLearner(3, 'local://3'), /3 is already a voter/],
        [n.addMember(4, 'local://4'), /4 is already a learner \(promote it instead\)/],
        [n.addLearner(4, 'local://4'), /4 is already a learner/],
        [n.promote(2), /2 is already a voter/],
        [n.promote(9), /9 is not a learner/],
        [n.addMember(0, 'local://0'), /0 is not a valid member id/],
        [n.addMember(5, ''), /needs an address/],
      ];
      for (const [p, msg] of cases) {
        const err = await p.catch((e: unknown) => e);
        expect(isRaftNodeError(err, 'MEMBERSHIP_INVALID'), `${n.id}: ${String(err)}`).toBe(true);
        expect((err as Error).message).toMatch(msg);
      }
    }
    await c.runUntil(() => false, 5).catch(() => undefined);
    expect([...c.nodes.keys()].map((id) => confChangesWritten(c, id))).toEqual(written);
    // Valid changes still go through.
    expect((await c.drive(leader.promote(4))).voters).toContain(4);
  });

  it('a leader refuses a second change while the first is applied, with PROPOSAL_DROPPED', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    const leader = await c.electLeader();
    const first = leader.addLearner(4, 'local://4');
    const err = await leader.removeMember(3).catch((e: unknown) => e);
    expect(isRaftNodeError(err, 'PROPOSAL_DROPPED')).toBe(true);
    expect((await c.drive(first)).learners).toEqual([4]);
    expect((await c.drive(leader.removeMember(3))).voters).not.toContain(3);
  });

  it('ignores a change an old log holds that the membership cannot take, alike on every member and every restart', async () => {
    // One voter and two learners: an earlier version let removeMember(1) into the log, and
    // applying it killed every member, on every restart.
    const c = (cluster = new Cluster({ bootstrapLearners: [2, 3] }));
    await c.startAll(3);
    const leader = await c.electLeader([c.nodes.get(1)!]);
    expect(leader.id).toBe(1);
    await c.drive(leader.propose(put('before', '1')));
    await c.runUntil(() => [...c.sms.values()].every((sm) => sm.get('before') === '1'));
    await c.runUntil(() => new Set([...c.nodes.values()].map((n) => n.status().commit)).size === 1);
    await c.stopAll();
    // Write the entry the old version would have: committed at the same index everywhere.
    let badIndex = 0;
    for (const db of c.dbs.values()) {
      const store = new LevelLogStore(db);
      const st = await store.open();
      const last = st.entries.at(-1)!;
      badIndex = last.index + 1;
      const cc = encodeConfChange({ transition: 'auto', changes: [{ type: ConfChangeType.RemoveNode, nodeId: 1 }], context: new Uint8Array(0) });
      await store.save({ entries: [{ index: badIndex, term: last.term, type: EntryType.ConfChange, data: cc }], hardState: { ...st.hardState, commit: badIndex } });
      await store.close();
    }
    for (let round = 0; round < 2; round++) {
      c.nodes.clear();
      for (let id = 1; id <= 3; id++) await c.start(id);
      await c.runUntil(() => [...c.nodes.values()].every((n) => n.status().applied >= badIndex));
      for (const n of c.nodes.values()) expect(n.status().membership).toMatchObject({ voters: [1], learners: [2, 3] });
      const l = await c.electLeader();
      await c.drive(l.propose(put('after', String(round))));
      await c.runUntil(() => [...c.sms.values()].every((sm) => sm.get('after') === String(round)));
      await c.stopAll();
    }
  });
});

describe('RaftNode with a state machine that applies in batches', () => {
  const batching = (c: Cluster, id: NodeId): BatchingKvStateMachine => c.sms.get(id) as BatchingKvStateMachine;

  it('hands the commands committed together to one applyBatch call and settles each proposer with its own result', async () => {
    const c = (cluster = new Cluster({ stateMachine: () => new BatchingKvStateMachine() }));
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.propose(put('warm', 'up')));
    const results = await c.drive(Promise.all(Array.from({ length: 20 }, (_, i) => leader.propose(put('k', String(i))))));
    // Each proposer sees the value its own put replaced.
    expect(results.map((r) => r.result)).toEqual([null, ...Array.from({ length: 19 }, (_, i) => String(i))]);
    const indexes = results.map((r) => r.index);
    await c.runUntil(() => [...c.sms.values()].every((sm) => sm.get('k') === '19'));
    for (const id of c.nodes.keys()) {
      const sm = batching(c, id);
      expect(sm.singleApplies, `member ${id}`).toBe(0);
      expect(sm.batches.filter((b) => b.some((i) => indexes.includes(i))), `member ${id}`).toEqual([indexes]);
      expect(sm.appliedIndexes).toEqual([...sm.appliedIndexes].sort((a, b) => a - b));
    }
  });

  it('never applies commands together with a membership change between them', async () => {
    const c = (cluster = new Cluster({ stateMachine: () => new BatchingKvStateMachine() }));
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.propose(put('warm', 'up')));
    const before = [0, 1, 2].map((i) => leader.propose(put(`a${i}`, 'x')));
    const change = leader.addLearner(4, 'local://4');
    const after = [0, 1, 2].map((i) => leader.propose(put(`b${i}`, 'y')));
    const done = await c.drive(Promise.all([...before, ...after]));
    await c.drive(change);
    const ccIndex = c.writes
      .get(leader.id)!
      .flatMap((w) => (w.kind === 'save' ? w.batch.entries : []))
      .find((e) => e.type === EntryType.ConfChange)!.index;
    expect(done.slice(0, 3).every((r) => r.index < ccIndex) && done.slice(3).every((r) => r.index > ccIndex)).toBe(true);
    await c.runUntil(() => [...c.sms.values()].every((sm) => sm.get('b2') === 'y'));
    for (const id of c.nodes.keys()) {
      for (const b of batching(c, id).batches) {
        expect(b.includes(ccIndex) || (b[0]! < ccIndex && b.at(-1)! > ccIndex), `member ${id}: batch ${b.join(',')} spans ${ccIndex}`).toBe(false);
      }
      expect(batching(c, id).singleApplies).toBe(0);
    }
  });

  it('a leader applies ahead of its own write through applyBatch', async () => {
    const c = (cluster = new Cluster({ stateMachine: () => new BatchingKvStateMachine() }));
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.propose(put('warm', 'up')));
    const gate = c.gates.get(leader.id)!;
    gate.closed = true;
    const results = await c.drive(Promise.all(Array.from({ length: 5 }, (_, i) => leader.propose(put(`p${i}`, String(i))))));
    // Acknowledged while the leader's own write of them is held.
    expect(gate.held).toBe(1);
    expect(leader.stats().entriesAppliedAhead).toBeGreaterThanOrEqual(5);
    expect(batching(c, leader.id).batches.at(-1)).toEqual(results.map((r) => r.index));
    expect(batching(c, leader.id).singleApplies).toBe(0);
    gate.closed = false;
    gate.release();
    await c.drive(leader.propose(put('after', '1')));
    expect(batching(c, leader.id).singleApplies).toBe(0);
  });

  it('never captures a snapshot while a batch applied ahead is still being applied', async () => {
    // The state machine's applyBatch is asynchronous (the store writes LevelDB). A snapshot
    // captured while a batch applied ahead is in flight records the index before the batch
    // with state that may already hold it: a member restoring that image applies the batch a
    // second time (replicas then disagree on revisions). Slow applies and writes, frequent
    // snapshots, waves of proposals: the interleavings where a wave's early applies make a
    // snapshot due while the next batch is applied ahead.
    class SlowApply extends KvStateMachine {
      inFlight = 0;
      capturedDuringApply = 0;
      snapshots = 0;
      async applyBatch(commands: Parameters<KvStateMachine['apply']>[0][]): Promise<(string | null)[]> {
        this.inFlight++;
        try {
          await settle(3);
          return commands.map((c) => super.apply(c));
        } finally {
          this.inFlight--;
        }
      }
      override snapshot(): Promise<Uint8Array> {
        this.snapshots++;
        if (this.inFlight > 0) this.capturedDuringApply++;
        return super.snapshot();
      }
    }
    const c = (cluster = new Cluster({ snapshotEntries: 3, catchUpEntries: 1, stateMachine: () => new SlowApply() }));
    await c.startAll(3);
    const leader = await c.electLeader();
    const sm = c.sms.get(leader.id) as SlowApply;
    const gate = c.gates.get(leader.id)!;
    // A seeded stream of proposals, one every few I/O turns, with the leader's own writes
    // held now and then: followers' acknowledgements then start applies ahead of them.
    let seed = 7;
    const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    const proposals: Promise<unknown>[] = [];
    for (let turn = 0; turn < 600; turn++) {
      if (rand(3) === 0) proposals.push(leader.propose(put(`k${turn}`, String(turn))));
      if (rand(40) === 0) gate.closed = !gate.closed;
      if (!gate.closed) gate.release();
      if (rand(10) === 0) c.clock.advance(TICK);
      await new Promise((r) => setImmediate(r));
    }
    gate.closed = false;
    gate.release();
    await c.drive(Promise.all(proposals));
    expect(leader.stats().entriesAppliedAhead).toBeGreaterThan(0);
    expect(sm.snapshots).toBeGreaterThan(5);
    expect(sm.capturedDuringApply).toBe(0);
  });

  it('stops on a batch result of the wrong length (the proposal: OUTCOME_UNKNOWN, later ones: FATAL)', async () => {
    const fatal: NodeId[] = [];
    class ShortResults extends BatchingKvStateMachine {
      broken = false;
      override applyBatch(commands: Parameters<BatchingKvStateMachine['applyBatch']>[0]): (string | null)[] {
        const out = super.applyBatch(commands);
        return this.broken ? out.slice(1) : out;
      }
    }
    const c = (cluster = new Cluster({ stateMachine: () => new ShortResults(), onFatal: (id) => fatal.push(id) }));
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.propose(put('warm', 'up')));
    (c.sms.get(leader.id) as ShortResults).broken = true;
    const err = await c.drive(leader.propose(put('x', '1'))).catch((e: unknown) => e);
    expect(isRaftNodeError(err, 'PROPOSAL_OUTCOME_UNKNOWN'), String(err)).toBe(true);
    expect((err as Error).message).toMatch(/applyBatch returned 0 results for 1 commands/);
    expect(fatal).toEqual([leader.id]);
    expect(isRaftNodeError(await leader.propose(put('y', '1')).catch((e: unknown) => e), 'FATAL')).toBe(true);
  });
});

describe('RaftNode maxPendingProposals', () => {
  it('refuses proposals beyond the bound at once with PROPOSAL_QUEUE_FULL, queued and in flight alike', async () => {
    const c = (cluster = new Cluster({ maxPendingProposals: 5 }));
    await c.startAll(3);
    const leader = await c.electLeader();
    await c.drive(leader.propose(put('warm', 'up')));
    // Cut off, the leader cannot commit: three proposals go in flight...
    c.net.isolate(leader.id);
    const inFlight = [0, 1, 2].map((i) => leader.propose(put(`f${i}`, 'x')));
    await c.runUntil(() => leader.stats().proposals >= 4);
    // ...two more are queued in this turn, and the next ones are refused before any I/O.
    const queued = [0, 1].map((i) => leader.propose(put(`q${i}`, 'x')));
    const refused = await Promise.all([leader.propose(put('r0', 'x')), leader.propose(put('r1', 'x'))].map((p) => p.catch((e: unknown) => e)));
    for (const err of refused) expect(isRaftNodeError(err, 'PROPOSAL_QUEUE_FULL'), String(err)).toBe(true);
    expect(leader.stats().proposalsRefusedQueueFull).toBe(2);
    c.net.healAll();
    const done = await c.drive(Promise.all([...inFlight, ...queued]));
    expect(done).toHaveLength(5);
    // Refused means never proposed: not applied anywhere.
    await c.runUntil(() => [...c.sms.values()].every((sm) => sm.get('q1') === 'x'));
    for (const sm of c.sms.values()) expect(sm.get('r0') ?? sm.get('r1')).toBeUndefined();
    // Room again once they are applied.
    await c.drive(leader.propose(put('later', 'y')));
  });

  it('defaults to 10,000', async () => {
    const c = (cluster = new Cluster());
    await c.startAll(3);
    // No leader yet: proposals queue until the loop hands them over (and they are dropped).
    const n1 = c.nodes.get(1)!;
    const outcomes = Array.from({ length: 10_001 }, () => n1.propose(put('x', 'y')).catch((e: unknown) => e));
    const codes = (await Promise.all(outcomes)).map((e) => (isRaftNodeError(e) ? e.code : String(e)));
    expect(codes.filter((c) => c === 'PROPOSAL_QUEUE_FULL')).toHaveLength(1);
    expect(codes.at(-1)).toBe('PROPOSAL_QUEUE_FULL');
    expect(codes.filter((c) => c === 'PROPOSAL_DROPPED')).toHaveLength(10_000);
  });

  it('refuses an invalid bound at start', async () => {
    const c = (cluster = new Cluster({ maxPendingProposals: 0 }));
    c.peers.set(1, 'local://1');
    await expect(c.start(1)).rejects.toThrow(/maxPendingProposals must be a positive integer/);
  });
});


describe('RaftNode and a member removed while it was stopped', () => {
  /** Stops a follower, removes it through the leader, writes on; returns the removal's index as the others know it. */
  async function removeWhileStopped(c: Cluster, victimId: NodeId): Promise<{ leader: RaftNode; removedAt: number }> {
    const victim = c.nodes.get(victimId)!;
    let leader = await c.electLeader();
    if (leader === victim) {
      await c.drive(leader.transferLeadership([...c.nodes.keys()].find((id) => id !== victimId)!));
      leader = await c.electLeader();
    }
    await c.drive(leader.propose(put('before', '1')));
    await c.runUntil(() => c.sms.get(victimId)!.get('before') === '1');
    await victim.stop();
    c.nodes.delete(victimId);
    await c.drive(leader.removeMember(victimId));
    for (let i = 0; i < 5; i++) await c.drive(leader.propose(put(`after${i}`, String(i))));
    await c.runUntil(() => [...c.nodes.values()].every((n) => !n.status().membership.voters.includes(victimId) && n.status().applied === leader.status().applied));
    // Every member that applied it refuses the removed member at the same index, while it has applied less.
    const indexes = [...c.nodes.keys()].map((id) => c.handlers.get(id)!.removedAt!(victimId, 0));
    expect(new Set(indexes).size, String(indexes)).toBe(1);
    return { leader, removedAt: indexes[0]! };
  }

  it('restarted from its store, it is refused with the index, says it was removed and campaigns no more; its peers keep their leader', async () => {
    const c = (cluster = new Cluster({ seed: 11 }));
    await c.startAll(3);
    const { leader, removedAt } = await removeWhileStopped(c, 3);
    const term = leader.status().term;
    const others = [...c.nodes.values()];

    const again = await c.start(3);
    expect(again.status().membership.voters).toContain(3);
    await c.runUntil(() => again.status().removed !== undefined);
    const removed = again.status().removed!;
    expect(removed.at).toBe(removedAt);
    expect(others.map((n) => n.id)).toContain(removed.by);
    expect(again.status().applied).toBeLessThan(removedAt);

    // Five election timeouts later: it has sent nothing more, its term did not move, nor did its peers'.
    await c.runUntil(() => false, 3).catch(() => undefined);
    const sent = c.sent.get(3)!.length;
    const ownTerm = again.status().term;
    await c.runUntil(() => false, 50).catch(() => undefined);
    expect(c.sent.get(3)!.length).toBe(sent);
    expect(again.status()).toMatchObject({ term: ownTerm, leader: 0, removed });
    for (const n of others) expect(n.status()).toMatchObject({ term, leader: leader.id });
    // It takes no writes and confirms no reads, as a member without a leader.
    const err = await c.drive(again.propose(put('x', '1'))).catch((e: unknown) => e);
    expect(isRaftNodeError(err, 'PROPOSAL_DROPPED'), String(err)).toBe(true);
    expect(isRaftNodeError(await again.readIndex().catch((e: unknown) => e), 'READ_INDEX_FAILED')).toBe(true);
    // The others go on.
    await c.drive(others.find((n) => n !== leader)!.propose(put('still', '1')));
  });

  it('admitted again under the same id, it is not refused by a peer that lagged behind its admission, and ignores such a claim', async () => {
    const c = (cluster = new Cluster({ seed: 23 }));
    await c.startAll(4);
    const { leader, removedAt } = await removeWhileStopped(c, 4);
    // A peer cut off before the admission: it holds the removal, not the admission.
    const lagging = [...c.nodes.values()].find((n) => n !== leader)!;
    c.net.isolate(lagging.id);
    c.dbs.delete(4);
    await c.drive(leader.addLearner(4, 'local://4'));
    const rejoined = await c.start(4, new Map([...c.peers]), true);
    // A joiner before its snapshot (its applied membership does not list it) ignores a claim.
    c.handlers.get(4)!.reportRemoved!(lagging.id, removedAt);
    expect(rejoined.status().removed).toBeUndefined();
    await c.runUntil(() => rejoined.status().membership.learners.includes(4) && rejoined.status().applied >= leader.status().commit);
    await c.drive(leader.propose(put('rejoined', '1')));
    await c.runUntil(() => c.sms.get(4)!.get('rejoined') === '1');
    expect(lagging.status().membership.learners).not.toContain(4);

    // The lagging peer refuses an incarnation that has applied less than the removal, not this one.
    const lag = c.handlers.get(lagging.id)!;
    expect(lag.removedAt!(4, removedAt - 1)).toBe(removedAt);
    expect(lag.removedAt!(4, rejoined.status().applied)).toBeUndefined();
    // Told anyway (by a peer of an earlier rule, say), the rejoined member has applied past the
    // removal and ignores it: it goes on as a member.
    c.handlers.get(4)!.reportRemoved!(lagging.id, removedAt);
    expect(rejoined.status().removed).toBeUndefined();
    await c.drive(leader.propose(put('after-claim', '1')));
    await c.runUntil(() => c.sms.get(4)!.get('after-claim') === '1');
    expect(rejoined.status().removed).toBeUndefined();
  });

  it('the removals survive a restart of its peers after snapshots folded them in (RaftNodeOptions.removedMembers)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raft-removed-'));
    try {
      const c = (cluster = new Cluster({ seed: 5, snapshotEntries: 3, catchUpEntries: 0, removedMembers: (id) => removedMembersFile(join(dir, String(id))) }));
      for (const id of [1, 2, 3]) await mkdir(join(dir, String(id)));
      await c.startAll(3);
      const { leader, removedAt } = await removeWhileStopped(c, 3);
      for (let i = 0; i < 6; i++) await c.drive(leader.propose(put(`more${i}`, String(i))));
      await c.runUntil(() => [...c.nodes.values()].every((n) => n.status().snapshotIndex > removedAt));
      // Restarted, they replay nothing of the removal: it is known from the file alone.
      const peers = [...c.nodes.values()];
      for (const n of peers) await n.stop();
      c.nodes.clear();
      for (const n of peers) await c.start(n.id);
      await c.electLeader();
      for (const n of peers) expect(c.handlers.get(n.id)!.removedAt!(3, 0)).toBe(removedAt);

      const again = await c.start(3);
      await c.runUntil(() => again.status().removed !== undefined);
      expect(again.status().removed!.at).toBe(removedAt);
    } finally {
      await cluster?.stopAll();
      cluster = null;
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A map kept on a "disk" of its own (one per member, surviving restarts) that holds what
 * persist() made durable: a state machine that is its own snapshot, as the API server's store
 * is. A restart loses what was applied after the last persist(), as an unsynced write would.
 */
type Disks = Map<NodeId, { data: Map<string, string>; applied: number; held: number }>;

class InPlaceKv extends KvStateMachine {
  persists = 0;
  images = 0;
  restores = 0;
  private held: number;

  constructor(
    private readonly id: NodeId,
    private readonly disks: Disks,
  ) {
    super();
    const disk = disks.get(id);
    for (const [k, v] of disk?.data ?? []) this.data.set(k, v);
    this.lastApplied = disk?.applied ?? 0;
    this.held = disk?.held ?? 0;
  }

  override apply(c: Parameters<KvStateMachine['apply']>[0]): string | null {
    // Entries after the snapshot that the disk already holds come again after a restart.
    if (c.index <= this.lastApplied) return null;
    return super.apply(c);
  }

  async persist(index: number): Promise<void> {
    this.persists++;
    this.held = Math.max(this.held, index);
    this.disks.set(this.id, { data: new Map(this.data), applied: this.lastApplied, held: this.held });
  }

  holds(index: number): boolean {
    return this.lastApplied >= index || this.held >= index;
  }

  override snapshot(): Promise<Uint8Array> {
    this.images++;
    return super.snapshot();
  }

  override restore(image: Uint8Array): void {
    this.restores++;
    super.restore(image);
    this.held = 0;
    this.disks.set(this.id, { data: new Map(this.data), applied: this.lastApplied, held: 0 });
  }
}

describe('RaftNode with a state machine that is its own snapshot (StateMachine.persist)', () => {
  const inPlace = (c: Cluster, id: NodeId): InPlaceKv => c.sms.get(id) as InPlaceKv;
  /**
   * Three members over InPlaceKv with a leader elected; their image counts start from 0 (the
   * bootstrap snapshot at index 1 is an image of the empty state).
   */
  const startInPlace = async (snapshotEntries: number, catchUpEntries: number): Promise<{ c: Cluster; leader: RaftNode; disks: Disks }> => {
    const disks: Disks = new Map();
    const c = (cluster = new Cluster({ snapshotEntries, catchUpEntries, stateMachine: (id) => new InPlaceKv(id, disks) }));
    await c.startAll(3);
    const leader = await c.electLeader();
    for (const id of c.nodes.keys()) inPlace(c, id).images = 0;
    return { c, leader, disks };
  };
  /** The snapshots a member's store was asked to record, as (index, in place?). */
  const recorded = (c: Cluster, id: NodeId): { index: number; inPlace: boolean }[] =>
    c.writes
      .get(id)!
      .flatMap((w) => (w.kind === 'save' && w.batch.snapshot ? [w.batch.snapshot] : []))
      .map((s) => ({ index: s.metadata.index, inPlace: s.data[0] === 2 }));

  it('records periodic snapshots without an image, compacts the log behind them, and restarts from the state it holds', async () => {
    const { c, leader } = await startInPlace(4, 1);
    for (let i = 0; i < 12; i++) await c.drive(leader.propose(put(`k${i}`, String(i))));
    const follower = [...c.nodes.values()].find((n) => n !== leader)!;
    await c.runUntil(() => c.sms.get(follower.id)!.get('k11') === '11');
    await c.runUntil(() => [...c.nodes.keys()].every((id) => recorded(c, id).some((r) => r.index > 5)));
    for (const id of c.nodes.keys()) {
      expect(inPlace(c, id).images).toBe(0);
      expect(inPlace(c, id).persists).toBeGreaterThan(0);
      // (Index 1: the bootstrap snapshot.)
      const snaps = recorded(c, id).filter((s) => s.index > 1);
      expect(snaps.length).toBeGreaterThan(0);
      expect(snaps.every((s) => s.inPlace)).toBe(true);
      expect(c.writes.get(id)!.some((w) => w.kind === 'compact')).toBe(true);
    }
    expect(follower.status().snapshotIndex).toBeGreaterThan(5);

    // Restarted, it takes the state from its own "disk" (what the last persist() held) and
    // the log after the snapshot: no image is restored.
    await follower.stop();
    const again = await c.start(follower.id);
    const sm = inPlace(c, follower.id);
    await c.runUntil(() => sm.get('k11') === '11');
    expect(sm.restores).toBe(0);
    expect(sm.data.size).toBe(12);
    await c.drive(again.propose(put('k12', '12')));
    await c.runUntil(() => sm.get('k12') === '12');
  });

  it('a member down past the compaction is caught up by an image taken for it, even with nothing written after it is back', async () => {
    // A snapshot after every entry: when the member comes back, the latest snapshot is at the
    // leader's applied index, so the image has to replace an in-place snapshot at that index.
    const { c, leader } = await startInPlace(1, 0);
    const down = [...c.nodes.values()].find((n) => n !== leader)!;
    await c.drive(leader.propose(put('before', 'x')));
    await c.runUntil(() => c.sms.get(down.id)!.get('before') === 'x');
    await down.stop();
    for (let i = 0; i < 8; i++) await c.drive(leader.propose(put(`k${i}`, String(i))));
    const applied = leader.status().applied;
    await c.runUntil(() => leader.status().snapshotIndex === applied && recorded(c, leader.id).some((r) => r.index === applied && r.inPlace));
    expect(inPlace(c, leader.id).images).toBe(0);

    await c.start(down.id);
    const sm = inPlace(c, down.id);
    await c.runUntil(() => sm.get('k7') === '7', 2_000);
    expect(sm.restores).toBe(1);
    expect(sm.data.size).toBe(9);
    // One image, at the index the in-place snapshot held: the leader's applied index did not move.
    expect(inPlace(c, leader.id).images).toBe(1);
    expect(leader.status().applied).toBe(applied);
    const snaps = recorded(c, leader.id);
    expect(snaps[snaps.length - 1]).toEqual({ index: applied, inPlace: false });
    // The next periodic snapshot is in place again.
    await c.drive(leader.propose(put('after', 'y')));
    await c.runUntil(() => recorded(c, leader.id).some((r) => r.index > applied && r.inPlace));
    await c.runUntil(() => sm.get('after') === 'y');
  });

  it('a member added later is caught up by an image', async () => {
    const { c, leader } = await startInPlace(3, 0);
    for (let i = 0; i < 10; i++) await c.drive(leader.propose(put(`k${i}`, String(i))));
    await c.drive(leader.addMember(4, 'local://4'));
    await c.start(4, new Map([...c.peers, [4, 'local://4']]), true);
    await c.runUntil(() => c.sms.get(4)?.get('k9') === '9', 2_000);
    expect(inPlace(c, 4).restores).toBe(1);
    expect(c.sms.get(4)!.data.size).toBe(10);
  });

  it('refuses to start from an in-place snapshot whose state the state machine does not hold', async () => {
    const { c, leader, disks } = await startInPlace(3, 0);
    for (let i = 0; i < 8; i++) await c.drive(leader.propose(put(`k${i}`, String(i))));
    const victim = [...c.nodes.values()].find((n) => n !== leader)!;
    await c.runUntil(() => recorded(c, victim.id).some((r) => r.index > 3 && r.inPlace));
    await victim.stop();
    // Its state machine's storage is gone; its Raft log says the state is there.
    disks.delete(victim.id);
    await expect(c.start(victim.id)).rejects.toThrow(/in place, and the state machine does not hold that state/);
    c.nodes.delete(victim.id);
  });
});
