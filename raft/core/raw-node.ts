// raft/core/raw-node.ts owns RawNode, the public face of the consensus core, and Ready, the
// batch of work it hands to its driver. RawNode is single-threaded and synchronous: the driver
// calls inputs (tick, step, propose, ...), then, when hasReady(), takes ready(), carries it out
// in the documented order, and calls advance(ready). Nothing here does I/O or reads a clock.

import {
  type ConfChange,
  type ConfState,
  type Entry,
  EntryType,
  type HardState,
  type Message,
  MessageType,
  type NodeId,
  type Snapshot,
} from '../types.js';
import { encodeConfChange } from './conf-change.js';
import { invariant, isProposalDropped, RaftInvariantError } from './errors.js';
import { makeMessage } from './messages.js';
import type { ProgressState } from './progress.js';
import { Raft, type RaftConfig, type SoftState, StateType } from './raft.js';
import type { ReadState } from './read-only.js';
import { hardStateEqual } from './snapshots.js';

/**
 * One batch of work for the driver. Carry it out in this order:
 *
 *  1. Persist, durably when `mustSync`: `hardState` (if present), `entries` (appending, and
 *     replacing any existing entries from entries[0].index on) and `snapshot` (if present).
 *     Then update the MemoryStorage image: applySnapshot, append, setHardState.
 *  2. Only then send `messages`. They may promise things (a vote, an acknowledged append) that
 *     are true only once step 1 is durable; a crash in between must not leave a promise on
 *     the wire that the restarted node does not keep. Messages to a node may be sent in any
 *     order and may be dropped; Raft tolerates both.
 *  3. Install `snapshot` into the state machine (if present), then apply `committedEntries` in
 *     order. For EntryType.ConfChange entries, decode (decodeConfChange) and call
 *     RawNode.applyConfChange. committedEntries may include entries from this same batch's
 *     `entries` (a single-voter cluster commits at once), which is why step 1 comes first.
 *  4. Hand `readStates` to waiting readers: each may be served once the state machine has
 *     applied readState.index.
 *  5. Call advance(ready). Only then may ready() be called again; inputs (tick, step,
 *     propose...) may be fed in between.
 */
export interface Ready {
  /** Leader and role, when they changed since the last Ready. Volatile: not to be persisted. */
  softState?: SoftState;
  /** Term, vote and commit, when they changed. Persist before sending messages. */
  hardState?: HardState;
  /** Linearizable reads that are ready to be served (see step 4). */
  readStates: ReadState[];
  /** Entries to append to durable storage before sending messages. */
  entries: Entry[];
  /** A snapshot received from the leader, to persist and install. */
  snapshot?: Snapshot;
  /** Committed entries to apply to the state machine, in order. */
  committedEntries: Entry[];
  /** Outbound messages; send after step 1 completed. */
  messages: Message[];
  /**
   * Whether step 1 must reach stable storage (fsync) before messages go out: true when
   * entries, term, vote or a snapshot changed. A change of commit index alone need not be
   * synced; a lost commit index is re-learned from the leader.
   */
  mustSync: boolean;
}

export interface ProgressStatus {
  match: number;
  next: number;
  state: ProgressState;
  isLearner: boolean;
  recentActive: boolean;
  paused: boolean;
  inflight: number;
}

export interface Status {
  id: NodeId;
  term: number;
  vote: NodeId;
  commit: number;
  lead: NodeId;
  raftState: StateType;
  applied: number;
  leadTransferee: NodeId;
  config: ConfState;
  /** Per-member replication progress; only on the leader. */
  progress?: Map<NodeId, ProgressStatus>;
}

export type RawNodeConfig = RaftConfig;

export class RawNode {
  /** The protocol state machine. Exposed for tests and the simulator; drivers use the methods below. */
  readonly raft: Raft;
  private prevSoftState: SoftState;
  private prevHardState: HardState;
  private outstanding = false;

  /**
   * Starts (or restarts) a node from its storage. The storage must hold the node's durable
   * state: its initialState() gives term, vote, commit and membership. A brand-new cluster is
   * bootstrapped by giving each founding member a storage whose snapshot carries the initial
   * ConfState (MemoryStorage.applySnapshot); a node joining later starts empty and receives
   * everything from the leader.
   */
  constructor(config: RawNodeConfig) {
    this.raft = new Raft(config);
    this.prevSoftState = this.raft.softState();
    // Compared with what is persisted, so a commit index raised at start (by the snapshot or
    // the applied index) is handed out to be persisted in the first Ready.
    this.prevHardState = config.storage.initialState().hardState;
  }

  /** Advances logical time by one tick (election and heartbeat timeouts are counted in ticks). */
  tick(): void {
    this.raft.tick();
  }

  /** Starts an election now (pre-vote first when enabled). */
  campaign(): void {
    this.raft.step(makeMessage({ type: MessageType.Hup, from: this.raft.id }));
  }

  /**
   * Proposes data to be appended to the log. Throws ProposalDroppedError when it cannot be
   * accepted (no leader known, transfer in progress). Acceptance is no promise of commitment:
   * watch committedEntries, and retry on a timeout of your own.
   */
  propose(data: Uint8Array): void {
    this.raft.step(
      makeMessage({ type: MessageType.Prop, from: this.raft.id, entries: [{ term: 0, index: 0, type: EntryType.Normal, data }] }),
    );
  }

  /**
   * Proposes several commands at once, as consecutive log entries in the given order: one
   * step, so a leader sends them to each follower in one append rather than one per command.
   * All or nothing: throws ProposalDroppedError (nothing appended) like propose().
   */
  proposeBatch(data: readonly Uint8Array[]): void {
    if (data.length === 0) return;
    this.raft.step(
      makeMessage({
        type: MessageType.Prop,
        from: this.raft.id,
        entries: data.map((d) => ({ term: 0, index: 0, type: EntryType.Normal, data: d })),
      }),
    );
  }

  /**
   * Proposes a membership change. It takes effect only when the driver applies the committed
   * entry (applyConfChange). One change may be pending at a time; a further one is replaced
   * in the log by an empty entry, and so is one the leader's configuration cannot take
   * (confChangeError). An empty ConfChange with transition 'auto' leaves a joint config.
   */
  proposeConfChange(cc: ConfChange): void {
    this.raft.step(
      makeMessage({
        type: MessageType.Prop,
        from: this.raft.id,
        entries: [{ term: 0, index: 0, type: EntryType.ConfChange, data: encodeConfChange(cc) }],
      }),
    );
  }

  /**
   * Feeds a message received from the network. Local-only message types and responses from
   * unknown peers are ignored; so is a forwarded proposal that cannot be accepted.
   */
  step(m: Message): void {
    if (!this.raft.acceptsFromNetwork(m)) return;
    try {
      this.raft.step(m);
    } catch (err) {
      if (!isProposalDropped(err)) throw err;
    }
  }

  /**
   * Requests a linearizable read. `ctx` identifies the request and must be unique across the
   * cluster among outstanding reads (the leader deduplicates by it; include the node's id);
   * the answer arrives as a ReadState with the same ctx in a later Ready (none if leadership is
   * lost meanwhile: retry on a timeout).
   */
  readIndex(ctx: Uint8Array): void {
    this.raft.step(makeMessage({ type: MessageType.ReadIndex, from: this.raft.id, context: ctx }));
  }

  /**
   * Takes the read states answered so far, at any time, also while a Ready is outstanding
   * (they are then not in the next Ready). A read state promises nothing about this node's
   * storage: it is served once the state machine has applied its index, whatever Ready is in
   * flight, so a driver need not hold a confirmed read behind a write and the apply after it.
   */
  takeReadStates(): ReadState[] {
    const r = this.raft;
    if (r.readStates.length === 0) return [];
    const out = r.readStates;
    r.readStates = [];
    return out;
  }

  /** Asks the leader to hand leadership to `transferee` (thesis §3.10). Forwarded if we're a follower. */
  transferLeader(transferee: NodeId): void {
    this.raft.step(makeMessage({ type: MessageType.TransferLeader, from: transferee, to: this.raft.id }));
  }

  /** A follower forgets its leader so that it grants pre-votes at once (Raft.forgetLeader). */
  forgetLeader(): void {
    this.raft.forgetLeader();
  }

  /** The driver could not deliver to `id`: the leader stops pipelining to it and probes instead. */
  reportUnreachable(id: NodeId): void {
    this.raft.step(makeMessage({ type: MessageType.Unreachable, from: id }));
  }

  /** Outcome of sending a snapshot to `id`; on failure the leader will try again later. */
  reportSnapshot(id: NodeId, ok: boolean): void {
    this.raft.step(makeMessage({ type: MessageType.SnapStatus, from: id, reject: !ok }));
  }

  /**
   * Applies a committed ConfChange (from committedEntries) and returns the new membership. A
   * change the configuration cannot take (confChangeError), which only logs from before leaders
   * checked changes can hold, is ignored (logged as a warning) on every member alike.
   */
  applyConfChange(cc: ConfChange): ConfState {
    return this.raft.applyConfChange(cc);
  }

  /**
   * Why `cc` could not be applied to this node's current configuration (for example removing
   * the last voter), or null. Changes nothing. A driver may check a change before proposing it
   * (on a follower the configuration may lag the leader's, which checks again), and tell a
   * change applyConfChange will ignore.
   */
  confChangeError(cc: ConfChange): string | null {
    return this.raft.confChangeError(cc);
  }

  /**
   * Leader only (false elsewhere): a membership change in its log is not applied yet, so a new
   * one would be refused (replaced by an empty entry).
   */
  confChangePending(): boolean {
    const r = this.raft;
    return r.state === StateType.Leader && r.pendingConfIndex > r.raftLog.applied;
  }

  /** Whether ready() would return something to do. False while a Ready awaits advance(). */
  hasReady(): boolean {
    if (this.outstanding) return false;
    const r = this.raft;
    const ss = r.softState();
    if (ss.lead !== this.prevSoftState.lead || ss.raftState !== this.prevSoftState.raftState) return true;
    if (!hardStateEqual(r.hardState(), this.prevHardState)) return true;
    if (r.raftLog.hasPendingSnapshot()) return true;
    if (r.msgs.length > 0 || r.raftLog.unstableEntries().length > 0 || r.raftLog.hasNextCommittedEntries()) return true;
    return r.readStates.length > 0;
  }

  /** Takes the next batch of work. Call advance(ready) after carrying it out, before the next ready(). */
  ready(): Ready {
    if (this.outstanding) throw new RaftInvariantError('ready() called again before advance()');
    const r = this.raft;
    const rd: Ready = {
      readStates: r.readStates,
      entries: r.raftLog.unstableEntries().slice(),
      committedEntries: r.raftLog.nextCommittedEntries(),
      messages: r.msgs,
      mustSync: false,
    };
    const ss = r.softState();
    if (ss.lead !== this.prevSoftState.lead || ss.raftState !== this.prevSoftState.raftState) {
      rd.softState = ss;
      this.prevSoftState = ss;
    }
    const hs = r.hardState();
    if (!hardStateEqual(hs, this.prevHardState)) {
      rd.hardState = hs;
      rd.mustSync = hs.term !== this.prevHardState.term || hs.vote !== this.prevHardState.vote;
      this.prevHardState = hs;
    }
    const snap = r.raftLog.unstable.snapshot;
    if (snap) rd.snapshot = snap;
    if (rd.entries.length > 0 || rd.snapshot) rd.mustSync = true;
    r.msgs = [];
    r.readStates = [];
    this.outstanding = true;
    return rd;
  }

  /** The driver carried out `rd`: persisted entries become stable, applied entries applied. */
  advance(rd: Ready): void {
    invariant(this.outstanding, 'advance() without an outstanding ready()');
    this.outstanding = false;
    const r = this.raft;
    if (rd.entries.length > 0) {
      const last = rd.entries[rd.entries.length - 1];
      r.raftLog.stableTo(last.index, last.term);
    }
    if (rd.snapshot) r.appliedSnapshot(rd.snapshot);
    if (rd.committedEntries.length > 0) r.appliedTo(rd.committedEntries[rd.committedEntries.length - 1].index);
  }

  /**
   * The highest committed index whose entry this node may apply while a Ready's write is
   * still in flight (see committedEntriesBetween). On the leader: durable on a quorum of
   * voters, counting this node only up to what its storage holds (the driver appends to
   * storage only once a write is durable; entries of a Ready still being written do not
   * count). Followers acknowledge only durable entries, so when they form a quorum on their
   * own, entries up to here may be applied and acknowledged to clients while the leader's
   * own write is still in flight (Raft thesis §10.2.1). On any other member: the commit index
   * it was told, up to what its own storage holds (committed entries are never rewritten).
   */
  durablyCommittedIndex(): number {
    const r = this.raft;
    const durable = r.raftLog.storage.lastIndex();
    if (r.state === StateType.Leader) return r.durablyCommitted(durable);
    return Math.min(r.raftLog.committed, durable);
  }

  /**
   * Takes, while a Ready is outstanding, the queued outbound messages that promise nothing
   * about this node's storage, so the driver can send them at once instead of after the
   * Ready's write (they would otherwise wait a whole fsync, and the apply after it):
   *   - forwarded proposals and read requests (MsgProp, MsgReadIndex to the leader);
   *   - a leader's appends and heartbeats, when every other queued message is one too, the
   *     term and vote are those of the last Ready and of the driver's last write (`persisted`:
   *     nothing unpersisted can be on the wire) and no commit index beyond what is durable on
   *     a quorum (durablyCommittedIndex) is announced: a leader's log may run ahead of its
   *     disk (thesis §10.2.1), its commit index may not;
   *   - with that same term and vote, whatever else is queued, the messages that keep a
   *     leadership alive and need no order: a leader's heartbeats (announcing at most the
   *     durable commit index) and read-index answers up to it, a follower's heartbeat
   *     answers. Held behind a slow fsync and the apply after it they starved the followers'
   *     election timers and the leader's check-quorum, and a burst of writes on a loaded
   *     host cost an election (issue 13). Raft tolerates their reordering.
   * The rest stays for the next Ready. A leader's appends are taken only with `leader` set:
   * the driver sets it once the outstanding Ready's own messages are on their way, so that
   * appends to one peer keep their relative order.
   */
  takeEarlyMessages(persisted: { term: number; vote: NodeId; leader: boolean }): Message[] {
    const r = this.raft;
    if (r.msgs.length === 0) return [];
    const forwarded = (m: Message): boolean => m.type === MessageType.Prop || m.type === MessageType.ReadIndex;
    // Term and vote are on disk: nothing this node says can rest on an unwritten vote.
    const stable =
      r.term === persisted.term && r.vote === persisted.vote && r.term === this.prevHardState.term && r.vote === this.prevHardState.vote;
    const leader = stable && r.state === StateType.Leader;
    const safeCommit = leader ? this.durablyCommittedIndex() : 0;
    if (leader && persisted.leader) {
      const early = r.msgs.every((m) => forwarded(m) || ((m.type === MessageType.App || m.type === MessageType.Heartbeat) && m.commit <= safeCommit));
      if (early) {
        const out = r.msgs;
        r.msgs = [];
        return out;
      }
    }
    const keepsAlive = (m: Message): boolean =>
      stable &&
      ((leader && m.type === MessageType.Heartbeat) ||
        (leader && m.type === MessageType.ReadIndexResp && m.index <= safeCommit) ||
        (r.state !== StateType.Leader && m.type === MessageType.HeartbeatResp));
    if (!r.msgs.some((m) => forwarded(m) || keepsAlive(m))) return [];
    const out: Message[] = [];
    const rest: Message[] = [];
    for (const m of r.msgs) {
      if (forwarded(m)) out.push(m);
      // A heartbeat's commit index is min(match, commit): lowering it to what is durable on a
      // quorum only delays what the follower learns, never tells it too much.
      else if (keepsAlive(m)) out.push(m.type === MessageType.Heartbeat && m.commit > safeCommit ? { ...m, commit: safeCommit } : m);
      else rest.push(m);
    }
    r.msgs = rest;
    return out;
  }

  /**
   * Committed entries [lo, hi] (hi ≤ the commit index), to apply ahead of the Ready that will
   * hand them out (durablyCommittedIndex); [] when they are not all available in memory.
   * Applying them does not change what later Readies contain: the driver skips entries it
   * has applied, and advance() moves the applied index as usual.
   */
  committedEntriesBetween(lo: number, hi: number): Entry[] {
    const log = this.raft.raftLog;
    if (lo > hi || hi > log.committed || lo < log.firstIndex()) return [];
    return log.slice(lo, hi + 1, Number.MAX_SAFE_INTEGER);
  }

  /** The leader this node knows, NONE when none: status().lead without status()'s copies, for hot paths. */
  leader(): NodeId {
    return this.raft.lead;
  }

  /** The current term (status().term without building a status). */
  term(): number {
    return this.raft.term;
  }

  isLeader(): boolean {
    return this.raft.state === StateType.Leader;
  }

  status(): Status {
    const r = this.raft;
    const s: Status = {
      id: r.id,
      term: r.term,
      vote: r.vote,
      commit: r.raftLog.committed,
      lead: r.lead,
      raftState: r.state,
      applied: r.raftLog.applied,
      leadTransferee: r.leadTransferee,
      config: r.trk.confState(),
    };
    if (r.state === StateType.Leader) {
      s.progress = new Map();
      r.trk.visit((id, pr) => {
        s.progress?.set(id, {
          match: pr.match,
          next: pr.next,
          state: pr.state,
          isLearner: pr.isLearner,
          recentActive: pr.recentActive,
          paused: pr.isPaused(),
          inflight: pr.inflights.count(),
        });
      });
    }
    return s;
  }
}
