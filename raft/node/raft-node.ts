// raft/node/raft-node.ts owns RaftNode, the asynchronous driver that turns the synchronous
// consensus core (raft/core RawNode) into a running replica: it owns the clock (ticks), the
// durable log store (raft/storage), the transport (raft/transport) and the application's state
// machine, and carries out each Ready in the order the core documents:
//
//   1. persist hard state, entries and snapshot (one fsynced batch), then update the
//      in-memory log image the core reads;
//   2. send the Ready's messages (only now: they may promise what step 1 made durable);
//   3. install a received snapshot, then apply committed entries in log order (those already
//      durable here from earlier Readies while step 1's write is in flight): one at a time, or
//      each run of commands between membership changes in one StateMachine.applyBatch call;
//   4. serve read barriers whose index has been applied (they are served as soon as it is,
//      wherever `applied` moves: answers are taken from the core as they arrive, not held for
//      the next Ready);
//   5. advance the core; maybe take a snapshot and compact the log.
//
// Everything runs on one loop, so the state machine sees exactly one apply/restore/snapshot
// call at a time, in log order. Inputs (ticks, incoming messages) are fed to the core as they
// arrive, also between ready() and advance(), which the core allows.
//
// Where the time goes is what shaped the rest (profiles in the commit history, counters in
// stats()):
//   - group commit: propose() only queues; everything queued goes to the core in one step
//     (flushProposals), so many callers cost one fsync and one message per follower;
//   - nothing that promises nothing waits for a write: while one is in flight, proposals
//     queued in one I/O phase are handed over at its end (scheduleEarlyFlush), a follower
//     forwards them to the leader at once, and a leader sends its appends and commit
//     indexes at once (sendEarlyMessages), so its followers persist batch n+1 while it
//     persists batch n (thesis §10.2.1; but never a commit index that rests on its own
//     unfinished write, as a single voter's does);
//   - a leader applies entries that its followers alone hold durably on a quorum without
//     waiting for its own write, a follower those it holds durably as soon as it learns they
//     are committed (maybeApplyAhead), and every member applies entries durable from earlier
//     writes while the current one is in flight;
//   - a hard state that only moves the commit index is not written on its own;
//   - a write with nothing else in flight (one request at a time) is marked idle, and the
//     store may sync it on the loop rather than cross to libuv's pool and back (LogSaveBatch);
//   - read barriers share requests: one read-index request in flight covers every read that
//     arrived before it was sent (readIndex);
//   - snapshots are captured on the loop but encoded, written and compacted beside it; a
//     state machine with durable storage of its own (StateMachine.persist) is its own
//     snapshot: the periodic ones record no image, and one is taken only for a member that
//     needs it (send() holds back the core's in-place snapshot and asks for one).
//
// Removed members (etcd's "removed member"): RaftNode remembers which members it saw removed
// and at which log index (`removed`, kept across snapshots by RaftNodeOptions.removedMembers).
// A member removed while it was stopped or cut off never applies its removal, so it would
// campaign for ever with peers that no longer answer it: its peers' transports refuse it
// (TransportHandler.removedAt) with that index, and once told (reportRemoved) it stops ticking
// and its status says it was removed (RaftNodeStatus.removed), as long as it has not applied
// that index itself.

import { randomBytes, randomInt } from 'node:crypto';
import {
  RawNode,
  MemoryStorage,
  StateType,
  decodeConfChange,
  describeConfChange,
  isProposalDropped,
  noopLogger,
  type RaftLogger,
  type RandomSource,
  type Ready,
} from '../core/index.js';
import { ConfChangeType, EntryType, MessageType, NONE, type ConfChange, type ConfState, type Entry, type HardState, type Message, type NodeId, type Snapshot, type SnapshotMetadata } from '../types.js';
import type { DurableLogStore } from '../storage/log-store.js';
import type { SnapshotStatus, Transport, TransportHandler } from '../transport/transport.js';
import { RaftNodeError } from './node-errors.js';
import { INCARNATION_BYTES, proposalSeqKey, sameIncarnation, unwrapCommand, wrapCommand } from './proposal-envelope.js';
import { proposalContextTerm } from '../core/messages.js';
import { isInPlaceSnapshotData, unwrapSnapshot, unwrapSnapshotStream, wrapInPlaceSnapshot, wrapSnapshot, wrapSnapshotStream } from './snapshot-envelope.js';
import { concatChunks, decodeSnapshotRef, snapshotDataChunks } from '../storage/snapshot-ref.js';
import type { RemovedMembersStore } from '../storage/removed-members.js';

/** A committed command as the state machine sees it. */
export interface AppliedCommand {
  index: number;
  term: number;
  /** The bytes given to propose(); empty for the leader's no-op entries. */
  data: Uint8Array;
}

/**
 * The replicated application. RaftNode calls these one at a time, never concurrently, from
 * its loop; a returned promise is awaited before anything else is applied.
 */
export interface StateMachine {
  /**
   * Applies one committed command, in log order, exactly once per process lifetime (after a
   * restart the state machine is rebuilt from the latest snapshot and the commands after it
   * are applied again). Must be deterministic. The result is handed to the proposer's
   * propose() promise on this member. Throwing is a fatal error: the node stops.
   * The leader's no-op entries (empty, proposed by nobody) and membership changes are not
   * handed to the state machine. Not called for commands when applyBatch is present.
   */
  apply(command: AppliedCommand): unknown;
  /**
   * Optional. Applies several committed commands, in log order, as apply() would one after
   * the other, and returns one result per command, in the same order (each goes to its own
   * proposer). When present RaftNode calls it instead of apply(): with every run of
   * consecutive commands it applies at once (the committed commands of one Ready, or those
   * a leader applies ahead of its own write), split at membership changes so that a command
   * is never applied together with a change that precedes or follows it. Leader no-op
   * entries are left out, as with apply(), so indexes within a call may skip. Throwing, or
   * returning a number of results other than the number of commands, is a fatal error.
   */
  applyBatch?(commands: AppliedCommand[]): Promise<unknown[]> | unknown[];
  /**
   * An image of the state after every command applied so far. Must not change state.
   * RaftNode calls it between two applies and goes on applying commands while a returned
   * promise is pending, so the state must be captured before snapshot() returns (a copy, or
   * copy-on-write); turning the capture into bytes may finish later, for example in slices
   * that let other work run, so a large image does not stall every client.
   */
  snapshot(): Promise<Uint8Array> | Uint8Array;
  /** Replaces the whole state with an image produced by snapshot() (on this or another member). */
  restore(image: Uint8Array): Promise<void> | void;
  /**
   * Optional. snapshot() as chunks, for images too large to hold in memory: the state is
   * captured before this returns, as with snapshot(); the chunks are read later, beside the
   * loop. Used when the log store can stage a stream (DurableLogStore.stageSnapshotStream):
   * the image then goes from the state machine to a file, and from the file to peers.
   */
  snapshotStream?(): AsyncIterable<Uint8Array>;
  /** Optional. restore() from chunks (used for images held in files); consumes them once. */
  restoreStream?(image: AsyncIterable<Uint8Array>): Promise<void>;
  /**
   * Optional, for a state machine that keeps its state in durable storage of its own (etcd's
   * backend): makes every command applied so far durable, and records that the state at
   * `index` is held (the node's applied index: no-ops and membership changes after the last
   * command count). With it, the periodic snapshots are in place: they record no image, and
   * the log before them is dropped once this resolves; an image (snapshotStream or snapshot)
   * is captured only when a member needs one (one too far behind the log, or a member just
   * added). Called between applies, like snapshot().
   */
  persist?(index: number): Promise<void>;
  /**
   * With persist: whether the state at `index` or a later one of the same log is held. A member
   * restarted from an in-place snapshot at `index` checks it; false is fatal (the state
   * machine's storage was lost or replaced: the member must be caught up as a new one).
   */
  holds?(index: number): boolean;
}

export interface Clock {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (h) => clearInterval(h as NodeJS.Timeout),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface RaftNodeOptions {
  id: NodeId;
  /**
   * Member addresses (id → transport URL), this member included. On a brand-new store, unless
   * `join` is set, the members listed here bootstrap the cluster as its initial membership.
   * Otherwise they only seed the address book (addresses learnt from the log and snapshots
   * take precedence): a joining member lists at least the current members so that it can
   * answer the leader.
   */
  peers: ReadonlyMap<NodeId, string>;
  /**
   * This member joins an existing cluster (after addMember/addLearner was proposed for it):
   * it never bootstraps, and receives the log or a snapshot from the leader.
   */
  join?: boolean;
  /** Subset of `peers` that bootstrap as learners rather than voters. */
  bootstrapLearners?: readonly NodeId[];
  store: DurableLogStore;
  /** Builds the transport with the handler RaftNode provides (incoming messages, reports). */
  transport: (handler: TransportHandler) => Transport;
  stateMachine: StateMachine;
  /** Milliseconds per core tick. Default 100. */
  tickMs?: number;
  /** Ticks without a leader before campaigning. Default 10. */
  electionTicks?: number;
  /** Ticks between heartbeats. Default 1. */
  heartbeatTicks?: number;
  /** Take a snapshot after this many applied entries. Default 10 000. */
  snapshotEntries?: number;
  /** Entries kept behind a snapshot so slightly lagging followers catch up from the log. Default 5 000. */
  catchUpEntries?: number;
  /** A proposal not applied within this time rejects with PROPOSAL_OUTCOME_UNKNOWN. Default 10 s. */
  proposalTimeoutMs?: number;
  /**
   * Proposals (membership changes included) that may be pending at once, queued for the core
   * or in flight until applied; beyond it propose() rejects at once with PROPOSAL_QUEUE_FULL
   * (nothing proposed). It bounds the memory and the latency a backlog builds up when clients
   * propose faster than the cluster commits. Default 10 000.
   */
  maxPendingProposals?: number;
  /** A read barrier not confirmed within this time rejects with READ_INDEX_FAILED. Default 5 s. */
  readTimeoutMs?: number;
  /** Byte limit of entries in one append message. Default 1 MiB. */
  maxSizePerMsg?: number;
  /** Max append messages in flight to one follower. Default 256. */
  maxInflightMsgs?: number;
  clock?: Clock;
  /** Source of the randomized election timeouts. Default: node:crypto. Seeded in tests, for reproducible runs. */
  random?: RandomSource;
  logger?: RaftLogger;
  /** Called once if the node stops itself on a storage failure or broken invariant. */
  onFatal?: (err: Error) => void;
  /**
   * Where the removals this member applied are kept (member id → log index), so that those a
   * snapshot folded in are still known after a restart (raft/storage/removed-members.ts).
   * Without it only the removals in the log after the latest snapshot are known.
   */
  removedMembers?: RemovedMembersStore;
}

/**
 * Running totals since start, for metrics and benchmarks: how well work is batched (entries
 * per durable write, messages per Ready) and where the loop spends its time.
 */
export interface RaftNodeStats {
  /** Ready batches carried out. */
  readies: number;
  /** Durable writes (one per Ready that had something to persist). */
  saves: number;
  /** Of those, writes that waited for fsync. */
  syncedSaves: number;
  /** Of those, writes the store was told the loop had nothing else to do meanwhile (LogSaveBatch.idle). */
  idleSaves: number;
  /** Log entries persisted. */
  entriesSaved: number;
  /** Committed entries handed to the state machine. */
  entriesApplied: number;
  /** Of those, entries a leader applied before its own write of them completed (maybeApplyAhead). */
  entriesAppliedAhead: number;
  /**
   * Calls into the state machine that applied commands (applyBatch calls, or apply() calls
   * without it): entriesApplied / applyBatches is the batching a replica's store sees, each
   * call one write of its own.
   */
  applyBatches: number;
  /** Messages handed to the transport. */
  messagesSent: number;
  /** propose() calls accepted by the core. */
  proposals: number;
  /** propose() calls refused at once because maxPendingProposals were pending (PROPOSAL_QUEUE_FULL). */
  proposalsRefusedQueueFull: number;
  /** Milliseconds spent waiting for durable writes. */
  saveMs: number;
  /** Milliseconds spent applying committed entries (the state machine included). */
  applyMs: number;
  /** Read-index requests this member sent (to the leader, or to itself as leader), resends included. */
  readRequests: number;
  /** Read barriers served: readIndex() calls resolved (readsServed / readRequests is the batching). */
  readsServed: number;
  /** Snapshots made durable. */
  snapshots: number;
  /** Milliseconds the loop spent taking snapshot images (making them durable runs beside it). */
  snapshotMs: number;
  /** Milliseconds spent writing snapshots to the store, beside the loop. */
  snapshotSaveMs: number;
  /** Milliseconds spent compacting the stored log after snapshots, beside the loop. */
  compactMs: number;
  /** Times this follower forgot its leader because the transport reported it down (peerDown). */
  leaderDownReports: number;
}

export type RaftRole = 'leader' | 'follower' | 'candidate' | 'pre-candidate';

export interface RaftNodeStatus {
  id: NodeId;
  role: RaftRole;
  /** Known leader, NONE (0) when unknown. */
  leader: NodeId;
  term: number;
  commit: number;
  applied: number;
  /** Index of the latest snapshot (0 before the first). */
  snapshotIndex: number;
  membership: ConfState;
  /** Member addresses known to this member. */
  peers: Map<NodeId, string>;
  /** Leader only: replication progress per member. */
  progress?: Map<NodeId, { match: number; next: number; state: string }>;
  /**
   * Present when a peer refused this member as removed from the cluster at log index `at`,
   * which this member has not applied (it was stopped or cut off then): it is no member,
   * whatever `membership` (as applied here) says, and it no longer campaigns.
   */
  removed?: { by: NodeId; at: number };
}

interface PendingProposal {
  seq: number;
  resolve: (r: { index: number; result: unknown }) => void;
  reject: (e: Error) => void;
  /** The tick (see RaftNode.ticks) at which it fails with OUTCOME_UNKNOWN. */
  deadline: number;
  /** The message it fails with then. */
  timeoutMessage: string;
  /** Where the entry was seen in this member's log, once it was (index, term). */
  placed?: { index: number; term: number };
  /**
   * The term in which it was forwarded to the leader (this member did not lead then). The leader
   * appends it in that term or never (proposalTermContext), so once an entry of a later term is
   * applied here without it, it is certainly lost (see dropUnplacedBefore).
   */
  sentTerm?: number;
}

interface PendingRead {
  id: number;
  resolve: (index: number) => void;
  reject: (e: Error) => void;
  /** The tick (see RaftNode.ticks) at which it fails with READ_INDEX_FAILED. */
  deadline: number;
  /** Confirmed by the leader: served once applied reaches it. */
  index?: number;
}

/** The one read-index request in flight (see RaftNode.readIndex). */
interface ReadRequest {
  /** Its context as sent, and as a map key (hex): the answer carries it back. */
  ctx: Uint8Array;
  key: string;
  /** The reads that arrived before it was sent: one answer serves them all. */
  reads: PendingRead[];
  /** The tick of its last sending (see retryReadRequest). */
  sentAt: number;
}

const ROLE: Record<StateType, RaftRole> = {
  [StateType.Leader]: 'leader',
  [StateType.Follower]: 'follower',
  [StateType.Candidate]: 'candidate',
  [StateType.PreCandidate]: 'pre-candidate',
};

type MembershipOp = 'add-voter' | 'add-learner' | 'promote' | 'remove';

/** Writes of at most one entry in a row before one may be idle (see handleReady). */
const IDLE_RUN = 8;

type ProposalFailure = 'PROPOSAL_DROPPED' | 'PROPOSAL_OUTCOME_UNKNOWN' | 'MEMBERSHIP_INVALID';

/** The context bytes of a conf change RaftNode proposes: the proposal id, then the member URL. */
interface ConfContext {
  url?: string;
}

/** Messages a follower passes to its leader for it (MsgProp, MsgReadIndex): they rest on nothing this member writes. */
const isForwardedToLeader = (m: Message): boolean => m.type === MessageType.Prop || m.type === MessageType.ReadIndex;
/** A snapshot message whose snapshot is in place: it holds no image to ship (see send()). */
const holdsNoImage = (m: Message): boolean => m.type === MessageType.Snap && m.snapshot !== undefined && isInPlaceSnapshotData(m.snapshot.data);

/**
 * A running Raft replica. Create with RaftNode.start(); every method is safe to call at any
 * time until stop(); after stop() they reject with STOPPED.
 */
export class RaftNode {
  readonly id: NodeId;
  private readonly o: Required<Omit<RaftNodeOptions, 'onFatal' | 'bootstrapLearners' | 'join' | 'removedMembers'>> & Pick<RaftNodeOptions, 'onFatal' | 'bootstrapLearners' | 'join' | 'removedMembers'>;
  private readonly memory = new MemoryStorage();
  private rn!: RawNode;
  private transport!: Transport;
  private readonly peers = new Map<NodeId, string>();
  private readonly incarnation = new Uint8Array(randomBytes(INCARNATION_BYTES));
  private nextSeq = 1;
  /**
   * Commands given to propose() and not yet handed to the core. The loop hands over all of
   * them in one step just before it asks for a Ready (flushProposals), so everything proposed
   * while the previous Ready was being persisted becomes one append on disk and one message
   * per follower (group commit), however many callers there were.
   */
  private queued: { seq: number; data: Uint8Array }[] = [];
  /**
   * On a leader, the commands of proposals other members forwarded (MsgProp), not yet handed
   * to the core: they join the next flushProposals batch with our own. Stepped one message at
   * a time, each follower's forwarded batch became an append of its own to every follower (and
   * an answer from each), so a leader with clients on all three members sent about one append
   * per follower per command under load; batched, one append carries what arrived in an I/O
   * phase. Only plain commands wait here: membership changes are stepped as they arrive.
   */
  private forwarded: Uint8Array[] = [];
  /** The term each of `forwarded` was sent in (NaN: not said, a member of an older version). */
  private forwardedTerms: number[] = [];
  /** The highest term of an entry applied here since start (0 until one is); only its rises matter. */
  private appliedTerm = 0;
  /**
   * Leading: the highest sequence number appended so far in `acceptedTerm` of the forwarded
   * proposals of each proposer (by incarnation). A forwarded proposal is appended only above
   * it, so a proposer that sees one of its later proposals appended in a term knows the earlier
   * ones it forwarded in that term and has not seen are lost for good (dropEarlierForwarded).
   */
  private readonly acceptedSeqs = new Map<string, number>();
  private acceptedTerm = 0;
  private readonly proposals = new Map<number, PendingProposal>();
  /** Proposal seqs by the log index where their entry was seen (see PendingProposal.placed). */
  private readonly placedAt = new Map<number, number[]>();
  /**
   * Proposals nobody may answer for after a leadership change, with the tick at which they fail
   * (see orphanUnplaced): seq → deadline tick, and whether they were orphaned although already
   * in this member's log (this member led and lost leadership before they committed).
   */
  private readonly orphaned = new Map<number, { deadline: number; placed: boolean }>();
  /** Every read barrier not settled yet, by id, in arrival order (so in deadline order too). */
  private readonly reads = new Map<number, PendingRead>();
  private nextReadId = 1;
  private nextReadCtx = 1;
  /** A sendReadRequest() is scheduled (scheduleReadRequest). */
  private readRequestScheduled = false;
  /** Reads that arrived after the request in flight was sent: they go with the next one. */
  private readBatch: PendingRead[] = [];
  /** The read-index request in flight, at most one (etcd's linearizable read loop). */
  private readRequest: ReadRequest | null = null;
  /** Reads the leader confirmed at an index this member has not applied yet. */
  private readsToServe: PendingRead[] = [];
  private readonly leaderWaiters = new Set<() => void>();
  private applied = 0;
  private snapshotIndex = 0;
  /** The snapshot being encoded, persisted or compacted after (see maybeSnapshot). */
  private snapshotInFlight: Promise<void> | null = null;
  /** Its persisting and compacting part, which stop() lets finish before closing the store. */
  private snapshotPersisting: Promise<void> | null = null;
  /** An encoded snapshot waiting for the loop to persist it (see persistPreparedSnapshot). */
  private preparedSnapshot: { index: number; confState: ConfState; data: Uint8Array } | null = null;
  /**
   * Set when a snapshot with an image should be taken before the usual interval: a member was
   * added (see applyEntry), or a follower needs the image an in-place snapshot does not hold.
   */
  private snapshotWanted = false;
  /** The index of the latest snapshot when it is in place (StateMachine.persist), else 0. */
  private get inPlaceSnapshotIndex(): number {
    const snap = this.memory.snapshot();
    return isInPlaceSnapshotData(snap.data) ? snap.metadata.index : 0;
  }
  private confState: ConfState = { voters: [], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false };
  /**
   * Members whose removal this member applied, with the log index of the removal; a member
   * added again is taken out. Peers refuse a removed member that has not applied it (refusal).
   */
  private readonly removed = new Map<NodeId, number>();
  /** A peer said this member was removed at an index not applied here (see onRemovedReport). */
  private removedClaim: { by: NodeId; at: number } | null = null;
  private lead: NodeId = NONE;
  /** Role as of the last Ready's soft state. */
  private role: StateType = StateType.Follower;
  /** The loop waits for this member's write of a Ready (see maybeApplyAhead). */
  private writeInFlight = false;
  /** Between ready() and advance(): inputs may still produce messages (see sendEarlyMessages). */
  private readyOutstanding = false;
  /** The outstanding Ready's own messages are on their way (a leader's later ones may follow). */
  private readyMessagesSent = false;
  /** A flushEarly() is scheduled. */
  private earlyFlushScheduled = false;
  /** Entries being applied ahead of their Ready; the loop waits for it before applying. */
  private applyingAhead: Promise<void> | null = null;
  /** The loop is applying entries (nothing is applied ahead meanwhile). */
  private loopApplying = false;
  /** The commit index of the latest Ready that reported one (0 until then). */
  private knownCommit = 0;
  /** Writes in a row, up to the current one, that carried at most one entry (see handleReady). */
  private singleEntryRun = 0;
  /** A commit-only hard state not written yet (see handleReady step 1). */
  private unsavedHardState: HardState | null = null;
  /** Term and vote as last persisted. */
  private term = 0;
  private vote: NodeId = NONE;
  private ticker: unknown = null;
  /** Ticks since start: the clock of proposal deadlines. */
  private ticks = 0;
  private wake: (() => void) | null = null;
  private loopDone: Promise<void> = Promise.resolve();
  private stopped = false;
  private stopping: Promise<void> | null = null;
  private fatal: Error | null = null;
  private readonly counters: RaftNodeStats = {
    readies: 0,
    saves: 0,
    syncedSaves: 0,
    idleSaves: 0,
    entriesSaved: 0,
    entriesApplied: 0,
    entriesAppliedAhead: 0,
    applyBatches: 0,
    messagesSent: 0,
    proposals: 0,
    proposalsRefusedQueueFull: 0,
    saveMs: 0,
    applyMs: 0,
    readRequests: 0,
    readsServed: 0,
    snapshots: 0,
    snapshotMs: 0,
    snapshotSaveMs: 0,
    compactMs: 0,
    leaderDownReports: 0,
  };
  /** The campaign a follower schedules after its leader was reported down (peerDown). */
  private earlyCampaign: unknown = null;

  private constructor(options: RaftNodeOptions) {
    this.id = options.id;
    this.o = {
      tickMs: 100,
      electionTicks: 10,
      heartbeatTicks: 1,
      snapshotEntries: 10_000,
      catchUpEntries: 5_000,
      proposalTimeoutMs: 10_000,
      readTimeoutMs: 5_000,
      maxSizePerMsg: 1 << 20,
      maxInflightMsgs: 256,
      clock: realClock,
      random: { int: (n: number) => randomInt(n) },
      logger: noopLogger,
      ...options,
      // (An option passed as undefined takes the default too.)
      maxPendingProposals: options.maxPendingProposals ?? 10_000,
    };
    if (!Number.isInteger(this.o.maxPendingProposals) || this.o.maxPendingProposals < 1) {
      throw new RangeError(`maxPendingProposals must be a positive integer, got ${this.o.maxPendingProposals}`);
    }
  }

  /**
   * Opens the store, bootstraps it if brand new (see RaftNodeOptions.peers), rebuilds the
   * state machine from the latest snapshot, starts the transport, the ticker and the loop.
   * Committed entries after the snapshot are applied again by the loop shortly after.
   */
  static async start(options: RaftNodeOptions): Promise<RaftNode> {
    const node = new RaftNode(options);
    await node.init();
    return node;
  }

  private async init(): Promise<void> {
    const o = this.o;
    let state = await o.store.open();
    if (!o.join && !state.snapshot && state.entries.length === 0 && state.hardState.term === 0 && o.peers.size > 0) {
      // Bootstrap: every founding member writes the same snapshot at index 1 holding the
      // initial membership and the empty application state (RawNode's documented way).
      const learners = new Set(o.bootstrapLearners ?? []);
      const voters = [...o.peers.keys()].filter((id) => !learners.has(id));
      const confState: ConfState = { voters, learners: [...learners], votersOutgoing: [], learnersNext: [], autoLeave: false };
      const data = wrapSnapshot(o.peers, await o.stateMachine.snapshot());
      await o.store.save({ snapshot: { metadata: { index: 1, term: 1, confState }, data }, entries: [], hardState: { term: 1, vote: NONE, commit: 1 } });
      state = await this.reopen();
    }
    for (const [id, url] of o.peers) this.peers.set(id, url);
    for (const [id, at] of (await o.removedMembers?.load()) ?? []) this.removed.set(id, at);
    if (state.snapshot) {
      const { members, inPlace } = await this.restoreStateMachine(state.snapshot.data, state.snapshot.metadata.index);
      for (const [id, url] of members) this.peers.set(id, url);
      // An in-place snapshot's data is kept inline (a few bytes, not a file reference), so that
      // it is known by its bytes (inPlaceSnapshotIndex, send()).
      const snapshot = inPlace ? { ...state.snapshot, data: wrapInPlaceSnapshot(members) } : state.snapshot;
      this.memory.applySnapshot(snapshot);
      this.applied = this.snapshotIndex = state.snapshot.metadata.index;
      this.confState = state.snapshot.metadata.confState;
    }
    this.memory.append(state.entries);
    this.memory.setHardState(state.hardState);
    this.term = state.hardState.term;
    this.vote = state.hardState.vote;

    this.rn = new RawNode({
      id: this.id,
      storage: this.memory,
      applied: this.applied,
      electionTick: o.electionTicks,
      heartbeatTick: o.heartbeatTicks,
      maxSizePerMsg: o.maxSizePerMsg,
      maxInflightMsgs: o.maxInflightMsgs,
      preVote: true,
      checkQuorum: true,
      readOnlyOption: 'safe',
      random: o.random,
      logger: o.logger,
    });

    const handler: TransportHandler = {
      process: (m: Message) => {
        // Whatever the last Ready said of our role: whether the core leads is decided when they
        // are handed to it (fencedForwarded), and every forwarded command must pass there.
        if (m.type === MessageType.Prop && m.entries.every((e) => e.type === EntryType.Normal)) {
          if (this.stopped) return;
          const sentIn = proposalContextTerm(m.context) ?? NaN;
          for (const e of m.entries) {
            this.forwarded.push(e.data);
            this.forwardedTerms.push(sentIn);
          }
          this.kick();
          if (this.readyOutstanding) this.scheduleEarlyFlush();
          return;
        }
        this.input(() => this.rn.step(m));
      },
      reportUnreachable: (id: NodeId) => this.input(() => this.rn.reportUnreachable(id)),
      reportSnapshot: (id: NodeId, status: SnapshotStatus) => this.input(() => this.rn.reportSnapshot(id, status === 'finish')),
      reportPeerDown: (id: NodeId) => this.input(() => this.peerDown(id)),
      removedAt: (from: NodeId, fromApplied: number) => this.refusal(from, fromApplied),
      appliedIndex: () => this.applied,
      reportRemoved: (by: NodeId, at: number) => this.onRemovedReport(by, at),
    };
    this.transport = o.transport(handler);
    await this.transport.start();
    for (const [id, url] of this.peers) if (id !== this.id) this.transport.addPeer(id, url);

    this.ticker = o.clock.setInterval(() => {
      this.ticks++;
      // A member its peers say was removed campaigns no more (it would for ever: nobody answers).
      if (!this.removedNow()) this.input(() => this.rn.tick());
      this.expireProposals();
      if (this.reads.size > 0) {
        this.expireReads();
        this.retryReadRequest();
      }
    }, o.tickMs);
    this.loopDone = this.loop();
    if (this.rn.leader() === NONE) this.campaignByRank();
  }

  private async reopen(): Promise<Awaited<ReturnType<DurableLogStore['open']>>> {
    await this.o.store.close();
    return this.o.store.open();
  }

  // ---- public API -----------------------------------------------------------------------------

  /**
   * Replicates `command` and resolves once it is committed and applied on this member, with
   * its log index and the state machine's apply() result. Works on any member (followers
   * forward to the leader).
   * Rejects with PROPOSAL_DROPPED when the command was certainly not applied (no leader known,
   * leadership transfer in progress, or its log slot was taken by another leader's entry), and
   * with PROPOSAL_OUTCOME_UNKNOWN when it may have been (timeout, stop, or a snapshot that
   * skipped past it): a caller that retries after UNKNOWN must tolerate duplicates. Rejects at
   * once with PROPOSAL_QUEUE_FULL, nothing proposed, when maxPendingProposals are pending
   * (retry after a while).
   */
  propose(command: Uint8Array): Promise<{ index: number; result: unknown }> {
    const closed = this.closedError();
    if (closed) return Promise.reject(closed);
    if (this.proposals.size >= this.o.maxPendingProposals) {
      this.counters.proposalsRefusedQueueFull++;
      return Promise.reject(new RaftNodeError('PROPOSAL_QUEUE_FULL', `${this.proposals.size} proposals pending (maxPendingProposals): not proposed, retry later`));
    }
    const seq = this.nextSeq++;
    return new Promise((resolve, reject) => {
      const p: PendingProposal = {
        seq,
        resolve,
        reject,
        deadline: this.proposalDeadline(),
        timeoutMessage: 'proposal timed out',
      };
      this.proposals.set(seq, p);
      this.queued.push({ seq, data: wrapCommand({ incarnation: this.incarnation, seq }, command) });
      this.kick();
      if (this.readyOutstanding) this.scheduleEarlyFlush();
    });
  }

  /**
   * A linearizable read barrier (Raft thesis §6.4, ReadIndex): resolves with an index such
   * that this member's state machine has applied at least it and every write acknowledged
   * (by any member) before readIndex() was called is included. Read the state machine right
   * after the promise resolves, before yielding to other work that could apply more — or
   * accept that later state is also linearizable. Rejects with READ_INDEX_FAILED (retry) when
   * no leader is known or it times out (readTimeoutMs).
   *
   * Concurrent reads share requests, as etcd's linearizable read loop does: at most one
   * read-index request is in flight, and it covers every read that arrived before it was
   * sent; reads arriving meanwhile go with the next one, sent as soon as the answer comes
   * back. So a busy member sends one request (one round of heartbeats on the leader) per
   * round trip instead of one per read. An answer is served as soon as this member has
   * applied its index, not behind an unrelated write in flight. A request left unanswered
   * (a message lost, the leader changed) is sent again, to the leader known then.
   */
  readIndex(): Promise<number> {
    const closed = this.closedError();
    if (closed) return Promise.reject(closed);
    if (this.lead === NONE) return Promise.reject(new RaftNodeError('READ_INDEX_FAILED', 'no leader known'));
    return new Promise((resolve, reject) => {
      const r: PendingRead = { id: this.nextReadId++, resolve, reject, deadline: this.ticks + Math.max(1, Math.ceil(this.o.readTimeoutMs / this.o.tickMs)) };
      this.reads.set(r.id, r);
      this.readBatch.push(r);
      this.scheduleReadRequest();
    });
  }

  /**
   * Sends the waiting reads after the current I/O phase, so that every read the requests of
   * one socket read started goes in one request; not while one is in flight (its answer sends
   * the next).
   */
  private scheduleReadRequest(): void {
    if (this.readRequest || this.readRequestScheduled) return;
    this.readRequestScheduled = true;
    setImmediate(() => {
      this.readRequestScheduled = false;
      this.sendReadRequest();
    });
  }

  /** Sends the reads waiting in readBatch as one read-index request (none while one is in flight). */
  private sendReadRequest(): void {
    if (this.readRequest || this.stopped) return;
    const reads = this.readBatch.filter((r) => this.reads.has(r.id));
    this.readBatch = [];
    if (reads.length === 0) return;
    // Unique among this member's requests and, with the incarnation, across the cluster (the
    // leader tells requests apart by it).
    const ctx = new Uint8Array(INCARNATION_BYTES + 8);
    ctx.set(this.incarnation);
    new DataView(ctx.buffer).setFloat64(INCARNATION_BYTES, this.nextReadCtx++);
    this.readRequest = { ctx, key: Buffer.from(ctx).toString('hex'), reads, sentAt: this.ticks };
    this.counters.readRequests++;
    this.input(() => this.rn.readIndex(ctx));
  }

  /**
   * The request in flight got no answer for a while: a message lost on the way, or a leader
   * that changed and will never answer. It goes again, with the same context, to the leader
   * known now (the first answer to either copy serves its reads: both were sent after them).
   * etcd's read loop retries after 500 ms; here half an election timeout.
   */
  private retryReadRequest(): void {
    const req = this.readRequest;
    if (!req) return;
    if (!req.reads.some((r) => this.reads.has(r.id))) {
      // Every read it carried timed out: the reads waiting behind it need not wait more.
      this.readRequest = null;
      this.sendReadRequest();
      return;
    }
    if (this.ticks - req.sentAt < Math.max(2, Math.ceil(this.o.electionTicks / 2)) || this.rn.leader() === NONE) return;
    req.sentAt = this.ticks;
    this.counters.readRequests++;
    this.input(() => this.rn.readIndex(req.ctx));
  }

  /** Read states answered by the core: the request's reads are served once their index is applied. */
  private onReadStates(states: readonly { index: number; requestCtx: Uint8Array }[]): void {
    for (const rs of states) {
      const req = this.readRequest;
      // An answer to a request already answered (a resent one) is moot.
      if (!req || Buffer.from(rs.requestCtx).toString('hex') !== req.key) continue;
      this.readRequest = null;
      for (const r of req.reads) {
        if (!this.reads.has(r.id)) continue;
        r.index = rs.index;
        this.readsToServe.push(r);
      }
    }
    this.serveReads();
    // Reads that arrived meanwhile go at once: they have waited a round trip already.
    if (!this.readRequest) this.sendReadRequest();
  }

  /**
   * Asks the leader to hand leadership to `to` (thesis §3.10) and resolves once this member
   * sees `to` as leader. Rejects with TRANSFER_FAILED after two election timeouts.
   */
  transferLeadership(to: NodeId): Promise<void> {
    const closed = this.closedError();
    if (closed) return Promise.reject(closed);
    if (this.lead === to) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (): void => {
        if (this.lead !== to) return;
        this.o.clock.clearTimeout(timer);
        this.leaderWaiters.delete(done);
        resolve();
      };
      const timer = this.o.clock.setTimeout(() => {
        this.leaderWaiters.delete(done);
        reject(new RaftNodeError('TRANSFER_FAILED', `leadership did not move to ${to}`));
      }, 2 * this.o.electionTicks * this.o.tickMs);
      this.leaderWaiters.add(done);
      this.input(() => this.rn.transferLeader(to));
    });
  }

  /*
   * Membership changes resolve with the new membership once the change is applied on this
   * member. Each is checked against the membership this member has applied before anything is
   * proposed, and rejects at once with MEMBERSHIP_INVALID when it makes no sense there; with
   * PROPOSAL_DROPPED when this member leads and another change is still being applied (retry
   * later). The leader checks again against its own membership, which a follower's may lag.
   */

  /** Adds a voter reachable at `url`. MEMBERSHIP_INVALID if `id` is already a member (a learner: promote() it). */
  addMember(id: NodeId, url: string): Promise<ConfState> {
    return this.changeMembership('add-voter', id, { url });
  }

  /** Adds a non-voting learner reachable at `url` (catch it up, then promote()). MEMBERSHIP_INVALID if `id` is already a member. */
  addLearner(id: NodeId, url: string): Promise<ConfState> {
    return this.changeMembership('add-learner', id, { url });
  }

  /** Turns learner `id` into a voter. MEMBERSHIP_INVALID if `id` is not a learner. */
  promote(id: NodeId): Promise<ConfState> {
    return this.changeMembership('promote', id, {});
  }

  /**
   * Removes `id` from the cluster (a removed leader steps down once the change is applied).
   * MEMBERSHIP_INVALID if `id` is not a member or is the last voter.
   */
  removeMember(id: NodeId): Promise<ConfState> {
    return this.changeMembership('remove', id, {});
  }

  status(): RaftNodeStatus {
    const s = this.rn.status();
    const out: RaftNodeStatus = {
      id: this.id,
      role: ROLE[s.raftState],
      leader: s.lead,
      term: s.term,
      commit: s.commit,
      applied: this.applied,
      snapshotIndex: this.snapshotIndex,
      membership: s.config,
      peers: new Map(this.peers),
    };
    if (this.removedNow()) out.removed = { ...this.removedClaim! };
    if (s.progress) {
      out.progress = new Map([...s.progress].map(([id, p]) => [id, { match: p.match, next: p.next, state: String(p.state) }]));
    }
    return out;
  }

  /** The leader this member knows, NONE (0) when none: status().leader, cheaply (every proposal asks). */
  leader(): NodeId {
    return this.rn.leader();
  }

  /**
   * Calls `listener` each time the leader this member knows changes (to another member, to
   * itself, or to none), once the Ready that reports it is carried out; returns the
   * unsubscribe. For work that moves with leadership, instead of polling status(). The
   * listener runs inside the node's loop: it must not throw, and should only note the change.
   */
  onLeaderChange(listener: () => void): () => void {
    this.leaderWaiters.add(listener);
    return () => this.leaderWaiters.delete(listener);
  }

  /** Running totals since start (a copy). */
  stats(): RaftNodeStats {
    return { ...this.counters };
  }

  /** Campaigns now instead of waiting for the election timeout (tests, operator tooling). */
  campaign(): void {
    this.input(() => this.rn.campaign());
  }

  /**
   * Stops ticking, lets the current Ready finish (so nothing half-applied is left in memory),
   * rejects everything pending (proposals with OUTCOME_UNKNOWN, reads with STOPPED), stops the
   * transport and closes the store. Idempotent.
   */
  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    this.stopped = true;
    this.o.clock.clearInterval(this.ticker);
    if (this.earlyCampaign !== null) this.o.clock.clearTimeout(this.earlyCampaign);
    this.kick();
    await this.loopDone.catch(() => undefined);
    while (this.applyingAhead) await this.applyingAhead;
    // A snapshot being persisted finishes (the store closes after it); one still being
    // encoded is dropped with the loop, without waiting for the state machine.
    await this.snapshotPersisting;
    this.preparedSnapshot = null;
    this.rejectAll(this.closedError()!);
    // The transport is absent only if start() failed before creating it.
    await this.transport?.stop();
    await this.o.store.close().catch(() => undefined);
  }

  // ---- internals ------------------------------------------------------------------------------

  /**
   * The transport found our leader's address refusing connections: its process is gone. Waiting
   * out the election timeout (1-2 s by default) would leave writes without a leader for that
   * long, so the follower forgets the leader, which lets it grant pre-votes at once, and
   * campaigns itself soon. The other followers see the same refusal within a reconnect backoff.
   * Who campaigns first goes by rank (the voters other than the old leader, by id), a quarter
   * election timeout apart: two followers campaigning together would split the vote and leave
   * both to the full timeout, and a random spread collides whenever two draws fall within a
   * message's latency. The first in rank whose log is up to date wins; one that cannot win
   * leaves the next its turn. Only a hint: a leader that is in fact alive keeps its followers
   * (a pre-vote cannot win against a follower that still hears it), and a follower that forgot
   * it takes it back from its next heartbeat, which also makes the campaign a no-op.
   */
  private peerDown(id: NodeId): void {
    if (this.stopped || this.rn.leader() !== id || this.rn.status().raftState !== StateType.Follower) return;
    this.rn.forgetLeader();
    this.counters.leaderDownReports++;
    this.campaignByRank(id);
  }

  /**
   * Campaigns soon, unless a leader shows up first: one heartbeat interval from now plus a
   * quarter election timeout per rank among the voters (by id, `except` left out), so that two
   * members never campaign together. Used when the leader is known to be gone (peerDown) and at
   * start, when nobody may lead yet: a cluster starting together elects its first leader in a
   * few heartbeats rather than after a full election timeout. A member that starts into a
   * running cluster loses its pre-vote to the followers in their lease, which changes nothing.
   */
  private campaignByRank(except: NodeId = NONE): void {
    const voters = [...new Set([...this.confState.voters, ...this.confState.votersOutgoing])].filter((v) => v !== except).sort((a, b) => a - b);
    const rank = voters.indexOf(this.id);
    if (rank < 0 || this.earlyCampaign !== null || this.removedNow()) return;
    const { tickMs, electionTicks } = this.o;
    const delay = tickMs + rank * Math.max(tickMs, Math.floor((electionTicks * tickMs) / 4));
    this.earlyCampaign = this.o.clock.setTimeout(() => {
      this.earlyCampaign = null;
      this.input(() => {
        if (this.rn.leader() === NONE && this.rn.status().raftState === StateType.Follower && !this.removedNow()) this.rn.campaign();
      });
    }, delay);
  }

  /**
   * The index at which this member applied the removal of `from`, when `from` is not a member
   * again and has applied less (`fromApplied`): a removed member that does not know it (see
   * the module header). A member removed and added again under the same id has applied past
   * its removal once it holds the state of its new admission, and is accepted.
   */
  private refusal(from: NodeId, fromApplied: number): number | undefined {
    const at = this.removed.get(from);
    if (at === undefined || fromApplied >= at || this.isMember(from)) return undefined;
    return at;
  }

  /**
   * Peer `by` refused this member as removed at `at`. Believed only when this member has not
   * applied `at` and still counts itself a member: a peer that lags may hold the removal of
   * this member but not its later admission under the same id (then this member, which
   * joined after the removal, has applied past it and ignores the claim). Said once (info:
   * the application says it to operators, through status().removed).
   */
  private onRemovedReport(by: NodeId, at: number): void {
    if (this.stopped || this.removedNow() || this.applied >= at || !this.isMember(this.id)) return;
    this.removedClaim = { by, at };
    if (this.earlyCampaign !== null) {
      this.o.clock.clearTimeout(this.earlyCampaign);
      this.earlyCampaign = null;
    }
    this.o.logger.log('info', `raft node ${this.id}: peer ${by} says this member was removed from the cluster at index ${at}, which it has not applied (applied ${this.applied}); it stops campaigning`);
  }

  /** A peer's claim that this member was removed holds (it has not applied the index since). */
  private removedNow(): boolean {
    return this.removedClaim !== null && this.applied < this.removedClaim.at;
  }

  /**
   * Notes the removals and admissions between membership `before` and the current one, which
   * took effect at log index `index`; saves the map when it changed. A failed save is only
   * logged: the map is a diagnostic aid (removed-members.ts), and the removal is still known
   * until the next restart.
   */
  private async noteRemovals(before: readonly NodeId[], index: number): Promise<void> {
    let changed = false;
    for (const id of before) {
      if (id === this.id || this.isMember(id) || this.removed.get(id) === index) continue;
      // The latest removal stays (it refuses every earlier incarnation too): a replay at start
      // may see an earlier one than the map loaded from the store.
      if (this.removed.has(id) && this.removed.get(id)! > index) continue;
      this.removed.set(id, index);
      changed = true;
    }
    for (const id of [...this.removed.keys()]) {
      if (this.isMember(id)) {
        this.removed.delete(id);
        changed = true;
      }
    }
    if (!changed || !this.o.removedMembers) return;
    try {
      await this.o.removedMembers.save(this.removed);
    } catch (err) {
      this.o.logger.log('warn', `raft node ${this.id}: could not save the removed members: ${(err as Error).message}`);
    }
  }

  private memberList(): NodeId[] {
    const cs = this.confState;
    return [...new Set([...cs.voters, ...cs.learners, ...cs.votersOutgoing, ...cs.learnersNext])];
  }

  private closedError(): RaftNodeError | null {
    if (this.fatal) return new RaftNodeError('FATAL', `raft node failed: ${this.fatal.message}`, { cause: this.fatal });
    if (this.stopped) return new RaftNodeError('STOPPED', 'raft node stopped');
    return null;
  }

  /** Feeds an input to the core and wakes the loop. A throw from the core is a broken invariant. */
  private input(f: () => void): void {
    if (this.stopped) return;
    try {
      f();
    } catch (err) {
      this.die(err as Error);
      return;
    }
    const states = this.rn.takeReadStates();
    if (states.length > 0) this.onReadStates(states);
    if (this.writeInFlight) this.maybeApplyAhead();
    if (this.readyOutstanding) this.sendEarlyMessages();
    this.kick();
  }

  /**
   * While the loop waits for a write, proposals are handed to the core after the current
   * I/O phase (one batch for every request it read) rather than after the write: a follower
   * forwards them to the leader at once, and a leader sends them to its followers, which
   * persist them while its own write of the previous batch is still in flight (pipelining;
   * the leader's next Ready persists them). Otherwise they would wait a whole fsync first.
   */
  private scheduleEarlyFlush(): void {
    if (this.earlyFlushScheduled) return;
    this.earlyFlushScheduled = true;
    setImmediate(() => {
      this.earlyFlushScheduled = false;
      if (this.stopped || !this.readyOutstanding) return;
      this.flushProposals();
      this.sendEarlyMessages();
    });
  }

  /**
   * Hands messages to the transport, except a snapshot that is in place (it holds no image):
   * the core hears that it failed, and a snapshot with an image is taken (maybeSnapshot), which
   * the core sends when it tries again.
   */
  private send(msgs: Message[]): void {
    if (!msgs.some(holdsNoImage)) {
      this.transport.send(msgs);
      return;
    }
    const out: Message[] = [];
    for (const m of msgs) {
      if (holdsNoImage(m)) {
        this.snapshotWanted = true;
        const to = m.to;
        // Not from inside send(): its callers are in the middle of handling a Ready.
        queueMicrotask(() => this.input(() => this.rn.reportSnapshot(to, false)));
      } else {
        out.push(m);
      }
    }
    if (out.length > 0) this.transport.send(out);
    if (this.snapshotWanted) this.kick();
  }

  /** Sends what the core allows to go out before the outstanding Ready's write (RawNode.takeEarlyMessages). */
  private sendEarlyMessages(): void {
    const msgs = this.rn.takeEarlyMessages({ term: this.term, vote: this.vote, leader: this.readyMessagesSent });
    if (msgs.length === 0) return;
    this.send(msgs);
    this.counters.messagesSent += msgs.length;
  }

  private kick(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /**
   * Hands every queued proposal, ours and those forwarded to us, to the core in one step (see
   * `queued` and `forwarded`). A forwarded one that cannot be accepted is dropped, as the core
   * drops a forwarded MsgProp: its proposer learns of it through its own timeouts.
   */
  private flushProposals(): void {
    if (this.queued.length === 0 && this.forwarded.length === 0) return;
    const batch = this.queued;
    this.queued = [];
    const forwarded = this.fencedForwarded();
    // A proposal that already timed out is not proposed any more.
    const live = batch.filter((q) => this.proposals.has(q.seq));
    if (live.length === 0 && forwarded.length === 0) return;
    // Not leading, the core forwards ours to the leader, fenced to its current term.
    const sentTerm = this.rn.isLeader() ? undefined : this.rn.term();
    try {
      this.rn.proposeBatch(live.length === 0 ? forwarded : [...forwarded, ...live.map((q) => q.data)]);
      this.counters.proposals += live.length;
      if (sentTerm !== undefined) {
        for (const q of live) {
          const p = this.proposals.get(q.seq);
          if (p) p.sentTerm = sentTerm;
        }
      }
    } catch (err) {
      const dropped = isProposalDropped(err);
      for (const q of live) {
        if (dropped) this.failProposal(q.seq, 'PROPOSAL_DROPPED', 'proposal dropped: no leader known or leadership transfer in progress');
        else this.failProposal(q.seq, 'PROPOSAL_OUTCOME_UNKNOWN', `propose failed: ${(err as Error).message}`);
      }
      if (!dropped) this.die(err as Error);
    }
  }

  /**
   * Takes the forwarded proposals the core may append now: those sent in its current term, and
   * only while it leads. The others are dropped (their proposers learn of it by what they
   * apply); proposing them would forward them on, or append them in a later term.
   */
  private fencedForwarded(): Uint8Array[] {
    const forwarded = this.forwarded;
    const terms = this.forwardedTerms;
    if (forwarded.length === 0) return forwarded;
    this.forwarded = [];
    this.forwardedTerms = [];
    if (!this.rn.isLeader()) return [];
    const term = this.rn.term();
    if (term !== this.acceptedTerm) {
      this.acceptedSeqs.clear();
      this.acceptedTerm = term;
    }
    const out: Uint8Array[] = [];
    for (let i = 0; i < forwarded.length; i++) {
      const sentIn = terms[i]!;
      if (sentIn !== term && !Number.isNaN(sentIn)) continue;
      const data = forwarded[i]!;
      const id = proposalSeqKey(data);
      if (id) {
        // Arrived after a later one of the same proposer (another connection, say): appending
        // it now would break what the proposer concludes from the later one.
        const last = this.acceptedSeqs.get(id.key);
        if (last !== undefined && id.seq <= last) continue;
        this.acceptedSeqs.set(id.key, id.seq);
      }
      out.push(data);
    }
    return out;
  }

  private async loop(): Promise<void> {
    try {
      while (!this.stopped) {
        this.persistPreparedSnapshot();
        this.flushProposals();
        if (!this.rn.hasReady()) {
          // One put off while a batch was applied ahead may be due (between applies here).
          this.maybeSnapshot();
          await new Promise<void>((resolve) => (this.wake = resolve));
          continue;
        }
        this.readyOutstanding = true;
        try {
          await this.handleReady(this.rn.ready());
        } finally {
          this.readyOutstanding = false;
        }
      }
    } catch (err) {
      this.die(err as Error);
    }
  }

  private async handleReady(rd: Ready): Promise<void> {
    if (rd.softState) this.role = rd.softState.raftState;
    if (rd.hardState) this.knownCommit = rd.hardState.commit;
    // Everything up to here is durable from earlier writes (the image lags the disk).
    const durable = this.memory.lastIndex();
    // A leader may send in parallel with its own disk write (Raft thesis §10.2.1, as etcd
    // does): its appends promise nothing about its own log. Only when this Ready changes
    // neither term nor vote, so no vote can be on the wire unpersisted; and only when no
    // message carries a commit index beyond what is durable here: the core counts the
    // leader's own entries towards a commit as soon as they are appended, so a single voter
    // commits its new entries in the very Ready that appends them, and learners told so early
    // would apply entries that a crash of the leader before its write completes takes back.
    // (With other voters, a commit needs their acknowledgements of entries already sent,
    // which reach the core only while this write is in flight: their messages wait for the
    // next Ready, which comes after this write.)
    const sendEarly =
      this.role === StateType.Leader &&
      (!rd.hardState || (rd.hardState.term === this.term && rd.hardState.vote === this.vote)) &&
      !rd.snapshot &&
      rd.messages.every((m) => m.commit <= durable);
    const c = this.counters;
    c.readies++;
    // Proposals and read requests forwarded to the leader promise nothing about this member's
    // log, and go now whatever this Ready writes: those made while the write is in flight go at
    // once too (sendEarlyMessages), and must not overtake these. The leader appends a member's
    // forwarded proposals only in the order they were made (fencedForwarded), so one overtaken
    // would be dropped although nothing was lost.
    let afterWrite = rd.messages;
    if (sendEarly) {
      if (rd.messages.length > 0) this.send(rd.messages);
      afterWrite = [];
    } else if (rd.messages.some(isForwardedToLeader)) {
      this.send(rd.messages.filter(isForwardedToLeader));
      afterWrite = rd.messages.filter((m) => !isForwardedToLeader(m));
    }
    this.readyMessagesSent = afterWrite.length === 0;

    // 1. Persist, then update the image the core reads. A hard state that only moves the
    // commit index is not written on its own (the core's mustSync is false for it: a lost
    // commit index is learnt again from the leader); it rides along with the next write.
    // That spares one database write per round of commits, on the path of every reply.
    const commitOnly = rd.hardState !== undefined && !rd.mustSync && rd.entries.length === 0 && !rd.snapshot;
    let saving: Promise<void> | null = null;
    if (commitOnly) {
      this.unsavedHardState = rd.hardState!;
    } else if (rd.hardState || rd.entries.length > 0 || rd.snapshot) {
      const t0 = performance.now();
      const hardState = rd.hardState ?? this.unsavedHardState ?? undefined;
      this.unsavedHardState = null;
      // Idle: at most one entry to write, as in each of the last IDLE_RUN writes, every entry
      // before it committed (nothing in the pipeline: one request in flight), and nothing of
      // this member's own queued behind it or waiting for an earlier write. The store may then
      // sync on this thread, blocking the loop (no round trip to the pool's thread and back,
      // each a wait for a core on a loaded machine); a busy member would instead lose the
      // overlap of its next batch with this write (measured at 16 in flight: syncing every
      // small save on the loop halved the puts/s; every single-entry save, without the other
      // conditions, cost 11-12 % and 13-16 % more CPU per put: a third of the followers'
      // appends carry one entry there; with the commit condition but not the run, about 12 %
      // of the writes were still idle there).
      this.singleEntryRun = rd.entries.length <= 1 ? this.singleEntryRun + 1 : 0;
      const first = rd.entries[0];
      const idle =
        this.singleEntryRun > IDLE_RUN &&
        !rd.snapshot &&
        (first === undefined || this.knownCommit >= first.index - 1) &&
        this.queued.length === 0 &&
        this.forwarded.length === 0 &&
        this.proposals.size <= rd.entries.length;
      if (idle) c.idleSaves++;
      saving = this.o.store.save({ hardState, entries: rd.entries, snapshot: rd.snapshot, sync: rd.mustSync, idle }).then(() => {
        c.saveMs += performance.now() - t0;
        c.saves++;
        if (rd.mustSync) c.syncedSaves++;
        c.entriesSaved += rd.entries.length;
      });
    }
    // Once the write is durable: update the image the core reads, then send (unless sent
    // above). This runs as soon as the write completes, even while step 3a is applying, so
    // a follower's acknowledgement never waits for its state machine.
    const persisted = (async (): Promise<void> => {
      if (saving) await saving;
      if (rd.snapshot) {
        // A store holding snapshots in files moved a received one into place: its data now
        // refers to the store's file.
        const data = this.o.store.recordedSnapshotData?.();
        if (data) rd.snapshot = { ...rd.snapshot, data };
        this.memory.applySnapshot(rd.snapshot);
      }
      this.memory.append(rd.entries);
      if (rd.hardState) {
        this.memory.setHardState(rd.hardState);
        this.term = rd.hardState.term;
        this.vote = rd.hardState.vote;
      }
      this.notePlacements(rd.entries);
      // 2. Send.
      if (afterWrite.length > 0) this.send(afterWrite);
      c.messagesSent += rd.messages.length;
      this.readyMessagesSent = true;
      // What inputs produced meanwhile and may go now need not wait for the applies below.
      this.sendEarlyMessages();
    })();

    // 3a. While that write is in flight, apply the committed entries this member already holds
    // durably, from earlier writes that completed (etcd's server applies beside its WAL write
    // too). Committed entries are never overwritten, so nothing this write does can change
    // them; entries this very Ready brings (a single voter commits its own at once) wait.
    let appliedEarly = 0;
    if (saving && !rd.snapshot) {
      while (appliedEarly < rd.committedEntries.length && rd.committedEntries[appliedEarly]!.index <= durable) appliedEarly++;
      if (appliedEarly > 0) {
        // Awaited below; a failure must not surface as unhandled while entries are applied.
        persisted.catch(() => undefined);
        await this.applyEntries(rd.committedEntries, 0, appliedEarly);
      }
    }
    // Acknowledgements (on a leader) or commit indexes (on a follower) that arrive while this
    // write is in flight may let more entries be applied.
    this.writeInFlight = saving !== null && !rd.snapshot;
    this.maybeApplyAhead();
    try {
      await persisted;
    } finally {
      this.writeInFlight = false;
    }

    if (rd.softState) this.onSoftState(rd.softState.lead);

    // 3b. Install the snapshot, then apply the (other) committed entries in order.
    while (rd.snapshot && this.applyingAhead) await this.applyingAhead;
    if (rd.snapshot) await this.installSnapshot(rd.snapshot.metadata.index, rd.snapshot.metadata.confState, rd.snapshot.data);
    await this.applyEntries(rd.committedEntries, appliedEarly, rd.committedEntries.length);

    // 4. Read barriers (input() takes them from the core as they are answered; none is left
    // for a Ready but through another path).
    if (rd.readStates.length > 0) this.onReadStates(rd.readStates);
    this.serveReads();

    // 5. Advance, then maybe compact.
    this.rn.advance(rd);
    this.maybeSnapshot();
  }

  /** Applies entries[from, to) in order, after any applying ahead (see maybeApplyAhead). */
  private async applyEntries(entries: readonly Entry[], from: number, to: number): Promise<void> {
    if (from >= to) return;
    while (this.applyingAhead) await this.applyingAhead;
    this.loopApplying = true;
    try {
      const t0 = performance.now();
      const before = this.applied;
      let i = from;
      while (i < to) {
        const e = entries[i]!;
        // Entries applied ahead are skipped.
        if (e.index <= this.applied) {
          i++;
          continue;
        }
        if (e.type === EntryType.ConfChange || !this.o.stateMachine.applyBatch) {
          await this.applyEntry(e);
          i++;
          continue;
        }
        let end = i + 1;
        while (end < to && entries[end]!.type !== EntryType.ConfChange) end++;
        await this.applyCommandRun(entries.slice(i, end));
        i = end;
      }
      this.counters.applyMs += performance.now() - t0;
      this.counters.entriesApplied += Math.max(0, this.applied - before);
    } finally {
      this.loopApplying = false;
    }
    this.serveReads();
  }

  /**
   * While this member's write of a Ready is in flight: applies (and so acknowledges) the
   * committed entries RawNode.durablyCommittedIndex allows. On a leader, those the followers
   * alone already hold durably on a quorum, rather than waiting for the leader's fsync, which
   * on a loaded disk is often the slowest of the three (Raft thesis §10.2.1: the leader's own
   * write is just one of the quorum's). On a follower, those it holds from earlier writes and
   * has just been told are committed, rather than after the write in flight (its clients wait
   * for their writes to be applied here). Entries are committed either way; this only stops
   * a disk from adding to the latency. Membership changes are left to the Ready that hands
   * them out.
   */
  private maybeApplyAhead(): void {
    if (!this.writeInFlight || this.applyingAhead || this.loopApplying || this.stopped) return;
    const upTo = this.rn.durablyCommittedIndex();
    if (upTo <= this.applied) return;
    const entries = this.rn.committedEntriesBetween(this.applied + 1, upTo);
    if (entries.length === 0) return;
    // The normal entries up to the first membership change.
    let end = 0;
    while (end < entries.length && entries[end]!.type !== EntryType.ConfChange && entries[end]!.index === this.applied + 1 + end) end++;
    if (end === 0) return;
    const run = entries.slice(0, end);
    this.applyingAhead = (async () => {
      const t0 = performance.now();
      const before = this.applied;
      if (this.o.stateMachine.applyBatch) await this.applyCommandRun(run);
      else for (const e of run) await this.applyEntry(e);
      const n = this.applied - before;
      this.counters.applyMs += performance.now() - t0;
      this.counters.entriesApplied += n;
      this.counters.entriesAppliedAhead += n;
      this.serveReads();
    })()
      .catch((err: unknown) => this.die(err as Error))
      .finally(() => {
        this.applyingAhead = null;
        // Entries committed while this batch was applied need not wait for the next input.
        this.maybeApplyAhead();
        // A snapshot put off while this batch was applied (maybeSnapshot) is taken next turn.
        this.kick();
      });
  }

  /** Remembers where our own proposals landed in the log, to tell later whether they survived. */
  private notePlacements(entries: readonly Entry[]): void {
    if (this.proposals.size === 0) return;
    for (const e of entries) {
      const { id } = unwrapCommand(e.type === EntryType.ConfChange ? confChangeContext(e.data) : e.data);
      if (!id || !sameIncarnation(id.incarnation, this.incarnation)) continue;
      const p = this.proposals.get(id.seq);
      if (!p) continue;
      p.placed = { index: e.index, term: e.term };
      const here = this.placedAt.get(e.index);
      if (here) here.push(p.seq);
      else this.placedAt.set(e.index, [p.seq]);
    }
  }

  private onSoftState(lead: NodeId): void {
    const changed = lead !== this.lead;
    this.lead = lead;
    if (!changed) return;
    // A read request is answered by the leader it was sent to; a new leader never will. Its
    // reads go with the next request, to the new leader (still sent after they arrived).
    const req = this.readRequest;
    if (req) {
      this.readRequest = null;
      this.readBatch = req.reads.concat(this.readBatch);
    }
    if (lead !== NONE) this.sendReadRequest();
    this.orphanUnplaced(lead !== this.id);
    for (const w of [...this.leaderWaiters]) w();
  }

  /**
   * Restores the state machine from the data of a snapshot at `index` (inline, or a file
   * reference) and returns the members it lists, and whether it was in place: such a snapshot
   * holds no image, and the state machine must hold that state already (a restart).
   */
  private async restoreStateMachine(data: Uint8Array, index: number): Promise<{ members: Map<NodeId, string>; inPlace: boolean }> {
    const sm = this.o.stateMachine;
    let inPlace: boolean;
    let members: Map<NodeId, string>;
    if (!decodeSnapshotRef(data)) {
      const unwrapped = unwrapSnapshot(data);
      ({ members, inPlace } = unwrapped);
      if (!inPlace) await sm.restore(unwrapped.app);
    } else {
      const unwrapped = await unwrapSnapshotStream(snapshotDataChunks(data));
      ({ members, inPlace } = unwrapped);
      if (inPlace) await unwrapped.app.return(undefined);
      else if (sm.restoreStream) await sm.restoreStream(unwrapped.app);
      else await sm.restore(await concatChunks(unwrapped.app));
    }
    if (inPlace && !sm.holds?.(index)) {
      throw new RaftNodeError('FATAL', `the snapshot at ${index} is in place, and the state machine does not hold that state: its storage was lost or replaced`);
    }
    return { members, inPlace };
  }

  private async installSnapshot(index: number, confState: ConfState, data: Uint8Array): Promise<void> {
    const { members } = await this.restoreStateMachine(data, index);
    const before = this.memberList();
    this.applied = this.snapshotIndex = index;
    this.confState = confState;
    // Members gone from the membership were removed at or before `index`: recorded at `index`,
    // they are refused while they have applied less. One that never applied its removal has;
    // one that did and applied less than `index` is refused too, and ignores it (it knows).
    await this.noteRemovals(before, index);
    for (const [id, url] of members) this.learnPeer(id, url);
    for (const id of [...this.peers.keys()]) if (!this.isMember(id)) this.forgetPeer(id);
    // Proposals whose slot the snapshot skipped cannot be checked any more. Nor can those
    // forwarded and not seen: the snapshot may hold them, so a later term proves nothing.
    for (const p of [...this.proposals.values()]) {
      if (p.placed && p.placed.index <= index) this.failProposal(p.seq, 'PROPOSAL_OUTCOME_UNKNOWN', 'a snapshot replaced the log past the proposal');
      else if (!p.placed) p.sentTerm = undefined;
    }
    for (const i of [...this.placedAt.keys()]) if (i <= index) this.placedAt.delete(i);
    this.serveReads();
  }

  /**
   * Applies consecutive normal entries (the next ones to apply) with one applyBatch call, then
   * settles each proposer with its own result.
   */
  private async applyCommandRun(run: readonly Entry[]): Promise<void> {
    const commands: AppliedCommand[] = [];
    const unwrapped = run.map((e) => {
      const { id, command } = unwrapCommand(e.data);
      // As in applyEntry: a leader's no-op (empty, proposed by nobody) is not a command.
      const isCommand = command.length > 0 || id !== null;
      if (isCommand) commands.push({ index: e.index, term: e.term, data: command });
      return { id, isCommand };
    });
    let results: unknown[] = [];
    if (commands.length > 0) {
      this.counters.applyBatches++;
      results = await this.o.stateMachine.applyBatch!(commands);
      if (!Array.isArray(results) || results.length !== commands.length) {
        throw new Error(`StateMachine.applyBatch returned ${Array.isArray(results) ? results.length : typeof results} results for ${commands.length} commands`);
      }
    }
    let next = 0;
    run.forEach((e, i) => {
      const { id, isCommand } = unwrapped[i]!;
      this.applied = e.index;
      this.settleOwn(id, e, isCommand ? results[next++] : undefined);
      this.checkPlacement(e);
    });
  }

  private async applyEntry(e: Entry): Promise<void> {
    if (e.index <= this.applied) return;
    if (e.type === EntryType.ConfChange) {
      let cc: ConfChange;
      try {
        cc = decodeConfChange(e.data);
      } catch (err) {
        // Leaders never append undecodable changes; an old log might hold one. Every member
        // reads the same bytes, so every member skips it.
        this.o.logger.log('warn', `raft node ${this.id}: ignoring undecodable membership change at index ${e.index}: ${(err as Error).message}`);
        this.applied = e.index;
        this.checkPlacement(e);
        return;
      }
      // A change the membership cannot take reached the log only through an earlier version
      // (leaders now refuse them). Every member has the same membership at this index, so
      // every member ignores it alike (the core does too), and on every restart.
      const invalid = this.rn.confChangeError(cc);
      if (invalid !== null) {
        this.o.logger.log('warn', `raft node ${this.id}: ignoring membership change ${describeConfChange(cc)} at index ${e.index}: ${invalid}`);
        const { id } = parseConfContext(cc.context);
        this.applied = e.index;
        this.failOwn(id, 'MEMBERSHIP_INVALID', `membership change ignored when applied: ${invalid}`);
        this.checkPlacement(e);
        return;
      }
      const before = this.memberList();
      this.confState = this.rn.applyConfChange(cc);
      await this.noteRemovals(before, e.index);
      const { id, url } = parseConfContext(cc.context);
      for (const c of cc.changes) {
        // A member added now starts empty, and every log begins with a snapshot (bootstrap
        // writes one at index 1), so it is caught up by a snapshot; the core refuses to
        // restore one whose membership does not list it. Take one as soon as this entry is
        // applied rather than ship an older one.
        if (c.type !== ConfChangeType.RemoveNode) this.snapshotWanted = true;
        if (c.type === ConfChangeType.RemoveNode) {
          if (!this.isMember(c.nodeId)) this.forgetPeer(c.nodeId);
        } else if (url) {
          this.learnPeer(c.nodeId, url);
        }
      }
      this.applied = e.index;
      this.settleOwn(id, e, this.confState);
    } else {
      const { id, command } = unwrapCommand(e.data);
      let result: unknown;
      if (command.length > 0 || id) {
        this.counters.applyBatches++;
        result = await this.o.stateMachine.apply({ index: e.index, term: e.term, data: command });
      }
      this.applied = e.index;
      this.settleOwn(id, e, result);
    }
    this.checkPlacement(e);
  }

  /**
   * Any of our proposals placed at e's index but not e lost its slot for good; so did those
   * forwarded in a term before e's that were not applied before e (dropUnplacedBefore).
   */
  private checkPlacement(e: Entry): void {
    if (e.term > this.appliedTerm) {
      this.appliedTerm = e.term;
      this.dropUnplacedBefore(e.term);
    }
    const placedHere = this.placedAt.get(e.index);
    if (placedHere) {
      this.placedAt.delete(e.index);
      for (const seq of placedHere) {
        const p = this.proposals.get(seq);
        if (p?.placed && p.placed.index === e.index && p.placed.term !== e.term) {
          this.failProposal(p.seq, 'PROPOSAL_DROPPED', `log slot ${e.index} was taken by another leader's entry`);
        }
      }
    }
  }

  /**
   * An entry of `term` was just applied. A proposal forwarded in an earlier term and not applied
   * before it can never be: its leader could append it only in the term it was sent in
   * (proposalTermContext), and the committed log's terms never decrease, so every entry of that
   * term that will ever commit precedes this one. It fails as PROPOSAL_DROPPED, which callers
   * may retry, instead of waiting to fail as OUTCOME_UNKNOWN (a write forwarded just before the
   * leader died was answered 504 two election timeouts after a new leader was known).
   * Proposals already seen in this member's log are left to the log (checkPlacement).
   */
  private dropUnplacedBefore(term: number): void {
    for (const p of [...this.proposals.values()]) {
      if (p.sentTerm === undefined || p.sentTerm >= term || p.placed) continue;
      this.orphaned.delete(p.seq);
      this.failProposal(p.seq, 'PROPOSAL_DROPPED', `the leader it was forwarded to in term ${p.sentTerm} lost leadership before appending it; it was not made`);
    }
  }

  /**
   * Proposals time out on the ticker rather than with a timer each: thousands of proposals a
   * second each arming and clearing a timer cost measurable CPU and garbage. The resolution
   * is one tick.
   */
  private proposalDeadline(): number {
    return this.ticks + Math.max(1, Math.ceil(this.o.proposalTimeoutMs / this.o.tickMs));
  }

  /** Fails proposals whose deadline passed. All share one timeout, so map order is deadline order. */
  private expireProposals(): void {
    if (this.orphaned.size > 0) this.expireOrphans();
    for (const p of this.proposals.values()) {
      if (p.deadline > this.ticks) return;
      this.failProposal(p.seq, 'PROPOSAL_OUTCOME_UNKNOWN', p.timeoutMessage);
    }
  }

  /**
   * Leadership changed. A proposal this member handed to the core earlier and has not seen in
   * its own log went to a leader that no longer leads (on a follower: forwarded as MsgProp to
   * the old leader, who may have died with it). It can still commit if the old leader
   * replicated it to the new one, and then it arrives here within an election or two; if it
   * does not, nobody will answer for it, and waiting for the whole proposal timeout only keeps
   * the client hanging. So it gets two election timeouts from now, then fails as
   * OUTCOME_UNKNOWN (the client hears "may still be applied", 504). Proposals still queued
   * here are handed to the next leader as usual; placed ones are settled by the log
   * (committed, or overwritten: checkPlacement).
   *
   * `placedToo` (this member does not lead after the change): its entries already in its log
   * but not yet applied wait for a leader to settle them (commit, or overwrite:
   * checkPlacement). Without a quorum — a leader cut off from its followers and stepped down by
   * check-quorum, or a follower whose leader and other peer died — none ever comes, and they
   * waited for the whole proposal timeout (10 s) while a write forwarded in the same outage was
   * answered after about three election timeouts. They get the same two election timeouts and
   * fail as OUTCOME_UNKNOWN then if still no leader is known (the entry may commit later); a
   * leader known by then settles them through the log, the proposal timeout bounding the wait.
   */
  private orphanUnplaced(placedToo = false): void {
    if (this.proposals.size === 0) return;
    const queued = new Set(this.queued.map((q) => q.seq));
    const deadline = this.ticks + 2 * this.o.electionTicks;
    for (const p of this.proposals.values()) {
      if ((p.placed && !placedToo) || queued.has(p.seq) || this.orphaned.has(p.seq) || p.deadline <= deadline) continue;
      this.orphaned.set(p.seq, { deadline, placed: p.placed !== undefined });
    }
  }

  private expireOrphans(): void {
    for (const [seq, orphan] of this.orphaned) {
      const p = this.proposals.get(seq);
      if (!p || (p.placed && !orphan.placed)) {
        this.orphaned.delete(seq);
        continue;
      }
      if (orphan.deadline > this.ticks) continue;
      this.orphaned.delete(seq);
      // A leader is known: the log settles the entry (a later loss of leadership orphans it again).
      if (orphan.placed && this.lead !== NONE) continue;
      // A leader of a later term than the one it was forwarded in is known: its first entry,
      // applied here, settles it (dropUnplacedBefore), and a retry can succeed.
      if (p.sentTerm !== undefined && this.lead !== NONE && this.rn.term() > p.sentTerm) continue;
      this.failProposal(
        seq,
        'PROPOSAL_OUTCOME_UNKNOWN',
        orphan.placed
          ? 'no leader took over the entry before it was committed, a quorum is not reachable; it may still be committed'
          : 'the leader it was sent to lost leadership before the entry reached this member; it may still be committed',
      );
    }
  }

  private failOwn(id: { incarnation: Uint8Array; seq: number } | null, code: ProposalFailure, message: string): void {
    if (!id || !sameIncarnation(id.incarnation, this.incarnation)) return;
    this.failProposal(id.seq, code, message);
  }

  private settleOwn(id: { incarnation: Uint8Array; seq: number } | null, e: Entry, result: unknown): void {
    if (!id || !sameIncarnation(id.incarnation, this.incarnation)) return;
    const p = this.proposals.get(id.seq);
    if (!p) return;
    this.proposals.delete(id.seq);
    p.resolve({ index: e.index, result });
    if (p.sentTerm === e.term && e.type === EntryType.Normal) this.dropEarlierForwarded(p.seq, e.term);
  }

  /**
   * Our proposal `seq`, forwarded in `term`, was appended in that term. The leader of a term
   * appends each member's forwarded proposals only in increasing order (fencedForwarded), so
   * the earlier ones we forwarded in the same term and have not seen applied before it never
   * will be: lost on the way (a connection that broke). They fail as PROPOSAL_DROPPED, which
   * callers may retry, rather than wait for a timeout to answer "may still be applied".
   */
  private dropEarlierForwarded(seq: number, term: number): void {
    for (const p of this.proposals.values()) {
      // In sequence order (insertion order): the ones settled in order are gone already.
      if (p.seq >= seq) break;
      if (p.sentTerm !== term || p.placed) continue;
      this.orphaned.delete(p.seq);
      this.failProposal(p.seq, 'PROPOSAL_DROPPED', `a later write this member forwarded in term ${term} was appended before it; it was lost on the way and not made`);
    }
  }

  /** Resolves the confirmed reads whose index is applied; called wherever `applied` moves. */
  private serveReads(): void {
    if (this.readsToServe.length === 0) return;
    const waiting: PendingRead[] = [];
    for (const r of this.readsToServe) {
      if (!this.reads.has(r.id)) continue;
      if (r.index! > this.applied) {
        waiting.push(r);
        continue;
      }
      this.reads.delete(r.id);
      this.counters.readsServed++;
      r.resolve(r.index!);
    }
    this.readsToServe = waiting;
  }

  /** Fails reads whose deadline passed. All share one timeout, so map order is deadline order. */
  private expireReads(): void {
    for (const r of this.reads.values()) {
      if (r.deadline > this.ticks) break;
      this.failRead(r.id, 'read index timed out');
    }
  }

  /**
   * Takes a snapshot when one is due, as etcd does: the state machine captures its state
   * here, on the loop, between applies (so it matches `applied` exactly); turning it into
   * bytes (prepareSnapshot), making it durable and compacting the log (persistSnapshot) run
   * beside the loop, which keeps carrying out Readies instead of stalling every client while
   * megabytes are encoded and written. One snapshot at a time.
   */
  private maybeSnapshot(): void {
    // (Entries applied ahead may not be in the log image yet: then later.) Nor while a batch
    // is applied ahead: the state machine may already hold part of it (its write finished,
    // its promise not yet settled) while `applied` is still before it, and a member restoring
    // that image would apply the batch a second time.
    if (this.snapshotInFlight || this.applyingAhead || this.applied > this.memory.lastIndex()) return;
    const due = this.applied - this.snapshotIndex >= this.o.snapshotEntries;
    // An image is wanted: a later state, or the same one when the latest snapshot holds none.
    const wanted = this.snapshotWanted && (this.applied > this.snapshotIndex || (this.inPlaceSnapshotIndex !== 0 && this.inPlaceSnapshotIndex === this.applied));
    if (!due && !wanted) return;
    this.snapshotWanted = false;
    const t0 = performance.now();
    const index = this.applied;
    const confState = this.confState;
    // The address book as of `index`, like the state machine's image.
    const members = new Map(this.peers);
    const sm = this.o.stateMachine;
    if (sm.persist && !wanted) {
      this.snapshotIndex = index;
      this.counters.snapshotMs += performance.now() - t0;
      this.snapshotInFlight = this.prepareInPlaceSnapshot(sm.persist.bind(sm), index, confState, members).catch((err: unknown) => {
        this.snapshotInFlight = null;
        if (!this.stopped) this.die(err as Error);
      });
      return;
    }
    const stageStream = this.o.store.stageSnapshotStream?.bind(this.o.store);
    if (sm.snapshotStream && stageStream) {
      const term = this.memory.term(index);
      const chunks = sm.snapshotStream();
      this.snapshotIndex = index;
      this.counters.snapshotMs += performance.now() - t0;
      this.snapshotInFlight = this.prepareStreamedSnapshot(stageStream, { index, term, confState }, members, chunks).catch((err: unknown) => {
        this.snapshotInFlight = null;
        if (!this.stopped) this.die(err as Error);
      });
      return;
    }
    const image = sm.snapshot();
    this.snapshotIndex = index;
    this.counters.snapshotMs += performance.now() - t0;
    this.snapshotInFlight = this.prepareSnapshot(index, confState, members, image).catch((err: unknown) => {
      this.snapshotInFlight = null;
      // A state machine failing to produce an image is as fatal as one failing to apply.
      if (!this.stopped) this.die(err as Error);
    });
  }

  /**
   * Waits for the image, has the store write its data ahead (stageSnapshot: beside the saves
   * of Readies rather than in their queue), then hands the snapshot to the loop
   * (persistPreparedSnapshot), which records it.
   */
  private async prepareSnapshot(
    index: number,
    confState: ConfState,
    members: ReadonlyMap<NodeId, string>,
    image: Promise<Uint8Array> | Uint8Array,
  ): Promise<void> {
    const data = wrapSnapshot(members, await image);
    let term: number;
    try {
      term = this.memory.term(index);
    } catch {
      // A newer snapshot from the leader replaced the log meanwhile: this one is moot.
      this.snapshotInFlight = null;
      return;
    }
    await this.o.store.stageSnapshot?.({ metadata: { index, term, confState }, data });
    this.preparedSnapshot = { index, confState, data };
    this.kick();
  }

  /** prepareSnapshot() for an in-place snapshot: the state machine makes its state durable; the data is the address book. */
  private async prepareInPlaceSnapshot(
    persist: (index: number) => Promise<void>,
    index: number,
    confState: ConfState,
    members: ReadonlyMap<NodeId, string>,
  ): Promise<void> {
    await persist(index);
    this.preparedSnapshot = { index, confState, data: wrapInPlaceSnapshot(members) };
    this.kick();
  }

  /** prepareSnapshot() for a state machine that streams its image: straight into the store's file. */
  private async prepareStreamedSnapshot(
    stage: (metadata: SnapshotMetadata, chunks: AsyncIterable<Uint8Array>) => Promise<Uint8Array>,
    metadata: SnapshotMetadata,
    members: ReadonlyMap<NodeId, string>,
    image: AsyncIterable<Uint8Array>,
  ): Promise<void> {
    const data = await stage(metadata, wrapSnapshotStream(members, image));
    try {
      this.memory.term(metadata.index);
    } catch {
      // A newer snapshot from the leader replaced the log meanwhile: this one is moot.
      this.snapshotInFlight = null;
      return;
    }
    this.preparedSnapshot = { index: metadata.index, confState: metadata.confState, data };
    this.kick();
  }

  /**
   * Called by the loop between Readies, so that the store receives the snapshot in order with
   * the Readies' writes and the log image agrees with it: records the prepared snapshot in the
   * log image and starts making it durable (not awaited).
   */
  private persistPreparedSnapshot(): void {
    const p = this.preparedSnapshot;
    if (!p) return;
    this.preparedSnapshot = null;
    const current = this.memory.snapshot().metadata.index;
    // An image of the state an in-place snapshot records: it takes that snapshot's place.
    const replaces = current === p.index && this.inPlaceSnapshotIndex === p.index && !isInPlaceSnapshotData(p.data);
    // A newer snapshot from the leader was installed while the image was being encoded.
    if (current >= p.index && !replaces) {
      this.snapshotInFlight = null;
      return;
    }
    const snap = replaces ? this.memory.replaceSnapshotData(p.index, p.data) : this.memory.createSnapshot(p.index, p.confState, p.data);
    this.snapshotInFlight = this.snapshotPersisting = this.persistSnapshot(snap)
      .catch((err: unknown) => this.die(err as Error))
      .finally(() => (this.snapshotInFlight = this.snapshotPersisting = null));
  }

  /**
   * Makes a snapshot durable, then discards the log before it but `catchUpEntries`. The store
   * runs its writes in call order, so Ready writes queued meanwhile go before the compaction,
   * which it splits into small batches (LevelLogStore.compact) for the same reason.
   */
  private async persistSnapshot(snap: Snapshot): Promise<void> {
    const index = snap.metadata.index;
    const t0 = performance.now();
    await this.o.store.save({ snapshot: snap, entries: [] });
    const t1 = performance.now();
    this.counters.snapshotSaveMs += t1 - t0;
    const compactTo = index - this.o.catchUpEntries;
    // A leader's snapshot installed meanwhile may have replaced the log.
    if (compactTo > this.memory.firstIndex() && compactTo <= this.memory.lastIndex()) {
      this.memory.compact(compactTo);
      await this.o.store.compact(compactTo);
      this.counters.compactMs += performance.now() - t1;
    }
    this.counters.snapshots++;
  }

  private changeMembership(op: MembershipOp, nodeId: NodeId, ctx: ConfContext): Promise<ConfState> {
    const closed = this.closedError();
    if (closed) return Promise.reject(closed);
    const type = op === 'remove' ? ConfChangeType.RemoveNode : op === 'add-learner' ? ConfChangeType.AddLearnerNode : ConfChangeType.AddNode;
    const check: ConfChange = { transition: 'auto', changes: [{ type, nodeId }], context: new Uint8Array(0) };
    // The leader would replace the change by an empty entry; say so now rather than time out.
    if (this.rn.confChangePending()) {
      return Promise.reject(new RaftNodeError('PROPOSAL_DROPPED', 'membership change refused: another membership change is still being applied'));
    }
    const invalid = membershipError(this.confState, op, nodeId, ctx) ?? this.rn.confChangeError(check);
    if (invalid !== null) return Promise.reject(new RaftNodeError('MEMBERSHIP_INVALID', `membership change refused: ${invalid}`));
    const seq = this.nextSeq++;
    const cc: ConfChange = { ...check, context: confContext({ incarnation: this.incarnation, seq }, ctx) };
    return new Promise<ConfState>((resolve, reject) => {
      const p: PendingProposal = {
        seq,
        resolve: (r) => resolve(r.result as ConfState),
        reject,
        deadline: this.proposalDeadline(),
        timeoutMessage: 'membership change timed out',
      };
      this.proposals.set(seq, p);
      // Commands proposed before this change go into the log before it.
      this.flushProposals();
      try {
        this.rn.proposeConfChange(cc);
      } catch (err) {
        this.failProposal(seq, isProposalDropped(err) ? 'PROPOSAL_DROPPED' : 'PROPOSAL_OUTCOME_UNKNOWN', `membership change refused: ${(err as Error).message}`);
        return;
      }
      this.kick();
    });
  }

  private isMember(id: NodeId): boolean {
    const cs = this.confState;
    return [cs.voters, cs.learners, cs.votersOutgoing, cs.learnersNext].some((ids) => ids.includes(id));
  }

  private learnPeer(id: NodeId, url: string): void {
    if (id === this.id) {
      this.peers.set(id, url);
      return;
    }
    const known = this.peers.get(id);
    this.peers.set(id, url);
    if (known === undefined) this.transport.addPeer(id, url);
    else if (known !== url) this.transport.updatePeer(id, url);
  }

  private forgetPeer(id: NodeId): void {
    if (id === this.id) return;
    this.peers.delete(id);
    this.transport.removePeer(id);
  }

  private failProposal(seq: number, code: ProposalFailure, message: string): void {
    const p = this.proposals.get(seq);
    if (!p) return;
    this.proposals.delete(seq);
    p.reject(new RaftNodeError(code, message));
  }

  private failRead(id: number, message: string): void {
    const r = this.reads.get(id);
    if (!r) return;
    this.reads.delete(id);
    r.reject(new RaftNodeError('READ_INDEX_FAILED', message));
  }

  private rejectAll(err: RaftNodeError): void {
    // Never handed to the core: certainly not applied.
    for (const q of this.queued) this.failProposal(q.seq, 'PROPOSAL_DROPPED', `${err.message} before the proposal was proposed`);
    this.queued = [];
    for (const seq of [...this.proposals.keys()]) {
      this.failProposal(seq, 'PROPOSAL_OUTCOME_UNKNOWN', `${err.message} before the proposal was applied`);
    }
    for (const r of [...this.reads.values()]) {
      this.reads.delete(r.id);
      r.reject(err);
    }
    this.readBatch = [];
    this.readRequest = null;
    this.readsToServe = [];
  }

  /** Storage failure or broken invariant: stop everything, loudly. */
  private die(err: Error): void {
    if (this.fatal) return;
    this.fatal = err;
    this.o.logger.log('error', `raft node ${this.id} stopping on fatal error: ${err.stack ?? err.message}`);
    this.rejectAll(new RaftNodeError('FATAL', `raft node failed: ${err.message}`, { cause: err }));
    void this.stop();
    if (this.o.onFatal) this.o.onFatal(err);
    else
      queueMicrotask(() => {
        throw err;
      });
  }

  /** The current term as last persisted (for tests and diagnostics). */
  get persistedTerm(): number {
    return this.term;
  }
}

/**
 * Why `op` on `nodeId` makes no sense for membership `cs`, or null. Stricter than the core,
 * which treats adding a member twice or removing a non-member as no-ops: a caller asking for
 * one has the membership wrong, and should hear so rather than get a success that did nothing.
 */
function membershipError(cs: ConfState, op: MembershipOp, nodeId: NodeId, ctx: ConfContext): string | null {
  // The log encodes member ids as u32; 0 means none.
  if (!Number.isInteger(nodeId) || nodeId <= 0 || nodeId > 0xffff_ffff) return `${nodeId} is not a valid member id`;
  const voter = cs.voters.includes(nodeId) || cs.votersOutgoing.includes(nodeId);
  const learner = cs.learners.includes(nodeId) || cs.learnersNext.includes(nodeId);
  switch (op) {
    case 'add-voter':
    case 'add-learner':
      if (voter) return `${nodeId} is already a voter`;
      if (learner) return op === 'add-voter' ? `${nodeId} is already a learner (promote it instead)` : `${nodeId} is already a learner`;
      if (!ctx.url) return `a new member needs an address`;
      return null;
    case 'promote':
      if (voter) return `${nodeId} is already a voter`;
      if (!cs.learners.includes(nodeId)) return `${nodeId} is not a learner`;
      return null;
    case 'remove':
      if (!voter && !learner) return `${nodeId} is not a member`;
      if (cs.voters.length === 1 && cs.voters[0] === nodeId) return `${nodeId} is the last voter`;
      return null;
  }
}

function confContext(id: { incarnation: Uint8Array; seq: number }, ctx: ConfContext): Uint8Array {
  return wrapCommand(id, new TextEncoder().encode(JSON.stringify(ctx)));
}

/** The context of an encoded conf change; empty if it does not decode (see applyEntry). */
function confChangeContext(data: Uint8Array): Uint8Array {
  try {
    return decodeConfChange(data).context;
  } catch {
    return new Uint8Array(0);
  }
}

function parseConfContext(context: Uint8Array): { id: { incarnation: Uint8Array; seq: number } | null; url?: string } {
  const { id, command } = unwrapCommand(context);
  try {
    const parsed = JSON.parse(new TextDecoder().decode(command)) as ConfContext;
    return typeof parsed.url === 'string' ? { id, url: parsed.url } : { id };
  } catch {
    return { id };
  }
}
