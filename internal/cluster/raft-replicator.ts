// internal/cluster/raft-replicator owns the Raft implementation of the store's Replicator seam:
// every store Command becomes a Raft log entry (command-codec), the committed log is applied
// to this replica's LevelRevisionStore in log order, linearizable reads wait on ReadIndex, and
// Raft snapshots are images of the store. Followers do not need a forwarding path of their own:
// a proposal made on a follower travels to the leader inside Raft (MsgProp), and the follower
// answers its client only once it has applied the entry itself (read-your-writes on the
// replica the client talks to).
//
// Errors are translated into what a client may conclude (StoreError codes):
//   - certainly not applied (no leader within the wait, proposal dropped, queue full) →
//     STORE_NOT_PROPOSED (503 or 429 with Retry-After), retried here while the wait lasts;
//   - may have been applied (timed out in the log, node stopped) → STORE_OUTCOME_UNKNOWN (504).
// Imports: raft (node, storage, types), store (types), command-codec.

import { randomInt } from 'node:crypto';
import { RaftNode, type AppliedCommand, type RaftNodeOptions, type RaftNodeStatus, type StateMachine } from '../../raft/node/raft-node.js';
import { isRaftNodeError } from '../../raft/node/node-errors.js';
import type { CommittedCommand } from '../store/applier.js';
import type { ApplyCommitted, Replicator } from '../store/replicator.js';
import { StoreError, type Command, type TxnResult } from '../store/types.js';
import { decodeCommand, encodeCommand } from './command-codec.js';
import { ownRaftState } from './member-status.js';

/** What the replicator needs of the store beyond applying: images for Raft snapshots. */
export interface SnapshotableStore {
  captureImage(): Promise<Uint8Array>;
  restoreImage(image: Uint8Array): Promise<void>;
  /** The same image as chunks (captured at the call), so that it is never whole in memory. */
  captureImageStream(): AsyncIterable<Uint8Array>;
  restoreImageStream(chunks: AsyncIterable<Uint8Array>): Promise<void>;
  /** Whether the store outlives the process: then Raft's periodic snapshots are in place (persistThrough). */
  readonly durable?: boolean;
  /** Makes the state durable and records it holds the log's state at `index` (StateMachine.persist). */
  persistThrough?(index: number): Promise<void>;
  /** Whether the state at `index` or a later one is held (StateMachine.holds). */
  holdsThrough?(index: number): boolean;
}

export interface RaftReplicatorOptions {
  /** RaftNode options except the state machine, which the replicator provides. */
  node: Omit<RaftNodeOptions, 'stateMachine'>;
  /** How long a write or a linearizable read waits for a leader (elections) before failing. Default 5 s. */
  leaderWaitMs?: number;
}

type RaftNodeErrorLike = { code: string; message: string };

export class RaftReplicator implements Replicator {
  private apply: ApplyCommitted | undefined;
  private store: SnapshotableStore | undefined;
  private node: RaftNode | undefined;
  private readonly incarnation = randomInt(1, 2 ** 32 - 1);
  private nextSeq = 1;
  /** Hints kept for our own proposals until their entries come back (see StoreEvent.decoded). */
  private readonly hints = new Map<number, ReadonlyMap<string, unknown>>();
  private fatal: unknown;
  private closed = false;
  private readonly leaderWaitMs: number;
  private readonly leaderListeners = new Set<(isLeader: boolean) => void>();
  private wasLeader = false;
  private unsubscribeLeader: (() => void) | undefined;
  /** Leader changes seen (metrics). */
  leaderChanges = 0;
  private lastLeader = 0;
  /** Proposals that failed, by outcome (metrics). */
  readonly failed = { notProposed: 0, unknown: 0 };
  /** Proposals in flight from this replica (metrics). */
  pending = 0;
  /**
   * Proposals proposed again after one attempt was certainly not made (PROPOSAL_DROPPED: no
   * leader, or lost on the way to it), and consistent reads that failed for want of a leader
   * (metrics): what an election or a lossy link costs the writes and reads that rode it out.
   */
  proposalsRetried = 0;
  readsFailed = 0;

  constructor(private readonly options: RaftReplicatorOptions) {
    this.leaderWaitMs = options.leaderWaitMs ?? 5000;
  }

  start(apply: ApplyCommitted): void {
    this.apply = apply;
  }

  /**
   * Starts the Raft node over `store` (bound by the store's constructor through start()).
   * Committed entries the store has not applied yet are applied before this resolves or soon
   * after; the store skips entries it already holds (by log index).
   */
  async run(store: SnapshotableStore): Promise<void> {
    this.store = store;
    const sm: StateMachine & { applyBatch?: (commands: AppliedCommand[]) => Promise<unknown[]> } = {
      apply: async (c) => (await this.applyEntries([c]))[0],
      applyBatch: (commands) => this.applyEntries(commands),
      snapshot: () => this.store!.captureImage(),
      restore: (image) => this.store!.restoreImage(image),
      snapshotStream: () => this.store!.captureImageStream(),
      restoreStream: (chunks) => this.store!.restoreImageStream(chunks),
    };
    // A store on disk is its own snapshot: the periodic ones write no image of it (which took
    // the whole data through the loop and onto disk again every snapshotEntries writes), and
    // an image is captured only for a member that needs one.
    if (store.durable && store.persistThrough && store.holdsThrough) {
      sm.persist = (index) => store.persistThrough!(index);
      sm.holds = (index) => store.holdsThrough!(index);
    }
    const onFatal = this.options.node.onFatal;
    this.node = await RaftNode.start({
      ...this.options.node,
      stateMachine: sm,
      onFatal: (err) => {
        this.fatal = err;
        onFatal?.(err);
      },
    });
    // Leadership is an event of the node: listeners hear of a change in the same turn, and no
    // timer polls the node's status.
    this.unsubscribeLeader = this.node.onLeaderChange(() => this.checkLeader());
    this.checkLeader();
  }

  get raft(): RaftNode {
    if (!this.node) throw new Error('raft node not started');
    return this.node;
  }

  get failure(): unknown {
    return this.fatal;
  }

  status(): RaftNodeStatus | undefined {
    return this.node?.status();
  }

  isLeader(): boolean {
    const s = this.node?.status();
    return s !== undefined && ownRaftState(s).isLeader;
  }

  /** Calls `listener` whenever this replica gains or loses leadership (and once now). */
  onLeadership(listener: (isLeader: boolean) => void): () => void {
    this.leaderListeners.add(listener);
    listener(this.wasLeader);
    return () => this.leaderListeners.delete(listener);
  }

  private checkLeader(): void {
    const status = this.node?.status();
    if (!status) return;
    const s = ownRaftState(status);
    if (s.leader !== this.lastLeader) {
      if (s.hasLeader) this.leaderChanges++;
      this.lastLeader = s.leader;
    }
    const leader = s.isLeader;
    if (leader === this.wasLeader) return;
    this.wasLeader = leader;
    for (const l of this.leaderListeners) l(leader);
  }

  private async applyEntries(commands: readonly AppliedCommand[]): Promise<unknown[]> {
    const batch: CommittedCommand[] = [];
    const slots: number[] = [];
    const out: unknown[] = new Array(commands.length);
    for (let i = 0; i < commands.length; i++) {
      const c = commands[i]!;
      // The leader's empty no-op entries carry no command.
      if (c.data.length === 0) continue;
      const { command, origin, attributes } = decodeCommand(c.data);
      const committed: CommittedCommand = { command, index: c.index };
      if (attributes) committed.attributes = attributes;
      if (origin.incarnation === this.incarnation) {
        const hint = this.hints.get(origin.seq);
        if (hint) {
          committed.decoded = hint;
          this.hints.delete(origin.seq);
        }
      }
      batch.push(committed);
      slots.push(i);
    }
    if (batch.length === 0) return out;
    const results = await this.apply!(batch);
    slots.forEach((slot, i) => (out[slot] = results[i]));
    return out;
  }

  async propose(command: Command, decoded?: ReadonlyMap<string, unknown>): Promise<TxnResult> {
    const node = this.ready();
    const seq = this.nextSeq++;
    if (this.nextSeq >= 2 ** 32) this.nextSeq = 1;
    const bytes = encodeCommand(command, { incarnation: this.incarnation, seq }, decoded && this.describe ? this.attributesOf(decoded) : undefined);
    if (decoded) this.hints.set(seq, decoded);
    this.pending++;
    const deadline = Date.now() + this.leaderWaitMs;
    try {
      for (;;) {
        if (node.leader() === 0) await this.waitForLeader(deadline);
        try {
          const { result } = await node.propose(bytes);
          return result as TxnResult;
        } catch (e) {
          if (!isRaftNodeError(e)) throw e;
          // Certainly not applied, and a leader may appear: try again while the wait lasts.
          if (e.code === 'PROPOSAL_DROPPED' && Date.now() < deadline) {
            this.proposalsRetried++;
            await sleep(Math.min(50, Math.max(0, deadline - Date.now())));
            continue;
          }
          throw this.translate(e);
        }
      }
    } catch (e) {
      if (isStoreError(e)) {
        if (e.code === 'STORE_NOT_PROPOSED') this.failed.notProposed++;
        else if (e.code === 'STORE_OUTCOME_UNKNOWN') this.failed.unknown++;
      }
      throw e;
    } finally {
      this.pending--;
      this.hints.delete(seq);
    }
  }

  /**
   * Sets how the attributes other replicas' caches need are derived from a proposal's decoded
   * values (the watch cache's attributeBytes), to travel in the log entry. Set once the cache
   * exists; proposals before that carry none, and replicas parse those values instead.
   */
  describeWith(describe: (key: string, decoded: unknown) => Uint8Array | undefined): void {
    this.describe = describe;
  }

  private describe: ((key: string, decoded: unknown) => Uint8Array | undefined) | undefined;

  private attributesOf(decoded: ReadonlyMap<string, unknown>): Map<string, Uint8Array> | undefined {
    let out: Map<string, Uint8Array> | undefined;
    for (const [key, value] of decoded) {
      const a = this.describe!(key, value);
      if (a) (out ??= new Map()).set(key, a);
    }
    return out;
  }

  async barrier(): Promise<void> {
    const node = this.ready();
    const deadline = Date.now() + this.leaderWaitMs;
    for (;;) {
      try {
        await node.readIndex();
        return;
      } catch (e) {
        if (!isRaftNodeError(e)) throw e;
        if (e.code === 'READ_INDEX_FAILED' && Date.now() < deadline) {
          await sleep(Math.min(50, Math.max(0, deadline - Date.now())));
          continue;
        }
        if (e.code === 'READ_INDEX_FAILED') {
          this.readsFailed++;
          throw new StoreError('STORE_READ_UNAVAILABLE', `the cluster has no leader to confirm a consistent read: ${e.message}`, { retryAfterSeconds: 1 });
        }
        throw this.translate(e);
      }
    }
  }

  private ready(): RaftNode {
    if (this.closed) throw new StoreError('STORE_CLOSED', 'store is closed');
    if (this.fatal) throw new StoreError('STORE_UNAVAILABLE', `store failed: ${String(this.fatal)}`);
    if (!this.node) throw new StoreError('STORE_UNAVAILABLE', 'this replica has not joined its cluster yet', { retryAfterSeconds: 1 });
    return this.node;
  }

  private async waitForLeader(deadline: number): Promise<void> {
    const node = this.node!;
    while (node.leader() === 0) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new StoreError('STORE_NOT_PROPOSED', 'the cluster has no leader (an election is in progress or a quorum of replicas is unreachable); the write was not made', {
          retryAfterSeconds: 1,
        });
      }
      // Woken by the election's outcome rather than a poll, so a write waits no longer than it.
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          off();
          resolve();
        };
        const timer = setTimeout(done, left);
        const off = node.onLeaderChange(done);
      });
    }
  }

  private translate(e: RaftNodeErrorLike): StoreError {
    switch (e.code) {
      case 'PROPOSAL_DROPPED':
        return new StoreError('STORE_NOT_PROPOSED', `the write was not made: ${e.message}`, { retryAfterSeconds: 1 });
      case 'PROPOSAL_QUEUE_FULL':
        return new StoreError('STORE_NOT_PROPOSED', `too many writes are waiting to be replicated: ${e.message}`, { retryAfterSeconds: 1, tooManyRequests: true });
      case 'PROPOSAL_OUTCOME_UNKNOWN':
        return new StoreError('STORE_OUTCOME_UNKNOWN', `request did not complete within the allowed duration; the write may still be applied (${e.message})`, {
          retryAfterSeconds: 1,
        });
      case 'STOPPED':
        return new StoreError('STORE_CLOSED', e.message);
      default:
        return new StoreError('STORE_UNAVAILABLE', e.message);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribeLeader?.();
    await this.node?.stop();
  }
}

const isStoreError = (e: unknown): e is StoreError => e instanceof StoreError;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
