// internal/store/replicator owns the seam between proposing a command and applying it. A
// Replicator orders commands into a log and hands committed ones to the store's apply function;
// the single-node LocalReplicator commits by applying with fsync (group commit: commands
// queued while a write is in flight go into the next batch, so 32 concurrent creates cost a
// few fsyncs, not 32). RaftReplicator (internal/cluster) implements the same interface.
// Imports: types, applier (types only).

import type { CommittedCommand } from './applier.js';
import type { Command, TxnResult } from './types.js';
import { StoreError } from './types.js';

/** Applies committed commands in log order and returns one result per command. */
export type ApplyCommitted = (commands: CommittedCommand[]) => Promise<TxnResult[]>;

export interface Replicator {
  /** Binds the apply function; called once by the store before any propose. */
  start(apply: ApplyCommitted): void;
  /**
   * Resolves with the command's result once it is committed and applied on this replica.
   * `decoded` is a local hint passed through to the apply function when this replica applies it.
   */
  propose(command: Command, decoded?: ReadonlyMap<string, unknown>): Promise<TxnResult>;
  /**
   * Resolves once this replica has applied every command committed (by any replica) before
   * the call: linearizable reads wait on it. Local: at once. Raft: ReadIndex.
   */
  barrier(): Promise<void>;
  /** Stops accepting proposals; pending ones fail with STORE_CLOSED. Resolves when idle. */
  close(): Promise<void>;
  /**
   * Why this replicator refuses every write from now on (its apply failed and memory may be
   * ahead of disk), or undefined while it is healthy. Health checks report it.
   */
  readonly failure: unknown;
}

interface Pending {
  command: Command;
  decoded: ReadonlyMap<string, unknown> | undefined;
  resolve: (r: TxnResult) => void;
  reject: (e: unknown) => void;
}

/** Commands one local batch takes at most (a bound on one LevelDB write). */
export const LOCAL_MAX_BATCH = 512;

export class LocalReplicator implements Replicator {
  private apply: ApplyCommitted | undefined;
  private queue: Pending[] = [];
  private running: Promise<void> | undefined;
  private closed = false;
  private fatal: unknown;

  private limit: () => number = () => Infinity;

  constructor(private readonly maxBatch = LOCAL_MAX_BATCH) {}

  /**
   * Caps each later batch at what `limit` answers when the batch is taken (at least one
   * command). The server bounds by it the watch delivery a batch sets off (see server.ts).
   */
  limitBatches(limit: () => number): void {
    this.limit = limit;
  }

  start(apply: ApplyCommitted): void {
    this.apply = apply;
  }

  get failure(): unknown {
    return this.fatal;
  }

  propose(command: Command, decoded?: ReadonlyMap<string, unknown>): Promise<TxnResult> {
    if (this.closed) return Promise.reject(new StoreError('STORE_CLOSED', 'store is closed'));
    if (this.fatal) return Promise.reject(new StoreError('STORE_UNAVAILABLE', `store failed: ${String(this.fatal)}`));
    return new Promise((resolve, reject) => {
      this.queue.push({ command, decoded, resolve, reject });
      this.running ??= this.drain();
    });
  }

  barrier(): Promise<void> {
    // Every acknowledged write was applied here before it was acknowledged.
    return Promise.resolve();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const cap = this.limit();
        const batch = this.queue.splice(0, Number.isFinite(cap) ? Math.max(1, Math.min(this.maxBatch, Math.floor(cap))) : this.maxBatch);
        try {
          const results = await this.apply!(batch.map((p) => (p.decoded ? { command: p.command, decoded: p.decoded } : { command: p.command })));
          batch.forEach((p, i) => p.resolve(results[i]!));
        } catch (e) {
          // The applier's memory may now be ahead of disk: refuse everything from here on.
          this.fatal = e;
          for (const p of [...batch, ...this.queue.splice(0)]) p.reject(new StoreError('STORE_UNAVAILABLE', `store write failed: ${String(e)}`));
        }
      }
    } finally {
      this.running = undefined;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.running;
  }
}
