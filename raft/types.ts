// raft/types.ts owns the wire and storage vocabulary shared by the consensus core, its
// storage, its transport and its driver. It is plain data: no behaviour, no I/O. The shapes
// follow the Raft thesis and etcd-io/raft's raftpb, written for TypeScript.
// Nothing in raft/ may import from internal/.

/** Node identifiers are positive integers; 0 means "none". */
export type NodeId = number;
export const NONE: NodeId = 0;

export enum EntryType {
  /** An application command (opaque bytes) or an empty no-op appended by a new leader. */
  Normal = 0,
  /** A configuration change: data is an encoded ConfChange. */
  ConfChange = 1,
}

export interface Entry {
  term: number;
  index: number;
  type: EntryType;
  /** Opaque to the core. Empty for the leader's no-op. */
  data: Uint8Array;
}

/** State that must be durable before any message that depends on it is sent. */
export interface HardState {
  term: number;
  vote: NodeId;
  commit: number;
}

/** Membership. During joint consensus votersOutgoing is non-empty. */
export interface ConfState {
  voters: NodeId[];
  learners: NodeId[];
  votersOutgoing: NodeId[];
  learnersNext: NodeId[];
  autoLeave: boolean;
}

export interface SnapshotMetadata {
  index: number;
  term: number;
  confState: ConfState;
}

export interface Snapshot {
  metadata: SnapshotMetadata;
  /** The application's state machine image at metadata.index; opaque to the core. */
  data: Uint8Array;
}

export enum ConfChangeType {
  AddNode = 0,
  RemoveNode = 1,
  AddLearnerNode = 2,
}

export interface ConfChangeSingle {
  type: ConfChangeType;
  nodeId: NodeId;
}

/** One change = simple (one server at a time); several = joint consensus. */
export interface ConfChange {
  /** 'auto' leaves the joint config automatically; 'explicit' waits for an empty ConfChange. */
  transition: 'auto' | 'implicit' | 'explicit';
  changes: ConfChangeSingle[];
  /** Application context carried through the log (for example the new member's address). */
  context: Uint8Array;
}

export enum MessageType {
  Hup = 'Hup',
  Beat = 'Beat',
  Prop = 'Prop',
  App = 'App',
  AppResp = 'AppResp',
  Vote = 'Vote',
  VoteResp = 'VoteResp',
  PreVote = 'PreVote',
  PreVoteResp = 'PreVoteResp',
  Snap = 'Snap',
  Heartbeat = 'Heartbeat',
  HeartbeatResp = 'HeartbeatResp',
  Unreachable = 'Unreachable',
  SnapStatus = 'SnapStatus',
  CheckQuorum = 'CheckQuorum',
  TransferLeader = 'TransferLeader',
  TimeoutNow = 'TimeoutNow',
  ReadIndex = 'ReadIndex',
  ReadIndexResp = 'ReadIndexResp',
}

export interface Message {
  type: MessageType;
  from: NodeId;
  to: NodeId;
  term: number;
  /** Term of the entry at `index` (log term of the previous entry for App; last log term for votes). */
  logTerm: number;
  index: number;
  entries: Entry[];
  commit: number;
  snapshot?: Snapshot;
  reject: boolean;
  rejectHint: number;
  /** Opaque request context (ReadIndex request ids, campaign-transfer markers). */
  context: Uint8Array;
}

/**
 * What the core reads of the log. Synchronous on purpose: the core never waits on I/O.
 * The driver keeps an in-memory image (the core's MemoryStorage) of the durable log store and
 * updates it only after the durable write of a Ready batch has completed.
 */
export interface LogStorage {
  /** The persisted hard state and membership at startup. */
  initialState(): { hardState: HardState; confState: ConfState };
  /** Entries [lo, hi), at least one if any exist, stopping once maxBytes would be exceeded. */
  entries(lo: number, hi: number, maxBytes: number): Entry[];
  /** Term of entry i; throws CompactedError below firstIndex()-1, UnavailableError above lastIndex(). */
  term(i: number): number;
  /** Index of the first entry still held (snapshot index + 1). */
  firstIndex(): number;
  lastIndex(): number;
  /** The most recent snapshot; throws SnapshotTemporarilyUnavailableError if not ready yet. */
  snapshot(): Snapshot;
}

/** What the durable log store hands the driver at start: everything needed to rebuild memory. */
export interface DurableLogState {
  hardState: HardState;
  snapshot: Snapshot | null;
  /** Entries after the snapshot, contiguous, in index order. */
  entries: Entry[];
}
