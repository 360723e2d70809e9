// raft/node/testing/crashable-log-store.ts owns a DurableLogStore wrapper for crash tests of the
// driver in one process: writes wait in a queue until the test completes them (a slow disk
// under the test's control), and reach the wrapped store, which stands for what is on the
// platter, only when a synced write completes (fsync makes every earlier write durable too).
// crash() then loses everything else: writes whose save() had not resolved, and completed
// writes that were never synced (sync:false saves, compactions). A store reopened on the same
// database afterwards holds exactly what survived, which is what RaftNode restarts on.
//
// `lyingFsync` makes a broken disk, for the test that shows the harness notices: a synced
// save is answered at once, before it is durable, so a crash can lose writes the driver was
// told are durable.

import { LogStoreError, type DurableLogStore, type LogSaveBatch } from '../../storage/log-store.js';
import type { DurableLogState } from '../../types.js';

type Write = { kind: 'save'; batch: LogSaveBatch } | { kind: 'compact'; index: number };

interface Pending {
  write: Write;
  resolve: () => void;
  reject: (err: Error) => void;
  /** Already answered (a lying disk answers synced saves before they are durable). */
  answered: boolean;
}

export interface CrashableLogStoreOptions {
  /** Broken disk: synced saves are answered at once, before they are durable. */
  lyingFsync?: boolean;
}

export class CrashableLogStore implements DurableLogStore {
  /** Issued, not completed: not on the disk yet. */
  private readonly pending: Pending[] = [];
  /** Completed but not synced: lost in a crash unless a later synced write completes first. */
  private volatile: Write[] = [];
  private crashed = false;
  /** Completion work in progress (writes reaching the wrapped store), in order. */
  private flushing: Promise<void> = Promise.resolve();
  /** Complete every write as soon as it is issued (a fast disk; crashes still lose unsynced writes). */
  autoComplete = false;
  /** Writes the wrapped store refused after a lying disk had answered them (the driver never heard). */
  readonly refused: Error[] = [];

  constructor(
    private readonly durable: DurableLogStore,
    private readonly options: CrashableLogStoreOptions = {},
  ) {}

  /** Writes issued and not completed yet. */
  get pendingWrites(): number {
    return this.pending.length;
  }

  open(): Promise<DurableLogState> {
    if (this.crashed) return Promise.reject(new LogStoreError('LOG_IO', 'crashed'));
    return this.durable.open();
  }

  save(batch: LogSaveBatch): Promise<void> {
    return this.enqueue({ kind: 'save', batch });
  }

  compact(index: number): Promise<void> {
    return this.enqueue({ kind: 'compact', index });
  }

  /** A clean close flushes everything first; a crashed store was abandoned with its process. */
  async close(): Promise<void> {
    if (this.crashed) return;
    await this.complete();
    if (this.volatile.length > 0) await this.makeDurable();
    await this.durable.close();
  }

  /**
   * Completes the `n` oldest pending writes, in order (all of them without `n`): a synced one
   * makes itself and every completed write before it durable; the caller of each is answered
   * once that is done. Resolves when they are.
   */
  complete(n = this.pending.length): Promise<void> {
    const batch = this.pending.splice(0, Math.min(n, this.pending.length));
    const run = this.flushing.then(async () => {
      for (const p of batch) {
        if (this.crashed) return;
        this.volatile.push(p.write);
        if (p.write.kind === 'save' && (p.write.batch.sync ?? true)) {
          try {
            await this.makeDurable();
          } catch (err) {
            // The wrapped store refused the write (it breaks the log's invariants): the
            // driver hears so, unless a lying disk answered already.
            if (!p.answered) p.reject(err as Error);
            else this.refused.push(err as Error);
            continue;
          }
        }
        if (!p.answered) p.resolve();
      }
    });
    this.flushing = run.catch(() => undefined);
    return run;
  }

  /**
   * Power loss: every write not yet durable is lost. Callers still waiting are failed (the
   * process they belong to is gone; this only lets its driver be disposed of), and the store
   * refuses everything from now on: open the database with a new store to restart.
   */
  async crash(): Promise<void> {
    this.crashed = true;
    // A completion in progress is one write reaching the disk: it finishes or never started.
    await this.flushing;
    this.volatile = [];
    for (const p of this.pending.splice(0)) if (!p.answered) p.reject(new LogStoreError('LOG_IO', 'crashed'));
    await this.durable.close();
  }

  private enqueue(write: Write): Promise<void> {
    if (this.crashed) return Promise.reject(new LogStoreError('LOG_IO', 'crashed'));
    const promise = new Promise<void>((resolve, reject) => {
      const p: Pending = { write, resolve, reject, answered: false };
      this.pending.push(p);
      if (this.options.lyingFsync && write.kind === 'save' && (write.batch.sync ?? true)) {
        p.answered = true;
        resolve();
      }
    });
    if (this.autoComplete) void this.complete();
    return promise;
  }

  /** Hands every completed write to the wrapped store, in order. */
  private async makeDurable(): Promise<void> {
    const writes = this.volatile;
    this.volatile = [];
    for (const w of writes) {
      if (w.kind === 'save') await this.durable.save(w.batch);
      else await this.durable.compact(w.index);
    }
  }
}
