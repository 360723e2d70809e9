// raft/node/node-errors.ts owns the errors RaftNode's promises reject with. The codes tell a
// caller what it may conclude: DROPPED and QUEUE_FULL mean the command was certainly not applied
// and may be retried; OUTCOME_UNKNOWN means it may or may not be applied (retrying could apply it
// twice).

export type RaftNodeErrorCode =
  /** Certainly not applied: refused by the core (no leader, transfer in progress) or overwritten in the log. */
  | 'PROPOSAL_DROPPED'
  /** May or may not be applied: timed out, the node stopped, or a snapshot replaced the log past it. */
  | 'PROPOSAL_OUTCOME_UNKNOWN'
  /** Certainly not applied: maxPendingProposals were pending, so it was refused at once; retry later (an HTTP server answers 429). */
  | 'PROPOSAL_QUEUE_FULL'
  /** A read barrier could not be confirmed (no leader, leadership changed, timeout); nothing happened; retry. */
  | 'READ_INDEX_FAILED'
  /** A leadership transfer did not complete in time. */
  | 'TRANSFER_FAILED'
  /**
   * A membership change that makes no sense for the current membership (removing the last
   * voter or a non-member, adding a member twice, promoting a non-learner): nothing was
   * proposed. Also a change of an old log that the membership could not take when it was
   * applied (ignored on every member).
   */
  | 'MEMBERSHIP_INVALID'
  /** The node is stopped (or stopping). */
  | 'STOPPED'
  /** The node hit a storage failure or a broken invariant and stopped. */
  | 'FATAL';

export class RaftNodeError extends Error {
  readonly code: RaftNodeErrorCode;
  constructor(code: RaftNodeErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RaftNodeError';
    this.code = code;
  }
}

export function isRaftNodeError(err: unknown, code?: RaftNodeErrorCode): err is RaftNodeError {
  return err instanceof RaftNodeError && (code === undefined || err.code === code);
}
