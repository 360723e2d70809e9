// raft/core/raft.ts owns the Raft protocol state machine of one node: roles (follower,
// pre-candidate, candidate, leader), terms and votes, elections (with pre-vote and check-quorum),
// log replication with flow control, commitment, snapshots to lagging followers, ReadIndex,
// leadership transfer and membership changes. It is pure: inputs are step(message) and tick(),
// outputs accumulate in `msgs`, `readStates` and the log; RawNode packages them into Ready.
// Section numbers in comments refer to the Raft paper (§) and Ongaro's thesis.

import {
  type ConfChange,
  type ConfState,
  type Entry,
  EntryType,
  type HardState,
  type Message,
  MessageType,
  NONE,
  type NodeId,
  type Snapshot,
  type LogStorage,
} from '../types.js';
import { Changer, type ConfigAndProgress, decodeConfChange, enterJointMode, isLeaveJoint, restoreConfig } from './conf-change.js';
import { describeEntries } from './describe.js';
import { entriesSize } from './entries.js';
import { invariant, isCompacted, isRaftError, isSnapshotTemporarilyUnavailable, ProposalDroppedError, RaftError } from './errors.js';
import { Inflights } from './inflights.js';
import { type RaftLogger, type RaftLogLevel, noopLogger } from './logger.js';
import { bytesEqual, CAMPAIGN_TRANSFER, COMMIT_ONLY, isLocalMessage, isResponseMessage, makeMessage, proposalContextTerm, proposalTermContext, voteResponseType } from './messages.js';
import { Progress } from './progress.js';
import { VoteResult } from './quorum.js';
import type { RandomSource } from './random.js';
import { RaftLog } from './raft-log.js';
import { ReadOnly, type ReadOnlyOption, type ReadState } from './read-only.js';
import { describeConfig, ProgressTracker } from './tracker.js';

export enum StateType {
  Follower = 'StateFollower',
  Candidate = 'StateCandidate',
  Leader = 'StateLeader',
  PreCandidate = 'StatePreCandidate',
}

export interface RaftConfig {
  /** This node's id; must be non-zero. */
  id: NodeId;
  /** Ticks without hearing from a leader before campaigning; the actual timeout is randomized in [electionTick, 2*electionTick). */
  electionTick: number;
  /** Ticks between leader heartbeats. Must be < electionTick (typically electionTick/10). */
  heartbeatTick: number;
  /** The log image; read-only from the core. Its initialState() supplies term/vote/commit and membership. */
  storage: LogStorage;
  /**
   * The last index the application has applied (its state machine is at least this far). 0 for
   * a fresh node. May exceed the persisted commit index (commit-only updates are not synced);
   * it may not exceed the last persisted log index.
   */
  applied?: number;
  /** Byte limit of entries in one MsgApp (at least one entry is always sent). Default 1 MiB. */
  maxSizePerMsg?: number;
  /** Byte limit of committed entries in one Ready. Default: maxSizePerMsg. */
  maxCommittedSizePerReady?: number;
  /** Max MsgApps in flight to one follower in replicate state. Default 256. */
  maxInflightMsgs?: number;
  /** Max bytes of MsgApps in flight to one follower; 0 = unlimited. Default 0. */
  maxInflightBytes?: number;
  /** Run a pre-vote round (thesis §9.6) so a partitioned node rejoining does not disrupt. */
  preVote?: boolean;
  /** Leader steps down when it has not heard from a quorum for an election timeout; followers honour a leader lease. */
  checkQuorum?: boolean;
  /** 'safe' (default) confirms leadership with a heartbeat round; 'lease-based' relies on clocks and requires checkQuorum. */
  readOnlyOption?: ReadOnlyOption;
  /** Seeded source for randomized election timeouts. */
  random: RandomSource;
  logger?: RaftLogger;
}

export interface SoftState {
  lead: NodeId;
  raftState: StateType;
}

export class Raft {
  readonly id: NodeId;
  term = 0;
  vote: NodeId = NONE;
  readStates: ReadState[] = [];
  readonly raftLog: RaftLog;
  readonly maxMsgSize: number;
  readonly trk: ProgressTracker;
  state: StateType = StateType.Follower;
  /** Whether this node is a learner in its own configuration. */
  isLearner = false;
  /** Messages to send once the Ready they belong to is persisted. */
  msgs: Message[] = [];
  lead: NodeId = NONE;
  /** The target of an ongoing leadership transfer, or NONE. */
  leadTransferee: NodeId = NONE;
  /**
   * Only one conf change may be pending (in the log, not yet applied) at a time. Set to the
   * index of the latest conf change the leader appended; new ones are refused until applied.
   */
  pendingConfIndex = 0;
  readOnly: ReadOnly;
  /** ReadIndex requests that arrived before this leader committed an entry of its term. */
  pendingReadIndexMessages: Message[] = [];
  /** This leader is no longer a voter and steps down once a voter has caught up (maybeHandOff). */
  handingOff = false;
  /** Ticks since the last election timeout reset (leader: since the last check-quorum round). */
  electionElapsed = 0;
  heartbeatElapsed = 0;
  readonly checkQuorum: boolean;
  readonly preVote: boolean;
  readonly heartbeatTimeout: number;
  readonly electionTimeout: number;
  randomizedElectionTimeout = 0;
  private readonly random: RandomSource;
  readonly logger: RaftLogger;
  private stepFn: (m: Message) => void;

  constructor(c: RaftConfig) {
    validateConfig(c);
    this.id = c.id;
    this.logger = c.logger ?? noopLogger;
    this.random = c.random;
    const maxMsgSize = c.maxSizePerMsg ?? 1 << 20;
    this.maxMsgSize = maxMsgSize;
    this.raftLog = new RaftLog(c.storage, this.logger, c.maxCommittedSizePerReady ?? maxMsgSize);
    this.trk = new ProgressTracker(c.maxInflightMsgs ?? 256, c.maxInflightBytes ?? 0);
    this.checkQuorum = c.checkQuorum ?? false;
    this.preVote = c.preVote ?? false;
    this.heartbeatTimeout = c.heartbeatTick;
    this.electionTimeout = c.electionTick;
    this.readOnly = new ReadOnly(c.readOnlyOption ?? 'safe');
    this.stepFn = (m) => this.stepFollower(m);

    const { hardState, confState } = c.storage.initialState();
    const r = restoreConfig(this.trk, this.raftLog.lastIndex(), confState);
    this.switchToConfig(r);
    if (hardState.term !== 0 || hardState.vote !== 0 || hardState.commit !== 0) this.loadState(hardState);
    if (c.applied !== undefined && c.applied > 0) {
      if (c.applied > this.raftLog.committed) {
        // The state machine is ahead of the persisted commit index: a commit-only hard state
        // update need not be synced (Ready.mustSync), so it can be lost while the application
        // kept what it applied. Whatever was applied was committed.
        invariant(c.applied <= this.raftLog.lastIndex(), () => `applied(${c.applied}) is beyond the last log index(${this.raftLog.lastIndex()})`);
        this.raftLog.committed = c.applied;
      }
      this.raftLog.appliedTo(c.applied);
    }
    this.becomeFollower(this.term, NONE);

    this.info(() => {
      const nodes = this.trk.voterIds().join(',');
      return `newRaft ${this.id} [peers: [${nodes}], term: ${this.term}, commit: ${this.raftLog.committed}, applied: ${this.raftLog.applied}, lastindex: ${this.raftLog.lastIndex()}, lastterm: ${this.raftLog.lastTerm()}]`;
    });
  }

  // ---------------------------------------------------------------- logging

  private logAt(level: RaftLogLevel, f: () => string): void {
    if (this.logger.enabled(level)) this.logger.log(level, f());
  }
  private debug(f: () => string): void {
    this.logAt('debug', f);
  }
  private info(f: () => string): void {
    this.logAt('info', f);
  }
  private warn(f: () => string): void {
    this.logAt('warn', f);
  }

  // ---------------------------------------------------------------- state snapshots

  softState(): SoftState {
    return { lead: this.lead, raftState: this.state };
  }

  hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.raftLog.committed };
  }

  private loadState(hs: HardState): void {
    invariant(
      hs.commit <= this.raftLog.lastIndex(),
      () => `${this.id} state.commit ${hs.commit} is out of range [${this.raftLog.committed}, ${this.raftLog.lastIndex()}]`,
    );
    // A commit index below the snapshot can be persisted when only the (unsynced) commit
    // update was lost in a crash; the snapshot itself proves everything up to it committed.
    this.raftLog.committed = Math.max(hs.commit, this.raftLog.committed);
    this.term = hs.term;
    this.vote = hs.vote;
  }

  // ---------------------------------------------------------------- sending

  /**
   * Queues a message. Votes and their responses carry their own term (a pre-vote is sent for
   * a term we don't have yet); forwarded proposals and read requests are term-less local
   * requests; everything else carries our current term.
   */
  private send(m: Message): void {
    if (m.from === NONE) m.from = this.id;
    const t = m.type;
    if (t === MessageType.Vote || t === MessageType.VoteResp || t === MessageType.PreVote || t === MessageType.PreVoteResp) {
      invariant(m.term !== 0, () => `term should be set when sending ${t}`);
    } else {
      invariant(m.term === 0, () => `term should not be set when sending ${t} (was ${m.term})`);
      if (t !== MessageType.Prop && t !== MessageType.ReadIndex) m.term = this.term;
    }
    this.msgs.push(m);
  }

  private sendAppend(to: NodeId): void {
    this.maybeSendAppend(to, true);
  }

  /**
   * Sends a MsgApp with new entries (or an empty one if sendIfEmpty) to `to`, or a snapshot if
   * the entries it needs were compacted. Returns whether a message was sent.
   */
  private maybeSendAppend(to: NodeId, sendIfEmpty: boolean, commitOnly = false): boolean {
    const pr = this.trk.progress.get(to);
    if (!pr || pr.isPaused()) return false;
    const prevIndex = pr.next - 1;
    let prevTerm: number;
    let ents: Entry[];
    try {
      prevTerm = this.raftLog.term(prevIndex);
      // With a full window (reached after a heartbeat response unpaused us) send an empty
      // MsgApp: if every inflight message was lost, its answer is what frees the window.
      ents = pr.state === 'replicate' && pr.inflights.full() ? [] : this.raftLog.entries(pr.next, this.maxMsgSize);
    } catch (err) {
      if (!isCompacted(err)) throw err;
      return this.maybeSendSnapshot(to, pr);
    }
    if (ents.length === 0 && !sendIfEmpty) return false;
    // Only a follower in replicate state that has been sent everything may leave the commit
    // announcement unanswered (COMMIT_ONLY): its earlier answers, or a reported loss that moves
    // it to probe, tell the leader what it holds. A probe's answer is what ends probing.
    const unanswered = commitOnly && ents.length === 0 && pr.state === 'replicate' && !pr.inflights.full();
    this.send(
      makeMessage({
        type: MessageType.App,
        to,
        index: prevIndex,
        logTerm: prevTerm,
        entries: ents,
        commit: this.raftLog.committed,
        ...(unanswered ? { context: COMMIT_ONLY } : {}),
      }),
    );
    pr.sentEntries(ents.length, entriesSize(ents));
    return true;
  }

  private maybeSendSnapshot(to: NodeId, pr: Progress): boolean {
    if (!pr.recentActive) {
      this.debug(() => `ignore sending snapshot to ${to} since it is not recently active`);
      return false;
    }
    let snapshot: Snapshot;
    try {
      snapshot = this.raftLog.snapshot();
    } catch (err) {
      if (isSnapshotTemporarilyUnavailable(err)) {
        this.debug(() => `${this.id} failed to send snapshot to ${to} because snapshot is temporarily unavailable`);
        return false;
      }
      throw err;
    }
    invariant(snapshot.metadata.index > 0, 'need non-empty snapshot');
    const { index, term, confState: cs } = snapshot.metadata;
    if (![cs.voters, cs.learners, cs.votersOutgoing, cs.learnersNext].some((ids) => ids.includes(to))) {
      // The follower would refuse a snapshot that predates its membership, and we would send
      // it again at once. Wait until the application snapshots a newer state (it should after
      // applying a membership change); we retry on the next heartbeat response.
      this.debug(() => `${this.id} not sending snapshot [index: ${index}] to ${to}: it predates ${to}'s membership`);
      return false;
    }
    this.debug(() => `${this.id} [firstindex: ${this.raftLog.firstIndex()}, commit: ${this.raftLog.committed}] sent snapshot[index: ${index}, term: ${term}] to ${to} [${pr}]`);
    pr.becomeSnapshot(index);
    this.debug(() => `${this.id} paused sending replication messages to ${to} [${pr}]`);
    this.send(makeMessage({ type: MessageType.Snap, to, snapshot }));
    return true;
  }

  /** Heartbeats carry commit = min(match, committed): a follower must never commit entries it may not have. */
  private sendHeartbeat(to: NodeId, ctx: Uint8Array | undefined): void {
    const pr = this.trk.progress.get(to) as Progress;
    const commit = Math.min(pr.match, this.raftLog.committed);
    this.send(makeMessage({ type: MessageType.Heartbeat, to, commit, context: ctx ?? new Uint8Array(0) }));
  }

  private bcastAppend(): void {
    this.trk.visit((id) => {
      if (id !== this.id) this.sendAppend(id);
    });
  }

  /** bcastAppend for a commit index that moved: the empty appends it takes go unanswered (COMMIT_ONLY). */
  private bcastCommit(): void {
    this.trk.visit((id) => {
      if (id !== this.id) this.maybeSendAppend(id, true, true);
    });
  }

  private bcastHeartbeat(): void {
    const ctx = this.readOnly.lastPendingRequestCtx();
    this.bcastHeartbeatWithCtx(ctx);
  }

  private bcastHeartbeatWithCtx(ctx: Uint8Array | undefined): void {
    this.trk.visit((id) => {
      if (id !== this.id) this.sendHeartbeat(id, ctx);
    });
  }

  // ---------------------------------------------------------------- commit and apply

  /**
   * Leader: the largest committed index stored on a quorum of voters when this node counts
   * only up to `durableIndex` (see RawNode.durablyCommittedIndex); 0 when not leading.
   */
  durablyCommitted(durableIndex: number): number {
    if (this.state !== StateType.Leader) return 0;
    const quorumIndex = this.trk.config.voters.committedIndex((id) => {
      const match = this.trk.progress.get(id)?.match;
      return id === this.id && match !== undefined ? Math.min(match, durableIndex) : match;
    });
    return Math.min(quorumIndex, this.raftLog.committed);
  }

  /** Advances the commit index to what a quorum has (if it is of the current term). */
  private maybeCommit(): boolean {
    return this.raftLog.maybeCommit(this.trk.committed(), this.term);
  }

  /**
   * The application applied entries up to `index`. A leader whose joint config asked to be
   * left automatically proposes the leave once the entering change is applied.
   */
  appliedTo(index: number): void {
    const newApplied = Math.max(index, this.raftLog.applied);
    this.raftLog.appliedTo(newApplied);
    if (this.trk.config.autoLeave && newApplied >= this.pendingConfIndex && this.state === StateType.Leader) {
      const leave = makeMessage({
        type: MessageType.Prop,
        from: this.id,
        entries: [{ term: 0, index: 0, type: EntryType.ConfChange, data: new Uint8Array(0) }],
      });
      try {
        this.step(leave);
        this.info(() => `initiating automatic transition out of joint configuration ${describeConfig(this.trk.config)}`);
      } catch (err) {
        if (!(err instanceof ProposalDroppedError)) throw err;
        this.debug(() => `not initiating automatic transition out of joint configuration: ${err.message}`);
      }
    }
  }

  /** The application installed the snapshot: its state machine is at the snapshot's index. */
  appliedSnapshot(snap: Snapshot): void {
    const index = snap.metadata.index;
    this.raftLog.stableSnapTo(index);
    this.appliedTo(index);
  }

  // ---------------------------------------------------------------- role transitions

  private reset(term: number): void {
    if (this.term !== term) {
      this.term = term;
      this.vote = NONE;
    }
    this.lead = NONE;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.resetRandomizedElectionTimeout();
    this.abortLeaderTransfer();
    this.trk.resetVotes();
    const lastIndex = this.raftLog.lastIndex();
    this.trk.visit((id, pr) => {
      const fresh = new Progress(lastIndex + 1, new Inflights(this.trk.maxInflight, this.trk.maxInflightBytes), pr.isLearner);
      if (id === this.id) fresh.match = lastIndex;
      this.trk.progress.set(id, fresh);
    });
    this.pendingConfIndex = 0;
    this.handingOff = false;
    this.readOnly = new ReadOnly(this.readOnly.option);
    // Requests parked for a previous leadership are dropped; clients retry.
    this.pendingReadIndexMessages = [];
  }

  /** Appends entries to the leader's own log, stamping term and index. */
  private appendEntry(proposed: Entry[]): void {
    let li = this.raftLog.lastIndex();
    // Fresh objects: the proposal's entries belong to the caller (and may be delivered twice).
    const es = proposed.map((e) => ({ term: this.term, index: ++li, type: e.type, data: e.data }));
    li = this.raftLog.append(es);
    // The leader's own copy counts towards the quorum. It is not durable yet, but no message
    // depending on it leaves before the Ready carrying these entries is persisted.
    (this.trk.progress.get(this.id) as Progress).maybeUpdate(li);
    this.maybeCommit();
  }

  private tickElection(): void {
    this.electionElapsed++;
    if (this.promotable() && this.pastElectionTimeout()) {
      this.electionElapsed = 0;
      this.step(makeMessage({ type: MessageType.Hup, from: this.id }));
    }
  }

  private tickHeartbeat(): void {
    this.heartbeatElapsed++;
    this.electionElapsed++;
    if (this.electionElapsed >= this.electionTimeout) {
      this.electionElapsed = 0;
      if (this.checkQuorum) this.step(makeMessage({ type: MessageType.CheckQuorum, from: this.id }));
      // A transfer that did not finish within an election timeout is abandoned.
      if (this.state === StateType.Leader && this.leadTransferee !== NONE) this.abortLeaderTransfer();
    }
    if (this.state !== StateType.Leader) return;
    if (this.heartbeatElapsed >= this.heartbeatTimeout) {
      this.heartbeatElapsed = 0;
      this.step(makeMessage({ type: MessageType.Beat, from: this.id }));
    }
  }

  tick(): void {
    if (this.state === StateType.Leader) this.tickHeartbeat();
    else this.tickElection();
  }

  becomeFollower(term: number, lead: NodeId): void {
    this.stepFn = (m) => this.stepFollower(m);
    this.reset(term);
    this.lead = lead;
    this.state = StateType.Follower;
    this.info(() => `${this.id} became follower at term ${this.term}`);
  }

  /**
   * A follower forgets its leader (etcd's ForgetLeader) and stays a leaderless follower in its
   * term, without campaigning. With checkQuorum a follower refuses pre-votes while it has heard
   * from a leader within the election timeout (the lease in step()); a follower that forgot its
   * leader grants them at once. So when a quorum of followers has good reason to believe the
   * leader is gone (its process refuses connections), one of them can win an election without
   * the others waiting out their timeouts. Liveness only: votes, terms and logs are untouched,
   * and the follower takes the leader back from its next append or heartbeat. The election
   * timer keeps running, so a follower that forgot wrongly campaigns no sooner than before.
   */
  forgetLeader(): void {
    if (this.state !== StateType.Follower || this.lead === NONE) return;
    this.info(() => `${this.id} forgetting leader ${this.lead} at term ${this.term}`);
    this.lead = NONE;
  }

  private becomeCandidate(): void {
    invariant(this.state !== StateType.Leader, 'invalid transition [leader -> candidate]');
    this.stepFn = (m) => this.stepCandidate(m);
    this.reset(this.term + 1);
    this.vote = this.id;
    this.state = StateType.Candidate;
    this.info(() => `${this.id} became candidate at term ${this.term}`);
  }

  /**
   * Pre-vote (thesis §9.6): ask whether we could win before disrupting anyone. Neither the term
   * nor the vote changes, so a node that cannot win (partitioned, or with a stale log) never
   * forces the cluster into a new term.
   */
  private becomePreCandidate(): void {
    invariant(this.state !== StateType.Leader, 'invalid transition [leader -> pre-candidate]');
    this.stepFn = (m) => this.stepCandidate(m);
    this.trk.resetVotes();
    this.state = StateType.PreCandidate;
    this.lead = NONE;
    this.info(() => `${this.id} became pre-candidate at term ${this.term}`);
  }

  private becomeLeader(): void {
    invariant(this.state !== StateType.Follower, 'invalid transition [follower -> leader]');
    this.stepFn = (m) => this.stepLeader(m);
    this.reset(this.term);
    this.lead = this.id;
    this.state = StateType.Leader;
    // The leader's own progress is always in replicate: it trivially has its own log.
    (this.trk.progress.get(this.id) as Progress).becomeReplicate();
    // Conservatively treat any not-yet-applied entry as a pending conf change; we don't scan
    // the log to find out.
    this.pendingConfIndex = this.raftLog.lastIndex();
    // §8: "a leader must have the latest information on which entries are committed ... Raft
    // handles this by having each leader commit a blank no-op entry into the log at the start
    // of its term." It also lets entries from earlier terms commit (§5.4.2).
    this.appendEntry([{ term: 0, index: 0, type: EntryType.Normal, data: new Uint8Array(0) }]);
    this.info(() => `${this.id} became leader at term ${this.term}`);
  }

  /** Whether this node may campaign: it is a voter of its own config and no snapshot is pending. */
  promotable(): boolean {
    const pr = this.trk.progress.get(this.id);
    return pr !== undefined && !pr.isLearner && !this.raftLog.hasPendingSnapshot();
  }

  private pastElectionTimeout(): boolean {
    return this.electionElapsed >= this.randomizedElectionTimeout;
  }

  /** §5.2: "election timeouts are chosen randomly from a fixed interval" to split votes rarely. */
  private resetRandomizedElectionTimeout(): void {
    this.randomizedElectionTimeout = this.electionTimeout + this.random.int(this.electionTimeout);
  }

  private abortLeaderTransfer(): void {
    this.leadTransferee = NONE;
  }

  // ---------------------------------------------------------------- elections

  private hup(transfer: boolean): void {
    if (this.state === StateType.Leader) {
      this.debug(() => `${this.id} ignoring MsgHup because already leader`);
      return;
    }
    if (!this.promotable()) {
      this.warn(() => `${this.id} is unpromotable and can not campaign`);
      return;
    }
    // A node must apply every committed conf change before campaigning: a config it has not
    // applied may not include it, or may need a different quorum.
    if (this.hasUnappliedConfChanges()) {
      this.warn(() => `${this.id} cannot campaign at term ${this.term} since there are still pending configuration changes to apply`);
      return;
    }
    this.info(() => `${this.id} is starting a new election at term ${this.term}`);
    if (transfer) this.campaign('transfer');
    else if (this.preVote) this.campaign('pre-election');
    else this.campaign('election');
  }

  private hasUnappliedConfChanges(): boolean {
    if (this.raftLog.applied >= this.raftLog.committed) return false;
    const lo = Math.max(this.raftLog.applied + 1, this.raftLog.firstIndex());
    const ents = this.raftLog.slice(lo, this.raftLog.committed + 1, Number.MAX_SAFE_INTEGER);
    return ents.some((e) => e.type === EntryType.ConfChange);
  }

  private campaign(kind: 'pre-election' | 'election' | 'transfer'): void {
    let voteMsg: MessageType;
    let term: number;
    if (kind === 'pre-election') {
      this.becomePreCandidate();
      voteMsg = MessageType.PreVote;
      term = this.term + 1; // we ask about the term we would campaign in
    } else {
      this.becomeCandidate();
      voteMsg = MessageType.Vote;
      term = this.term;
    }
    // Our own vote first: a single-voter config wins right away.
    if (this.poll(this.id, voteResponseType(voteMsg), true) === VoteResult.Won) {
      if (kind === 'pre-election') this.campaign('election');
      else this.becomeLeader();
      return;
    }
    for (const id of this.trk.voterIds()) {
      if (id === this.id) continue;
      this.info(() => `${this.id} [logterm: ${this.raftLog.lastTerm()}, index: ${this.raftLog.lastIndex()}] sent ${voteMsg} request to ${id} at term ${this.term}`);
      this.send(
        makeMessage({
          type: voteMsg,
          to: id,
          term,
          index: this.raftLog.lastIndex(),
          logTerm: this.raftLog.lastTerm(),
          context: kind === 'transfer' ? CAMPAIGN_TRANSFER : new Uint8Array(0),
        }),
      );
    }
  }

  private poll(id: NodeId, t: MessageType, granted: boolean): VoteResult {
    if (granted) this.info(() => `${this.id} received ${t} from ${id} at term ${this.term}`);
    else this.info(() => `${this.id} received ${t} rejection from ${id} at term ${this.term}`);
    this.trk.recordVote(id, granted);
    const { granted: gr, rejected: rj, result } = this.trk.tallyVotes();
    this.info(() => `${this.id} has received ${gr} ${t} votes and ${rj} vote rejections`);
    return result;
  }

  // ---------------------------------------------------------------- step

  /**
   * Feeds one message into the state machine. Throws ProposalDroppedError when a proposal
   * (or conf change) cannot be accepted; other inputs never throw.
   */
  step(m: Message): void {
    // Term handling common to every role (§5.1: "If a server receives a request with a stale
    // term number, it rejects the request"; "if one server's current term is smaller than the
    // other's, then it updates its current term to the larger value").
    if (m.term === 0) {
      // local message
    } else if (m.term > this.term) {
      if (m.type === MessageType.Vote || m.type === MessageType.PreVote) {
        const force = bytesEqual(m.context, CAMPAIGN_TRANSFER);
        const inLease = this.checkQuorum && this.lead !== NONE && this.electionElapsed < this.electionTimeout;
        if (!force && inLease) {
          // Thesis §4.2.3: "if a server receives a RequestVote request within the minimum
          // election timeout of hearing from a current leader, it does not update its term or
          // grant its vote". Keeps removed or partitioned servers from disrupting the cluster.
          this.info(() => `${this.id} [logterm: ${this.raftLog.lastTerm()}, index: ${this.raftLog.lastIndex()}, vote: ${this.vote}] ignored ${m.type} from ${m.from} [logterm: ${m.logTerm}, index: ${m.index}] at term ${this.term}: lease is not expired (remaining ticks: ${this.electionTimeout - this.electionElapsed})`);
          return;
        }
      }
      if (m.type === MessageType.PreVote) {
        // A pre-vote never changes our term.
      } else if (m.type === MessageType.PreVoteResp && !m.reject) {
        // A granted pre-vote carries the future term; the term changes only if we win.
      } else {
        this.info(() => `${this.id} [term: ${this.term}] received a ${m.type} message with higher term from ${m.from} [term: ${m.term}]`);
        if (m.type === MessageType.App || m.type === MessageType.Heartbeat || m.type === MessageType.Snap) {
          this.becomeFollower(m.term, m.from);
        } else {
          this.becomeFollower(m.term, NONE);
        }
      }
    } else if (m.term < this.term) {
      if (m.type === MessageType.Heartbeat || m.type === MessageType.App) {
        // §5.1: the reply carries our term so a stale leader steps down. This matters most when
        // our term ran ahead while we could not reach the others (e.g. campaigning in a stale
        // configuration whose voters are gone): without this reply, the leader would keep
        // replicating at its lower term, we would keep ignoring it, and we would never catch up.
        this.send(makeMessage({ type: MessageType.AppResp, to: m.from }));
      } else if (m.type === MessageType.PreVote || m.type === MessageType.Vote) {
        // Reject at our term so the candidate learns it is behind (§5.1: the reply carries
        // currentTerm "for candidate to update itself"). Otherwise a candidate whose term
        // lags ours could keep campaigning below us indefinitely.
        this.info(() => `${this.id} [logterm: ${this.raftLog.lastTerm()}, index: ${this.raftLog.lastIndex()}, vote: ${this.vote}] rejected ${m.type} from ${m.from} [logterm: ${m.logTerm}, index: ${m.index}] at term ${this.term}`);
        this.send(this.voteRejection(m));
        this.yieldToBetterCandidate(m);
      } else {
        this.info(() => `${this.id} [term: ${this.term}] ignored a ${m.type} message with lower term from ${m.from} [term: ${m.term}]`);
      }
      return;
    }

    if ((m.type === MessageType.VoteResp || m.type === MessageType.PreVoteResp) && m.reject) this.learnCommit(m);

    switch (m.type) {
      case MessageType.Hup:
        this.hup(bytesEqual(m.context, CAMPAIGN_TRANSFER));
        return;
      case MessageType.Vote:
      case MessageType.PreVote: {
        // We may vote for m.from if we already did, if we have not voted and know no leader in
        // this term, or (pre-vote) for a future term in which we have not voted yet.
        const canVote =
          this.vote === m.from ||
          (this.vote === NONE && this.lead === NONE) ||
          (m.type === MessageType.PreVote && m.term > this.term);
        if (canVote && this.raftLog.isUpToDate(m.index, m.logTerm)) {
          this.info(() => `${this.id} [logterm: ${this.raftLog.lastTerm()}, index: ${this.raftLog.lastIndex()}, vote: ${this.vote}] cast ${m.type} for ${m.from} [logterm: ${m.logTerm}, index: ${m.index}] at term ${this.term}`);
          // The response carries the candidate's term: for a pre-vote that is a term we are not in.
          this.send(makeMessage({ type: voteResponseType(m.type), to: m.from, term: m.term }));
          if (m.type === MessageType.Vote) {
            this.electionElapsed = 0; // granting a vote resets the election timer (§5.2)
            this.vote = m.from;
          }
        } else {
          this.info(() => `${this.id} [logterm: ${this.raftLog.lastTerm()}, index: ${this.raftLog.lastIndex()}, vote: ${this.vote}] rejected ${m.type} from ${m.from} [logterm: ${m.logTerm}, index: ${m.index}] at term ${this.term}`);
          this.send(this.voteRejection(m));
          this.yieldToBetterCandidate(m);
        }
        return;
      }
      default:
        this.stepFn(m);
    }
  }

  /**
   * A vote rejection carries the voter's commit index and the term of that entry. A voter
   * that refuses us because its log is longer may know that entries we hold are committed,
   * including a configuration change we have not applied; without learning that, we could keep
   * campaigning in a configuration that needs the vote of a node that left (or was demoted)
   * and will never vote for us. Safe by Log Matching: if we hold the same (index, term), our
   * log up to it equals the one committed there.
   */
  private voteRejection(m: Message): Message {
    const commit = this.raftLog.committed;
    return makeMessage({
      type: voteResponseType(m.type),
      to: m.from,
      term: this.term,
      reject: true,
      commit,
      logTerm: this.raftLog.termOrZero(commit),
    });
  }

  /**
   * We refused a vote only because of terms or an earlier vote, yet the candidate's log is at
   * least as up to date as ours: give it a full election timeout before we compete again.
   * Liveness only. Without it, a follower far behind (say, still campaigning in a stale
   * configuration whose other voters are gone, so it can never win) keeps timing out just
   * before the candidate that could win and keeps taking its terms.
   */
  private yieldToBetterCandidate(m: Message): void {
    if (m.type === MessageType.Vote && this.state !== StateType.Leader && this.raftLog.isUpToDate(m.index, m.logTerm)) {
      this.electionElapsed = 0;
    }
  }

  private learnCommit(m: Message): void {
    if (m.commit > this.raftLog.committed && this.raftLog.matchTerm(m.commit, m.logTerm)) {
      this.info(() => `${this.id} learned commit index ${m.commit} from ${m.from}'s vote rejection`);
      this.raftLog.commitTo(m.commit);
    }
  }

  private stepLeader(m: Message): void {
    switch (m.type) {
      case MessageType.Beat:
        this.bcastHeartbeat();
        return;
      case MessageType.CheckQuorum:
        if (!this.trk.quorumActive(this.id)) {
          this.warn(() => `${this.id} stepped down to follower since quorum is not active`);
          this.becomeFollower(this.term, NONE);
        }
        // Start a fresh observation window.
        this.trk.visit((id, pr) => {
          if (id !== this.id) pr.recentActive = false;
        });
        return;
      case MessageType.Prop:
        this.stepLeaderProposal(m);
        return;
      case MessageType.ReadIndex:
        if (this.trk.isSingleton()) {
          // Nobody else can have been elected: the commit index is safe to read at.
          this.respondToReadIndex(m, this.raftLog.committed);
          return;
        }
        // Thesis §6.4: the leader must know the commit index of its term, which it does only
        // once an entry of its term (the no-op) is committed. Park the request until then.
        if (!this.committedEntryInCurrentTerm()) {
          this.pendingReadIndexMessages.push(m);
          return;
        }
        this.handleReadIndex(m);
        return;
      default:
        break;
    }

    const pr = this.trk.progress.get(m.from);
    if (!pr) {
      this.debug(() => `${this.id} no progress available for ${m.from}`);
      return;
    }
    switch (m.type) {
      case MessageType.AppResp:
        this.handleAppendResponse(m, pr);
        return;
      case MessageType.HeartbeatResp: {
        pr.recentActive = true;
        pr.msgAppFlowPaused = false;
        // A heartbeat response is a sign of life: catch up a follower that is behind or probing.
        if (pr.match < this.raftLog.lastIndex() || pr.state === 'probe') this.sendAppend(m.from);
        if (this.readOnly.option !== 'safe' || m.context.byteLength === 0) return;
        const acks = this.readOnly.recvAck(m.from, m.context);
        if (!acks || this.trk.config.voters.voteResult(acks) !== VoteResult.Won) return;
        for (const rs of this.readOnly.advance(m.context)) this.respondToReadIndex(rs.req, rs.index);
        return;
      }
      case MessageType.SnapStatus:
        if (pr.state !== 'snapshot') return;
        if (!m.reject) {
          pr.becomeProbe();
          this.debug(() => `${this.id} snapshot succeeded, resumed sending replication messages to ${m.from} [${pr}]`);
        } else {
          // The snapshot never arrived: forget it, so the next attempt may send a newer one.
          pr.pendingSnapshot = 0;
          pr.becomeProbe();
          this.debug(() => `${this.id} snapshot failed, resumed sending replication messages to ${m.from} [${pr}]`);
        }
        // Wait for the follower's answer (or a heartbeat response) before the next MsgApp.
        pr.msgAppFlowPaused = true;
        return;
      case MessageType.Unreachable:
        // Optimistic pipelining to a peer we cannot reach only fills the network; probe instead.
        if (pr.state === 'replicate') pr.becomeProbe();
        this.debug(() => `${this.id} failed to send message to ${m.from} because it is unreachable [${pr}]`);
        return;
      case MessageType.TransferLeader: {
        if (pr.isLearner) {
          this.debug(() => `${this.id} is learner. Ignored transferring leadership`);
          return;
        }
        const transferee = m.from;
        if (this.leadTransferee !== NONE) {
          if (this.leadTransferee === transferee) {
            this.info(() => `${this.id} [term ${this.term}] transfer leadership to ${transferee} is in progress, ignores request to same node ${transferee}`);
            return;
          }
          this.info(() => `${this.id} [term ${this.term}] abort previous transferring leadership to ${this.leadTransferee}`);
          this.abortLeaderTransfer();
        }
        if (transferee === this.id) {
          this.debug(() => `${this.id} is already leader. Ignored transferring leadership to self`);
          return;
        }
        this.info(() => `${this.id} [term ${this.term}] starts to transfer leadership to ${transferee}`);
        // The transfer must finish within an election timeout (see tickHeartbeat).
        this.electionElapsed = 0;
        this.leadTransferee = transferee;
        if (pr.match === this.raftLog.lastIndex()) {
          this.sendTimeoutNow(transferee);
          this.info(() => `${this.id} sends MsgTimeoutNow to ${transferee} immediately as ${transferee} already has up-to-date log`);
        } else {
          // Thesis §3.10: first bring the transferee's log up to date.
          this.sendAppend(transferee);
        }
        return;
      }
      default:
        return;
    }
  }

  private stepLeaderProposal(m: Message): void {
    invariant(m.entries.length > 0, `${this.id} stepped empty MsgProp`);
    if (m.from !== this.id) {
      const sentIn = proposalContextTerm(m.context);
      if (sentIn !== undefined && sentIn !== this.term) {
        this.debug(() => `${this.id} [term ${this.term}] dropping a proposal ${m.from} forwarded in term ${sentIn}`);
        throw new ProposalDroppedError();
      }
    }
    if (!this.trk.progress.has(this.id) || this.handingOff) {
      // We were removed (or demoted) while leading; don't accept proposals.
      throw new ProposalDroppedError();
    }
    if (this.leadTransferee !== NONE) {
      // Thesis §3.10: "the prior leader stops accepting new client requests" during a transfer.
      this.debug(() => `${this.id} [term ${this.term}] transfer leadership to ${this.leadTransferee} is in progress; dropping proposal`);
      throw new ProposalDroppedError();
    }
    const entries = m.entries.slice(); // the message is the caller's; don't edit it in place
    entries.forEach((e, i) => {
      if (e.type !== EntryType.ConfChange) return;
      let cc: ConfChange;
      try {
        cc = decodeConfChange(e.data);
      } catch {
        entries[i] = { term: 0, index: 0, type: EntryType.Normal, data: new Uint8Array(0) };
        return;
      }
      const alreadyPending = this.pendingConfIndex > this.raftLog.applied;
      const alreadyJoint = this.trk.config.voters.isJoint();
      const wantsLeaveJoint = isLeaveJoint(cc);
      let refused = '';
      if (alreadyPending) {
        refused = `possible unapplied conf change at index ${this.pendingConfIndex} (applied to ${this.raftLog.applied})`;
      } else if (alreadyJoint && !wantsLeaveJoint) {
        refused = 'must transition out of joint config first';
      } else if (!alreadyJoint && wantsLeaveJoint) {
        refused = 'not in joint state; refusing empty conf change';
      } else {
        // With no change pending, every earlier one is applied: the current config is the one
        // this change will be applied to, so a change the Changer refuses (removing the last
        // voter, say) never reaches the log, where applying it would fail on every member.
        refused = this.confChangeError(cc) ?? '';
      }
      if (refused !== '') {
        // Replaced by a no-op rather than dropped so the other entries of the batch keep their indexes.
        this.info(() => `${this.id} ignoring conf change ${describeEntries([e])} at config ${describeConfig(this.trk.config)}: ${refused}`);
        entries[i] = { term: 0, index: 0, type: EntryType.Normal, data: new Uint8Array(0) };
      } else {
        this.pendingConfIndex = this.raftLog.lastIndex() + i + 1;
      }
    });
    this.appendEntry(entries);
    this.bcastAppend();
  }

  private handleAppendResponse(m: Message, pr: Progress): void {
    pr.recentActive = true;
    if (m.reject) {
      this.debug(() => `${this.id} received MsgAppResp(rejected, hint: (index ${m.rejectHint}, term ${m.logTerm})) from ${m.from} for index ${m.index}`);
      // The follower says its log may match ours at (rejectHint, logTerm). Skip every entry of
      // ours with a term above logTerm as well: they cannot match either. One round trip per
      // term, not per entry.
      let nextProbeIdx = m.rejectHint;
      if (m.logTerm > 0) nextProbeIdx = this.raftLog.findConflictByTerm(m.rejectHint, m.logTerm).index;
      if (pr.maybeDecrTo(m.index, nextProbeIdx)) {
        this.debug(() => `${this.id} decreased progress of ${m.from} to [${pr}]`);
        if (pr.state === 'replicate') pr.becomeProbe();
        this.sendAppend(m.from);
      }
      return;
    }
    const oldPaused = pr.isPaused();
    // A probe acknowledged at exactly match also proves the logs agree: move to replicate.
    if (!(pr.maybeUpdate(m.index) || (pr.match === m.index && pr.state === 'probe'))) return;
    if (pr.state === 'probe') {
      pr.becomeReplicate();
    } else if (pr.state === 'snapshot' && pr.match + 1 >= this.raftLog.firstIndex()) {
      // The follower caught up past our first index (from the snapshot or otherwise): the log
      // can serve it again. Through probe to reset the flow-control state.
      this.debug(() => `${this.id} recovered from needing snapshot, resumed sending replication messages to ${m.from} [${pr}]`);
      pr.becomeProbe();
      pr.becomeReplicate();
    } else if (pr.state === 'replicate') {
      pr.inflights.freeLE(m.index);
    }
    if (this.maybeCommit()) {
      this.releasePendingReadIndexMessages();
      this.bcastCommit();
    } else if (oldPaused) {
      // The window was closed and has now opened: send what accumulated meanwhile.
      this.sendAppend(m.from);
    }
    // Keep the pipeline full while there is something to send.
    while (this.maybeSendAppend(m.from, false)) {
      /* loop */
    }
    // Thesis §3.10: once the transferee's log matches, tell it to start an election now.
    if (m.from === this.leadTransferee && pr.match === this.raftLog.lastIndex()) {
      this.info(() => `${this.id} sent MsgTimeoutNow to ${m.from} after received MsgAppResp`);
      this.sendTimeoutNow(m.from);
    }
    this.maybeHandOff();
  }

  private stepCandidate(m: Message): void {
    // A candidate only counts responses for its current kind of election: stale VoteResps
    // reaching a pre-candidate (or vice versa) are ignored.
    const myVoteRespType = this.state === StateType.PreCandidate ? MessageType.PreVoteResp : MessageType.VoteResp;
    switch (m.type) {
      case MessageType.Prop:
        this.info(() => `${this.id} no leader at term ${this.term}; dropping proposal`);
        throw new ProposalDroppedError();
      case MessageType.App:
        // §5.2: "If the AppendEntries RPC is from another server claiming to be leader whose term
        // is at least as large as the candidate's current term, then the candidate recognizes
        // the leader as legitimate and returns to follower state."
        this.becomeFollower(m.term, m.from);
        this.handleAppendEntries(m);
        return;
      case MessageType.Heartbeat:
        this.becomeFollower(m.term, m.from);
        this.handleHeartbeat(m);
        return;
      case MessageType.Snap:
        this.becomeFollower(m.term, m.from);
        this.handleSnapshot(m);
        return;
      case myVoteRespType: {
        const res = this.poll(m.from, m.type, !m.reject);
        if (res === VoteResult.Won) {
          if (this.state === StateType.PreCandidate) {
            this.campaign('election');
          } else {
            this.becomeLeader();
            this.bcastAppend();
          }
        } else if (res === VoteResult.Lost) {
          // A pre-candidate that lost goes back to follower in its unchanged term.
          this.becomeFollower(this.term, NONE);
        }
        return;
      }
      case MessageType.TimeoutNow:
        this.debug(() => `${this.id} [term ${this.term} state ${this.state}] ignored MsgTimeoutNow from ${m.from}`);
        return;
      default:
        return;
    }
  }

  private stepFollower(m: Message): void {
    switch (m.type) {
      case MessageType.Prop:
        if (this.lead === NONE) {
          this.info(() => `${this.id} no leader at term ${this.term}; dropping proposal`);
          throw new ProposalDroppedError();
        }
        if (m.from !== this.id) {
          // Meant for us as leader, and we no longer lead. Passing it on would let it be
          // appended in a later term than its proposer sent it in (see proposalTermContext).
          this.debug(() => `${this.id} [term ${this.term}] not leading; dropping a proposal forwarded by ${m.from}`);
          throw new ProposalDroppedError();
        }
        // Forward to the leader, fenced to our term. The leader may still drop it; the proposer
        // learns only by watching what gets applied.
        this.send({ ...m, to: this.lead, context: proposalTermContext(this.term) });
        return;
      case MessageType.App:
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleAppendEntries(m);
        return;
      case MessageType.Heartbeat:
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleHeartbeat(m);
        return;
      case MessageType.Snap:
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleSnapshot(m);
        return;
      case MessageType.TransferLeader:
        if (this.lead === NONE) {
          this.info(() => `${this.id} no leader at term ${this.term}; dropping leader transfer msg`);
          return;
        }
        this.send({ ...m, to: this.lead });
        return;
      case MessageType.TimeoutNow:
        // The leader asked us to take over (leadership transfer): campaign at once, without
        // pre-vote and past any leader lease.
        this.info(() => `${this.id} [term ${this.term}] received MsgTimeoutNow from ${m.from} and starts an election to get leadership.`);
        this.hup(true);
        return;
      case MessageType.ReadIndex:
        if (this.lead === NONE) {
          this.info(() => `${this.id} no leader at term ${this.term}; dropping index reading msg`);
          return;
        }
        this.send({ ...m, to: this.lead });
        return;
      case MessageType.ReadIndexResp:
        this.readStates.push({ index: m.index, requestCtx: m.context });
        return;
      default:
        return;
    }
  }

  // ---------------------------------------------------------------- follower handlers

  private handleAppendEntries(m: Message): void {
    if (m.index < this.raftLog.committed) {
      // Already committed here; tell the leader how far we are.
      this.send(makeMessage({ type: MessageType.AppResp, to: m.from, index: this.raftLog.committed }));
      return;
    }
    const lastNew = this.raftLog.maybeAppend(m.index, m.logTerm, m.commit, m.entries);
    if (lastNew !== undefined) {
      if (m.entries.length === 0 && bytesEqual(m.context, COMMIT_ONLY)) return;
      this.send(makeMessage({ type: MessageType.AppResp, to: m.from, index: lastNew }));
      return;
    }
    // §5.3 consistency check failed. Hint the largest index <= m.index whose term is <= the
    // leader's term there: every entry between could not match either.
    this.debug(() => `${this.id} [logterm: ${this.raftLog.termOrZero(m.index)}, index: ${m.index}] rejected MsgApp [logterm: ${m.logTerm}, index: ${m.index}] from ${m.from}`);
    const hintIndex = Math.min(m.index, this.raftLog.lastIndex());
    const hint = this.raftLog.findConflictByTerm(hintIndex, m.logTerm);
    this.send(
      makeMessage({ type: MessageType.AppResp, to: m.from, index: m.index, reject: true, rejectHint: hint.index, logTerm: hint.term }),
    );
  }

  private handleHeartbeat(m: Message): void {
    this.raftLog.commitTo(m.commit);
    this.send(makeMessage({ type: MessageType.HeartbeatResp, to: m.from, context: m.context }));
  }

  private handleSnapshot(m: Message): void {
    const snap = m.snapshot;
    if (!snap) return;
    const { index, term } = snap.metadata;
    if (this.restore(snap)) {
      this.info(() => `${this.id} [commit: ${this.raftLog.committed}] restored snapshot [index: ${index}, term: ${term}]`);
      this.send(makeMessage({ type: MessageType.AppResp, to: m.from, index: this.raftLog.lastIndex() }));
    } else {
      this.info(() => `${this.id} [commit: ${this.raftLog.committed}] ignored snapshot [index: ${index}, term: ${term}]`);
      this.send(makeMessage({ type: MessageType.AppResp, to: m.from, index: this.raftLog.committed }));
    }
  }

  /** Installs a snapshot into the log (pending persistence) and adopts its membership. */
  private restore(s: Snapshot): boolean {
    if (s.metadata.index <= this.raftLog.committed) return false;
    if (this.state !== StateType.Follower) {
      // Only a leader of this term could have sent it, so we should be following. Be defensive:
      // bump the term so whoever is confused re-synchronises.
      this.warn(() => `${this.id} attempted to restore snapshot as leader; should never happen`);
      this.becomeFollower(this.term + 1, NONE);
      return false;
    }
    const cs = s.metadata.confState;
    const found = [cs.voters, cs.learners, cs.votersOutgoing].some((ids) => ids.includes(this.id));
    if (!found) {
      this.warn(() => `${this.id} attempted to restore snapshot but it is not in the ConfState; should never happen`);
      return false;
    }
    // If we already have the snapshot's last entry, just fast-forward commit: the log is longer.
    if (this.raftLog.matchTerm(s.metadata.index, s.metadata.term)) {
      this.info(() => `${this.id} [commit: ${this.raftLog.committed}, lastindex: ${this.raftLog.lastIndex()}, lastterm: ${this.raftLog.lastTerm()}] fast-forwarded commit to snapshot [index: ${s.metadata.index}, term: ${s.metadata.term}]`);
      this.raftLog.commitTo(s.metadata.index);
      return false;
    }
    this.raftLog.restore(s);
    const r = restoreConfig(this.trk, this.raftLog.lastIndex(), cs);
    this.switchToConfig(r);
    return true;
  }

  // ---------------------------------------------------------------- ReadIndex

  private committedEntryInCurrentTerm(): boolean {
    return this.raftLog.termOrZero(this.raftLog.committed) === this.term;
  }

  private releasePendingReadIndexMessages(): void {
    if (this.pendingReadIndexMessages.length === 0) return;
    if (!this.committedEntryInCurrentTerm()) return;
    const msgs = this.pendingReadIndexMessages;
    this.pendingReadIndexMessages = [];
    for (const m of msgs) this.handleReadIndex(m);
  }

  private handleReadIndex(m: Message): void {
    if (this.readOnly.option === 'safe') {
      // Confirm we are still leader: the read is served once a quorum answers a heartbeat
      // that was sent after the request arrived.
      this.readOnly.addRequest(this.raftLog.committed, m);
      this.readOnly.recvAck(this.id, m.context);
      this.bcastHeartbeatWithCtx(m.context);
    } else {
      // Lease-based: trust that no other leader can exist while our lease (check-quorum) holds.
      // Correct only with bounded clock drift; opt-in.
      this.respondToReadIndex(m, this.raftLog.committed);
    }
  }

  private respondToReadIndex(req: Message, readIndex: number): void {
    if (req.from === NONE || req.from === this.id) {
      this.readStates.push({ index: readIndex, requestCtx: req.context });
      return;
    }
    this.send(makeMessage({ type: MessageType.ReadIndexResp, to: req.from, index: readIndex, context: req.context }));
  }

  // ---------------------------------------------------------------- transfer

  private sendTimeoutNow(to: NodeId): void {
    this.send(makeMessage({ type: MessageType.TimeoutNow, to }));
  }

  // ---------------------------------------------------------------- membership

  /**
   * Applies a committed ConfChange to the tracker; returns the new membership. A change the
   * current configuration cannot take (see confChangeError) is ignored, with a warning: leaders
   * keep such changes out of the log, but logs written before they did may hold one. Every
   * member applies the same changes to the same configuration up to that index, so every
   * member ignores it alike, and it stays ignored on every restart.
   */
  applyConfChange(cc: ConfChange): ConfState {
    let r: ConfigAndProgress;
    try {
      r = this.changeConfig(cc);
    } catch (err) {
      if (!isRaftError(err, 'RAFT_INVALID_CONF_CHANGE')) throw err;
      this.warn(() => `${this.id} ignoring committed conf change at config ${describeConfig(this.trk.config)}: ${err.message}`);
      return this.trk.confState();
    }
    return this.switchToConfig(r);
  }

  /**
   * Why applying `cc` to the current configuration would be refused (the Changer's
   * RAFT_INVALID_CONF_CHANGE message: removing every voter, a simple change of two voters,
   * entering a joint config twice, ...), or null if it would take effect. Changes nothing.
   */
  confChangeError(cc: ConfChange): string | null {
    try {
      this.changeConfig(cc);
      return null;
    } catch (err) {
      if (isRaftError(err, 'RAFT_INVALID_CONF_CHANGE')) return err.message;
      throw err;
    }
  }

  /** The configuration `cc` leads to from the current one, computed on copies. */
  private changeConfig(cc: ConfChange): ConfigAndProgress {
    const changer = new Changer(this.trk, this.raftLog.lastIndex());
    if (isLeaveJoint(cc)) return changer.leaveJoint();
    const mode = enterJointMode(cc);
    return mode.joint ? changer.enterJoint(mode.autoLeave, cc.changes) : changer.simple(cc.changes);
  }

  /**
   * Installs a new configuration. A leader that is no longer a voter steps down: the thesis
   * (§4.2.2) has it step down once C_new is committed, which is exactly when it is applied.
   * Otherwise a leader re-evaluates commitment (the quorum changed) and catches up new members.
   */
  private switchToConfig(r: ConfigAndProgress): ConfState {
    this.trk.config = r.config;
    this.trk.progress = r.progress;
    this.info(() => `${this.id} switched to configuration ${describeConfig(this.trk.config)}`);
    const cs = this.trk.confState();
    const pr = this.trk.progress.get(this.id);
    this.isLearner = pr !== undefined && pr.isLearner;
    if ((pr === undefined || this.isLearner) && this.state === StateType.Leader && !this.handingOff) {
      this.info(() => `${this.id} is no longer a voter; handing leadership to an up-to-date voter`);
      this.handingOff = true;
    }
    if (this.state !== StateType.Leader || cs.voters.length === 0) return cs;
    if (this.maybeCommit()) {
      this.bcastAppend();
    } else {
      this.trk.visit((id) => {
        if (id !== this.id) this.maybeSendAppend(id, false);
      });
    }
    const tpr = this.trk.progress.get(this.leadTransferee);
    if (this.leadTransferee !== NONE && (tpr === undefined || tpr.isLearner)) this.abortLeaderTransfer();
    this.maybeHandOff();
    return cs;
  }

  /**
   * A leader that applied a configuration without itself as a voter steps down (thesis
   * §4.2.2), but not at once: the remaining voters may not know yet that the change
   * committed, and if our log is longer than theirs we would refuse them our vote while no
   * longer being able to campaign ourselves, and nobody could win. So we keep replicating
   * (refusing proposals) until a voter's log matches ours entirely, then ask it to campaign
   * (TimeoutNow) and step down; with the longest log it wins.
   */
  private maybeHandOff(): void {
    if (!this.handingOff || this.state !== StateType.Leader) return;
    const last = this.raftLog.lastIndex();
    for (const id of this.trk.config.voters.incoming.sorted()) {
      const pr = this.trk.progress.get(id);
      if (id === this.id || !pr || pr.match !== last) continue;
      this.info(() => `${this.id} hands leadership to ${id} and steps down`);
      this.sendTimeoutNow(id);
      this.becomeFollower(this.term, NONE);
      return;
    }
  }

  /** Exposed for RawNode: whether a message from the network should be accepted at all. */
  acceptsFromNetwork(m: Message): boolean {
    if (isLocalMessage(m.type)) return false;
    if (isResponseMessage(m.type) && !this.trk.progress.has(m.from)) return false;
    return true;
  }
}

function validateConfig(c: RaftConfig): void {
  const bad = (msg: string): never => {
    throw new RaftError('RAFT_INVALID_CONFIG', msg);
  };
  if (!Number.isInteger(c.id) || c.id <= 0) bad('cannot use none as id');
  if (!(c.heartbeatTick > 0)) bad('heartbeat tick must be greater than 0');
  if (!(c.electionTick > c.heartbeatTick)) bad('election tick must be greater than heartbeat tick');
  if (!c.storage) bad('storage cannot be nil');
  if (!c.random) bad('random source cannot be nil');
  if (c.maxInflightMsgs !== undefined && c.maxInflightMsgs <= 0) bad('max inflight messages must be greater than 0');
  if (c.maxInflightBytes !== undefined && c.maxInflightBytes < 0) bad('max inflight bytes must be >= 0');
  if (c.readOnlyOption === 'lease-based' && !c.checkQuorum) {
    // The lease is the check-quorum guarantee: without it a deposed leader could serve stale reads.
    bad('checkQuorum must be enabled when readOnlyOption is lease-based');
  }
}

