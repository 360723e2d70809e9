// raft/sim/cluster.ts owns the deterministic simulation: N Raft nodes in one process on a
// virtual clock, a network that drops, duplicates, delays and reorders messages and can be
// partitioned, crashes that lose unsynced writes and restarts from the durable image, and
// membership changes (learner add, promotion, voter removal, joint replacements). Every random
// choice comes from one seeded PRNG, so a seed number reproduces a run exactly. The safety
// checker (invariants.ts) is consulted after every step.

import { type ConfChange, ConfChangeType, type ConfState, type Entry, EntryType, type Message, MessageType, NONE, type NodeId } from '../types.js';
import { decodeConfChange, describeConfChange } from '../core/conf-change.js';
import { describeMessage } from '../core/describe.js';
import { isProposalDropped, isRaftError } from '../core/errors.js';
import { MemoryStorage } from '../core/memory-storage.js';
import { StateType } from '../core/raft.js';
import type { ReadState } from '../core/read-only.js';
import { RawNode } from '../core/raw-node.js';
import { DurableStore } from './durable-store.js';
import { SafetyChecker } from './invariants.js';
import { Xoshiro128 } from './prng.js';

/** What runs on top of Raft in each node; rebuilt from snapshots on restart. */
export interface SimApplication {
  /** Applies a committed normal entry with non-empty data. */
  apply(e: Entry): void;
  /** The state as of the last applied entry, for a log-compaction snapshot. */
  snapshot(): Uint8Array;
  restore(data: Uint8Array): void;
}

/** Hooks for layers above (the linearizability clients). */
export interface SimObserver {
  /** A node applied a committed normal entry (after its application did). */
  onApply?(node: SimNode, e: Entry): void;
  /** A node's Ready carried read states (after the entries of that Ready were applied). */
  onReadStates?(node: SimNode, rs: ReadState[]): void;
  /** A node crashed or was decommissioned; in-memory requests on it are lost. */
  onStop?(node: SimNode): void;
  /** Called once per tick before the nodes tick; may propose or read. */
  onTick?(sim: Simulation): void;
}

export interface SimOptions {
  seed: number;
  /** Initial voters (3 or 5). Two spare ids beyond them can join through membership changes. */
  nodes: number;
  faultTicks: number;
  /** Upper bound on ticks, after faults stop, for a leader to emerge and pending proposals to commit. */
  livenessTicks: number;
  preVote: boolean;
  checkQuorum: boolean;
  membershipChanges: boolean;
  /** Chance per tick that some client proposes. */
  proposeRate: number;
  /** Chance per tick of a crash, restart, partition or heal. */
  faultRate: number;
  /** Byte limit of one MsgApp; small values split catch-up into many messages. */
  maxSizePerMsg: number;
  appFactory?: () => SimApplication;
  observer?: SimObserver;
  /** Keep a trace of recent events (for failure reports). */
  trace?: boolean;
  /**
   * Deliberately broken driver, for the test proving the simulator has teeth: never fsync, so
   * a crash loses votes and entries that messages already promised.
   */
  unsafeSkipSync?: boolean;
  /**
   * Deliberately broken vote rule, for the test proving Leader Completeness is checked: voters
   * grant (pre-)votes without checking that the candidate's log is at least as up to date.
   */
  unsafeGrantStaleVotes?: boolean;
}

export class SimNode {
  readonly id: NodeId;
  rn: RawNode | null = null;
  storage = new MemoryStorage();
  readonly disk = new DurableStore();
  app: SimApplication;
  /** Index of the last entry applied to app (and to the checker). */
  applied = 0;
  /** Membership as of `applied`. */
  confState: ConfState;
  /** Permanently stopped after being removed from the cluster. */
  decommissioned = false;

  constructor(id: NodeId, app: SimApplication, confState: ConfState) {
    this.id = id;
    this.app = app;
    this.confState = confState;
  }

  get up(): boolean {
    return this.rn !== null;
  }
}

interface InFlight {
  at: number;
  seq: number;
  msg: Message;
  /** Which incarnation of the sender sent it (for snapshot status reports). */
  senderEpoch: number;
}

/** The default application: remembers which proposals it applied and folds entries into a hash. */
export class ChainApp implements SimApplication {
  ids = new Set<string>();
  hash = 0;
  apply(e: Entry): void {
    const key = String.fromCharCode(...e.data);
    this.ids.add(key);
    for (let i = 0; i < key.length; i++) this.hash = (Math.imul(this.hash, 31) + key.charCodeAt(i)) | 0;
  }
  snapshot(): Uint8Array {
    return new TextEncoder().encode(JSON.stringify({ ids: [...this.ids], hash: this.hash }));
  }
  restore(data: Uint8Array): void {
    if (data.byteLength === 0) {
      this.ids = new Set();
      this.hash = 0;
      return;
    }
    const v = JSON.parse(new TextDecoder().decode(data)) as { ids: string[]; hash: number };
    this.ids = new Set(v.ids);
    this.hash = v.hash;
  }
}

export class SimFailure extends Error {
  readonly seed: number;
  constructor(seed: number, message: string) {
    super(`seed ${seed}: ${message}\nreproduce with RAFT_SIM_SEED=${seed}`);
    this.seed = seed;
  }
}

const ELECTION_TICK = 10;
const HEARTBEAT_TICK = 2;
/** Snapshot and compact once this many entries were applied past the last snapshot. */
const SNAPSHOT_EVERY = 24;
/** Entries kept behind a snapshot so slightly lagging followers avoid a snapshot transfer. */
const KEEP_BEHIND = 4;

export class Simulation {
  readonly opts: SimOptions;
  readonly rng: Xoshiro128;
  readonly nodes = new Map<NodeId, SimNode>();
  readonly checker: SafetyChecker;
  now = 0;
  private net: InFlight[] = [];
  private seq = 0;
  private epochs = new Map<NodeId, number>();
  /** Partition: node -> group; empty means fully connected. */
  private groups = new Map<NodeId, number>();
  private faults = true;
  /** Proposals accepted by some node and not yet seen applied anywhere. */
  readonly pending = new Map<string, number>();
  private proposalSeq = 0;
  private trace: string[] = [];
  stats = { delivered: 0, dropped: 0, crashes: 0, confChanges: 0, leaderChanges: 0, committed: 0, transfers: 0, leaderDownHints: 0 };
  /**
   * RaftNode's leader-down hint (forgetLeader, then a campaign a few ticks later by rank), as a
   * refused connection gives it: after a leader crashes, and now and then about a leader that is
   * alive. Drawn from a generator of its own so the other faults keep their sequence.
   */
  private readonly hintRng: Xoshiro128;
  private readonly earlyCampaigns = new Map<NodeId, number>();

  constructor(opts: SimOptions) {
    this.opts = opts;
    this.rng = new Xoshiro128(opts.seed);
    this.hintRng = new Xoshiro128((opts.seed ^ 0x5bd1e995) >>> 0);
    this.checker = new SafetyChecker((msg) => this.fail(msg));
    const voters = Array.from({ length: opts.nodes }, (_, i) => i + 1);
    const confState: ConfState = { voters, learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false };
    for (const id of voters) {
      const n = new SimNode(id, this.newApp(), confState);
      // Bootstrap: every founding member starts from the same snapshot holding the membership.
      const snap = { metadata: { index: 1, term: 1, confState }, data: new Uint8Array(0) };
      n.disk.write({ kind: 'install', snapshot: snap });
      n.disk.write({ kind: 'hardState', hs: { term: 1, vote: 0, commit: 1 } });
      n.disk.sync();
      this.nodes.set(id, n);
      this.start(n);
    }
  }

  private newApp(): SimApplication {
    return this.opts.appFactory ? this.opts.appFactory() : new ChainApp();
  }

  fail(msg: string): never {
    const tail = this.trace.length > 0 ? `\nlast events:\n${this.trace.slice(-60).join('\n')}` : '';
    throw new SimFailure(this.opts.seed, `t=${this.now}: ${msg}${tail}`);
  }

  log(f: () => string): void {
    if (!this.opts.trace) return;
    this.trace.push(`[${this.now}] ${f()}`);
    if (this.trace.length > 400) this.trace = this.trace.slice(-200);
  }

  // ------------------------------------------------------------ node lifecycle

  /** Starts (or restarts) a node from its durable state. */
  private start(n: SimNode): void {
    const st = n.disk.durableState();
    n.storage = new MemoryStorage();
    if (st.snapshot) n.storage.applySnapshot(st.snapshot);
    n.storage.append(st.entries);
    n.storage.setHardState(st.hardState);
    n.app = this.newApp();
    n.app.restore(st.snapshot?.data ?? new Uint8Array(0));
    n.applied = st.snapshot?.metadata.index ?? 0;
    n.confState = n.storage.initialState().confState;
    this.checker.nodeRestarted(n.id, n.applied);
    this.epochs.set(n.id, (this.epochs.get(n.id) ?? 0) + 1);
    n.rn = new RawNode({
      id: n.id,
      storage: n.storage,
      applied: n.applied,
      electionTick: ELECTION_TICK,
      heartbeatTick: HEARTBEAT_TICK,
      preVote: this.opts.preVote,
      checkQuorum: this.opts.checkQuorum,
      maxSizePerMsg: this.opts.maxSizePerMsg,
      maxInflightMsgs: 4,
      maxInflightBytes: 2048,
      random: this.rng.fork(),
    });
    if (this.opts.unsafeGrantStaleVotes) n.rn.raft.raftLog.isUpToDate = () => true;
    this.log(() => `start ${n.id} applied=${n.applied} hs=${JSON.stringify(st.hardState)}`);
  }

  crash(n: SimNode): void {
    if (!n.rn) return;
    n.rn = null;
    n.disk.crash(this.rng);
    this.stats.crashes++;
    this.log(() => `crash ${n.id}`);
    this.opts.observer?.onStop?.(n);
    // Its followers may learn it is gone (not all do, nor at once: some links were cut).
    for (const f of this.nodes.values()) if (f.rn && f.rn.leader() === n.id && this.hintRng.chance(0.6)) this.leaderDown(f, n.id);
  }

  /** A follower hears that `leader` is down: it forgets it and campaigns by rank, as RaftNode.peerDown. */
  private leaderDown(f: SimNode, leader: NodeId): void {
    const rn = f.rn;
    if (!rn || rn.leader() !== leader || rn.status().raftState !== StateType.Follower) return;
    this.stats.leaderDownHints++;
    this.log(() => `leader ${leader} down, as ${f.id} hears`);
    rn.forgetLeader();
    const cs = f.confState;
    const voters = [...new Set([...cs.voters, ...cs.votersOutgoing])].filter((v) => v !== leader).sort((a, b) => a - b);
    const rank = voters.indexOf(f.id);
    if (rank >= 0 && !this.earlyCampaigns.has(f.id)) this.earlyCampaigns.set(f.id, this.now + 1 + rank * 3);
  }

  /** Early campaigns that are due, on followers still without a leader. */
  private runEarlyCampaigns(): void {
    for (const [id, due] of this.earlyCampaigns) {
      if (due > this.now) continue;
      this.earlyCampaigns.delete(id);
      const rn = this.nodes.get(id)?.rn;
      if (rn && rn.leader() === NONE && rn.status().raftState === StateType.Follower) rn.campaign();
    }
  }

  // ------------------------------------------------------------ network

  private send(from: SimNode, msgs: Message[]): void {
    for (const m of msgs) {
      let delay = 0;
      if (this.faults) {
        if (this.rng.chance(0.03)) {
          this.drop(m, 'random');
          continue;
        }
        const r = this.rng.float();
        delay = r < 0.6 ? 0 : r < 0.85 ? 1 : r < 0.97 ? 2 + this.rng.int(3) : 5 + this.rng.int(20);
        if (this.rng.chance(0.02)) {
          this.net.push({ at: this.now + delay + this.rng.int(4), seq: this.seq++, msg: m, senderEpoch: this.epochs.get(from.id) ?? 0 });
        }
      } else {
        delay = this.rng.chance(0.7) ? 0 : 1;
      }
      this.net.push({ at: this.now + delay, seq: this.seq++, msg: m, senderEpoch: this.epochs.get(from.id) ?? 0 });
    }
  }

  private drop(m: Message, why: string): void {
    this.stats.dropped++;
    this.log(() => `drop(${why}) ${describeMessage(m)}`);
    // A transport notices some failed sends (a broken connection) and says so.
    if (why !== 'random' && this.rng.chance(0.3)) this.nodes.get(m.from)?.rn?.reportUnreachable(m.to);
    // The transport learns a snapshot it tried to stream did not arrive; tell the leader.
    if (m.type === MessageType.Snap) this.nodes.get(m.from)?.rn?.reportSnapshot(m.to, false);
  }

  connected(a: NodeId, b: NodeId): boolean {
    if (this.groups.size === 0) return true;
    return (this.groups.get(a) ?? 0) === (this.groups.get(b) ?? 0);
  }

  /** Delivers messages due now, in (time, seq) order. Returns whether any was delivered. */
  private deliverDue(): boolean {
    if (this.net.length === 0) return false;
    const due: InFlight[] = [];
    const later: InFlight[] = [];
    for (const f of this.net) (f.at <= this.now ? due : later).push(f);
    if (due.length === 0) return false;
    this.net = later;
    due.sort((a, b) => a.at - b.at || a.seq - b.seq);
    for (const f of due) {
      const m = f.msg;
      const to = this.nodes.get(m.to);
      if (!to || !to.rn || !this.connected(m.from, m.to)) {
        this.drop(m, to?.rn ? 'partition' : 'down');
        continue;
      }
      this.stats.delivered++;
      this.log(() => describeMessage(m));
      to.rn.step(m);
      if (m.type === MessageType.Snap) {
        const sender = this.nodes.get(m.from);
        if (sender?.rn && this.epochs.get(sender.id) === f.senderEpoch) sender.rn.reportSnapshot(m.to, true);
      }
    }
    return true;
  }

  // ------------------------------------------------------------ ready handling

  /** Carries out one Ready in the documented order, with chances of crashing in between. */
  private processReady(n: SimNode): boolean {
    const rn = n.rn;
    if (!rn || !rn.hasReady()) return false;
    const rd = rn.ready();
    const crashAt = this.faults && this.rng.chance(0.004) ? this.rng.int(3) : -1;
    if (crashAt === 0) {
      this.crash(n); // before persisting: the whole Ready is lost
      return true;
    }
    // 1. persist (disk first, then the in-memory image)
    if (rd.snapshot) n.disk.write({ kind: 'install', snapshot: rd.snapshot });
    if (rd.entries.length > 0) n.disk.write({ kind: 'entries', entries: rd.entries });
    if (rd.hardState) n.disk.write({ kind: 'hardState', hs: rd.hardState });
    if (rd.mustSync && !this.opts.unsafeSkipSync) n.disk.sync();
    else if (this.rng.chance(0.3)) n.disk.sync(); // the OS flushed on its own
    if (rd.snapshot) n.storage.applySnapshot(rd.snapshot);
    this.checker.entriesPersisted(n.id, n.storage, rd.entries);
    n.storage.append(rd.entries);
    if (rd.hardState) n.storage.setHardState(rd.hardState);
    if (rd.softState) {
      this.log(() => `${n.id} soft ${rd.softState?.raftState} lead=${rd.softState?.lead}`);
      if (rd.softState.raftState === StateType.Leader) {
        this.stats.leaderChanges++;
        this.checker.becameLeader(n.id, rn.raft);
      }
    }
    if (crashAt === 1) {
      this.crash(n); // persisted, but the messages never left
      return true;
    }
    // 2. send
    this.send(n, rd.messages);
    if (crashAt === 2) {
      this.crash(n); // sent, never applied
      return true;
    }
    // 3. apply
    if (rd.snapshot) {
      n.app.restore(rd.snapshot.data);
      n.applied = rd.snapshot.metadata.index;
      n.confState = rd.snapshot.metadata.confState;
      this.checker.snapshotInstalled(n.id, rd.snapshot.metadata.index);
    }
    for (const e of rd.committedEntries) this.applyEntry(n, rn, e);
    if (rd.readStates.length > 0) this.opts.observer?.onReadStates?.(n, rd.readStates);
    rn.advance(rd);
    this.maybeCompact(n);
    return true;
  }

  private applyEntry(n: SimNode, rn: RawNode, e: Entry): void {
    this.checker.applied(n.id, e, rn.raft.term);
    n.applied = e.index;
    if (e.type === EntryType.ConfChange) {
      const cc = decodeConfChange(e.data);
      n.confState = rn.applyConfChange(cc);
      this.log(() => `${n.id} applied conf change ${describeConfChange(cc)} at ${e.index} -> ${JSON.stringify(n.confState)}`);
      // Snapshot right away, so a snapshot sent to a new member already lists it.
      this.snapshotNow(n);
      return;
    }
    if (e.data.byteLength === 0) return;
    n.app.apply(e);
    this.pending.delete(String.fromCharCode(...e.data));
    this.opts.observer?.onApply?.(n, e);
  }

  private maybeCompact(n: SimNode): void {
    if (n.applied - n.storage.snapshot().metadata.index >= SNAPSHOT_EVERY) this.snapshotNow(n);
  }

  private snapshotNow(n: SimNode): void {
    if (n.applied <= n.storage.snapshot().metadata.index) return;
    const snap = n.storage.createSnapshot(n.applied, n.confState, n.app.snapshot());
    const compactIndex = Math.max(n.storage.firstIndex() - 1, n.applied - KEEP_BEHIND);
    if (compactIndex >= n.storage.firstIndex()) n.storage.compact(compactIndex);
    // A snapshot is always written durably before the log behind it is dropped.
    n.disk.write({ kind: 'compact', snapshot: snap, compactIndex });
    n.disk.sync();
  }

  // ------------------------------------------------------------ client operations

  leader(): SimNode | undefined {
    let best: SimNode | undefined;
    for (const n of this.nodes.values()) {
      if (n.rn?.raft.state === StateType.Leader && (!best || (best.rn as RawNode).raft.term < n.rn.raft.term)) best = n;
    }
    return best;
  }

  liveNodes(): SimNode[] {
    return [...this.nodes.values()].filter((n) => n.rn !== null);
  }

  /** Proposes `data` at node n; returns false if it was refused on the spot. */
  propose(n: SimNode, data: Uint8Array): boolean {
    if (!n.rn) return false;
    try {
      n.rn.propose(data);
      return true;
    } catch (err) {
      if (isProposalDropped(err)) return false;
      throw err;
    }
  }

  /** Proposes several commands in one step (RawNode.proposeBatch, as RaftNode's group commit does). */
  proposeBatch(n: SimNode, data: Uint8Array[]): boolean {
    if (!n.rn) return false;
    try {
      n.rn.proposeBatch(data);
      return true;
    } catch (err) {
      if (isProposalDropped(err)) return false;
      throw err;
    }
  }

  private clientPropose(): void {
    const live = this.liveNodes();
    if (live.length === 0) return;
    const n = this.rng.chance(0.7) ? (this.leader() ?? this.rng.pick(live)) : this.rng.pick(live);
    // Now and then several clients' commands arrive together and go in as one batch.
    const keys = Array.from({ length: this.rng.chance(0.25) ? 2 + this.rng.int(3) : 1 }, () => `p${++this.proposalSeq}`);
    const data = keys.map((k) => new TextEncoder().encode(k));
    const ok = keys.length === 1 ? this.propose(n, data[0]!) : this.proposeBatch(n, data);
    if (ok) for (const key of keys) this.pending.set(key, this.now);
  }

  /** A client re-sends proposals it has not seen applied (the app deduplicates), in one batch. */
  private retryPending(): void {
    const target = this.leader();
    if (!target) return;
    const due: Uint8Array[] = [];
    for (const [key, at] of this.pending) {
      if (this.now - at >= 3 * ELECTION_TICK) {
        this.pending.set(key, this.now);
        due.push(new TextEncoder().encode(key));
      }
    }
    if (due.length > 0) this.proposeBatch(target, due);
  }

  // ------------------------------------------------------------ membership

  /** Membership as of the most advanced applied index among nodes. */
  latestConf(): ConfState {
    let best: SimNode | undefined;
    for (const n of this.nodes.values()) if (!n.decommissioned && (!best || n.applied > best.applied)) best = n;
    return (best as SimNode).confState;
  }

  private membershipChange(): void {
    const leader = this.leader();
    if (!leader?.rn) return;
    const cs = leader.confState;
    if (cs.votersOutgoing.length > 0) return; // joint: wait for the auto-leave
    const spares = [...Array(this.opts.nodes + 2).keys()]
      .map((i) => i + 1)
      .filter((id) => !cs.voters.includes(id) && !cs.learners.includes(id) && !this.nodes.get(id)?.decommissioned);
    const options: ConfChange[] = [];
    const cc = (t: ConfChangeType, id: NodeId) => ({ type: t, nodeId: id });
    if (spares.length > 0) options.push({ transition: 'auto', changes: [cc(ConfChangeType.AddLearnerNode, this.rng.pick(spares))], context: new Uint8Array(0) });
    if (cs.learners.length > 0) {
      const l = this.rng.pick(cs.learners);
      options.push({ transition: 'auto', changes: [cc(ConfChangeType.AddNode, l)], context: new Uint8Array(0) });
      if (cs.voters.length >= 3) {
        // Replace a voter by the learner in one joint-consensus step.
        const v = this.rng.pick(cs.voters);
        options.push({ transition: this.rng.chance(0.5) ? 'auto' : 'implicit', changes: [cc(ConfChangeType.AddNode, l), cc(ConfChangeType.RemoveNode, v)], context: new Uint8Array(0) });
      }
    }
    if (cs.voters.length >= 4 || (cs.voters.length === 3 && this.rng.chance(0.3))) {
      options.push({ transition: 'auto', changes: [cc(ConfChangeType.RemoveNode, this.rng.pick(cs.voters))], context: new Uint8Array(0) });
    }
    if (cs.voters.length >= 2 && this.rng.chance(0.2)) {
      // Demote a voter to learner.
      options.push({ transition: 'auto', changes: [cc(ConfChangeType.AddLearnerNode, this.rng.pick(cs.voters))], context: new Uint8Array(0) });
    }
    if (options.length === 0) return;
    const change = this.rng.pick(options);
    // A node being added must be running to receive the log.
    for (const c of change.changes) {
      if (c.type === ConfChangeType.RemoveNode) continue;
      let n = this.nodes.get(c.nodeId);
      if (!n) {
        n = new SimNode(c.nodeId, this.newApp(), { voters: [], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false });
        this.nodes.set(c.nodeId, n);
        this.start(n);
      }
    }
    try {
      leader.rn.proposeConfChange(change);
      this.stats.confChanges++;
      this.log(() => `propose conf change ${describeConfChange(change)} at ${leader.id}`);
    } catch (err) {
      if (!isRaftError(err, 'RAFT_PROPOSAL_DROPPED')) throw err;
    }
  }

  /** Stops nodes that a committed configuration no longer includes (an operator would). */
  private decommissionRemoved(): void {
    const cs = this.latestConf();
    const members = new Set([...cs.voters, ...cs.learners, ...cs.votersOutgoing, ...cs.learnersNext]);
    for (const n of this.nodes.values()) {
      if (n.decommissioned || members.has(n.id) || !this.checker.wasMember(n.id)) continue;
      n.decommissioned = true;
      if (n.rn) {
        n.rn = null;
        this.opts.observer?.onStop?.(n);
      }
      this.log(() => `decommission ${n.id}`);
    }
  }

  recordMembers(): void {
    for (const n of this.nodes.values()) {
      const cs = n.confState;
      for (const id of [...cs.voters, ...cs.learners, ...cs.votersOutgoing]) this.checker.markMember(id);
    }
  }

  // ------------------------------------------------------------ faults

  private randomFault(): void {
    const r = this.rng.float();
    const all = [...this.nodes.values()].filter((n) => !n.decommissioned);
    if (r < 0.25) {
      const live = all.filter((n) => n.up);
      if (live.length > 0) this.crash(this.rng.pick(live));
    } else if (r < 0.55) {
      const down = all.filter((n) => !n.up);
      if (down.length > 0) this.start(this.rng.pick(down));
    } else if (r < 0.75) {
      // A random two-way split.
      this.groups.clear();
      for (const n of all) this.groups.set(n.id, this.rng.int(2));
      this.log(() => `partition ${JSON.stringify([...this.groups])}`);
    } else if (r < 0.9) {
      this.groups.clear();
      this.log(() => 'heal');
    } else {
      // An operator asks for a leadership transfer (to a random member: voters and learners,
      // which must be refused, alike).
      const leader = this.leader();
      const targets = all.filter((n) => n.up && n !== leader);
      if (leader?.rn && targets.length > 0) {
        const to = this.rng.pick(targets).id;
        this.stats.transfers++;
        this.log(() => `transfer leadership ${leader.id} -> ${to}`);
        leader.rn.transferLeader(to);
      }
    }
  }

  // ------------------------------------------------------------ main loop

  /** One tick of virtual time: faults, clients, ticks, then message rounds until quiet. */
  step(): void {
    this.now++;
    if (this.faults) {
      if (this.rng.chance(this.opts.faultRate)) this.randomFault();
      if (this.opts.membershipChanges && this.rng.chance(0.03)) this.membershipChange();
    }
    if (this.faults && this.rng.chance(this.opts.proposeRate)) this.clientPropose();
    if (this.now % 5 === 0) this.retryPending();
    this.opts.observer?.onTick?.(this);
    if (this.faults && this.hintRng.chance(0.002)) {
      // A wrong hint: a follower told its leader is down while it may well be alive.
      const told = [...this.nodes.values()].filter((n) => n.rn && n.rn.leader() !== NONE);
      const f = told.length > 0 ? this.hintRng.pick(told) : undefined;
      if (f?.rn) this.leaderDown(f, f.rn.leader());
    }
    this.runEarlyCampaigns();
    for (const n of this.nodes.values()) n.rn?.tick();
    // Rounds: deliver, process readies, until nothing due remains this tick.
    for (let round = 0; round < 50; round++) {
      let any = false;
      for (const n of this.nodes.values()) any = this.processReady(n) || any;
      any = this.deliverDue() || any;
      if (!any) break;
    }
    this.recordMembers();
    this.decommissionRemoved();
    this.checker.checkStep(this);
  }

  /** The fault phase, then the liveness phase. Throws SimFailure on any violation. */
  run(): void {
    for (let t = 0; t < this.opts.faultTicks; t++) this.step();
    this.faults = false;
    this.groups.clear();
    for (const n of this.nodes.values()) if (!n.up && !n.decommissioned) this.start(n);
    const deadline = this.now + this.opts.livenessTicks;
    while (this.now < deadline) {
      this.step();
      if (this.settled()) {
        this.stats.committed = this.checker.highestApplied();
        return;
      }
    }
    const leader = this.leader();
    this.fail(
      `liveness: no stable leader with all proposals committed within ${this.opts.livenessTicks} ticks after faults stopped ` +
        `(leader=${leader?.id ?? 'none'}, pending=${[...this.pending.keys()].slice(0, 5).join(',')}${this.pending.size > 5 ? '...' : ''})\n` +
        this.describeNodes(),
    );
  }

  describeNodes(): string {
    const lines: string[] = [];
    for (const n of this.nodes.values()) {
      if (!n.rn) {
        lines.push(`  ${n.id}: ${n.decommissioned ? 'decommissioned' : 'down'}`);
        continue;
      }
      const st = n.rn.status();
      const r = n.rn.raft;
      lines.push(
        `  ${n.id}: ${st.raftState} term=${st.term} vote=${st.vote} lead=${st.lead} commit=${st.commit} applied=${st.applied} ` +
          `last=${r.raftLog.lastIndex()}/${r.raftLog.lastTerm()} first=${r.raftLog.firstIndex()} conf=${JSON.stringify(st.config)} promotable=${r.promotable()}`,
      );
    }
    return lines.join('\n');
  }

  /** A leader that every live member follows, and every accepted proposal applied. */
  settled(): boolean {
    const leader = this.leader();
    if (!leader?.rn || this.pending.size > 0) return false;
    const term = leader.rn.raft.term;
    for (const n of this.liveNodes()) {
      const r = (n.rn as RawNode).raft;
      if (!r.trk.progress.has(n.id)) continue; // not (yet) a member
      if (r.term !== term || r.lead !== leader.id) return false;
    }
    return true;
  }
}
