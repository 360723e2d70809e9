// raft/core/errors.ts owns the errors the consensus core and its in-memory log storage throw.
// Each carries a stable `code` so callers branch on codes (isCompacted(err)) rather than on
// message text, which is free to change. Expected outcomes (a dropped proposal, a compacted
// index) use these; broken invariants throw a plain RaftInvariantError and should crash.

export type RaftErrorCode =
  | 'RAFT_COMPACTED'
  | 'RAFT_UNAVAILABLE'
  | 'RAFT_SNAPSHOT_OUT_OF_DATE'
  | 'RAFT_SNAPSHOT_TEMPORARILY_UNAVAILABLE'
  | 'RAFT_PROPOSAL_DROPPED'
  | 'RAFT_INVALID_CONFIG'
  | 'RAFT_INVALID_CONF_CHANGE'
  | 'RAFT_INVARIANT';

export class RaftError extends Error {
  readonly code: RaftErrorCode;
  constructor(code: RaftErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RaftError';
    this.code = code;
  }
}

/** The requested index is below the storage's first index: it was compacted into a snapshot. */
export class CompactedError extends RaftError {
  constructor(message = 'requested index is unavailable due to compaction') {
    super('RAFT_COMPACTED', message);
  }
}

/** The requested index is above the storage's last index. */
export class UnavailableError extends RaftError {
  constructor(message = 'requested entry at index is unavailable') {
    super('RAFT_UNAVAILABLE', message);
  }
}

/** applySnapshot / createSnapshot was given a snapshot older than the one already held. */
export class SnapshotOutOfDateError extends RaftError {
  constructor(message = 'requested index is older than the existing snapshot') {
    super('RAFT_SNAPSHOT_OUT_OF_DATE', message);
  }
}

/** The storage is still producing a snapshot; the leader retries on a later heartbeat. */
export class SnapshotTemporarilyUnavailableError extends RaftError {
  constructor(message = 'snapshot is temporarily unavailable') {
    super('RAFT_SNAPSHOT_TEMPORARILY_UNAVAILABLE', message);
  }
}

/**
 * A proposal (or conf change, or leadership transfer request) was not accepted: there is no
 * known leader, leadership is being transferred, or this node was removed. Nothing was
 * appended; the caller may retry, typically after a leader is known.
 */
export class ProposalDroppedError extends RaftError {
  constructor(message = 'raft proposal dropped') {
    super('RAFT_PROPOSAL_DROPPED', message);
  }
}

/** A broken internal invariant. Never caused by bad input; the process should crash. */
export class RaftInvariantError extends RaftError {
  constructor(message: string) {
    super('RAFT_INVARIANT', message);
  }
}

export function isRaftError(err: unknown, code?: RaftErrorCode): err is RaftError {
  return err instanceof RaftError && (code === undefined || err.code === code);
}
export const isCompacted = (err: unknown): boolean => isRaftError(err, 'RAFT_COMPACTED');
export const isUnavailable = (err: unknown): boolean => isRaftError(err, 'RAFT_UNAVAILABLE');
export const isProposalDropped = (err: unknown): boolean => isRaftError(err, 'RAFT_PROPOSAL_DROPPED');
export const isSnapshotTemporarilyUnavailable = (err: unknown): boolean =>
  isRaftError(err, 'RAFT_SNAPSHOT_TEMPORARILY_UNAVAILABLE');

/** Throws a RaftInvariantError when `cond` is false: for states that must be impossible. */
export function invariant(cond: boolean, message: string | (() => string)): asserts cond {
  if (!cond) throw new RaftInvariantError(typeof message === 'string' ? message : message());
}
