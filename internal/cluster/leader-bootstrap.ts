// internal/cluster/leader-bootstrap owns where a cluster's start-up writes run (issue 13 §2:
// leader-only work runs on the leader alone and moves with leadership). The bootstrap objects
// (system namespaces, the RBAC policy, the kubernetes Service, priority classes, flow-control
// defaults, ...) are reconciled by the replica that leads, every time it gains leadership, and it
// then records the digest of what it reconciled under BOOTSTRAP_KEY (a replicated store key).
// A follower writes none of them: its start-up hooks complete once its store holds that record
// with its own digest. Before, all three replicas reconciled at once at every start: three
// consistent lists per kind, and each replica's creates racing the others' (conflicts re-read
// and retried) through one Raft log.
// The one case where a follower reconciles itself is version skew: a leader of another build
// records another digest (or none, a build from before this module), which this follower's
// policy never matches. After a grace the follower runs its own reconcile; every step only adds
// what is missing, so two builds' runs do not undo each other.
// Imports: store (types), log.

import type { Logger } from '../log/logger.js';
import type { RevisionStore } from '../store/types.js';

export const BOOTSTRAP_KEY = '/cluster/bootstrap';

/** What the leader records once its reconcile finished. */
export interface BootstrapRecord {
  digest: string;
  /** The replica that ran it, and when (for operators reading the key). */
  by: string;
  at: string;
}

export interface LeaderBootstrapOptions {
  store: Pick<RevisionStore, 'get' | 'execute'>;
  /** Leadership events (the Raft replicator): called once at once, then on every change. */
  elector: { onLeadership(listener: (isLeader: boolean) => void): () => void };
  /** This replica's name (recorded). */
  name: string;
  /** Digest of the objects this build reconciles (bootstrapDigest). */
  digest: string;
  /** The start-up writes; resolves when all are done (retries are the caller's). */
  reconcile: () => Promise<void>;
  log: Logger;
  /** How often a follower looks for the record. Default 200 ms. */
  pollMs?: number;
  /** How long a follower waits for a record of its digest before reconciling itself. Default 30 s. */
  skewGraceMs?: number;
}

export class LeaderBootstrap {
  private running: Promise<void> | undefined;
  private stopped = false;
  private unsubscribe: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Reconciles run here, by cause (tests and logs). */
  readonly runs = { asLeader: 0, forSkew: 0 };

  constructor(private readonly o: LeaderBootstrapOptions) {}

  /**
   * Starts following leadership; resolves once the bootstrap is done as far as this replica is
   * concerned: its own reconcile finished (as leader, or for version skew), or the store holds a
   * record of this build's digest.
   */
  start(): Promise<void> {
    return new Promise<void>((resolve) => {
      let settled = false;
      const done = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(this.timer);
        resolve();
      };
      this.unsubscribe = this.o.elector.onLeadership((leader) => {
        if (!leader || this.stopped) return;
        // A run that failed (leadership lost while recording, store closed) leaves the follower's
        // wait below going: the next leader runs it again.
        this.runOnce('leader').then(done, (e: unknown) =>
          this.o.log.warn('reconciling the bootstrap objects as leader failed', { error: e instanceof Error ? e.message : String(e) }),
        );
      });
      const started = Date.now();
      const grace = this.o.skewGraceMs ?? 30_000;
      const poll = async (): Promise<void> => {
        if (settled || this.stopped) return;
        try {
          const record = await this.record();
          if (record?.digest === this.o.digest) return done();
          if (!this.running && Date.now() - started >= grace) {
            this.o.log.warn('no leader recorded this build\'s bootstrap objects; reconciling them here (replicas of different versions?)', {
              own: this.o.digest,
              recorded: record?.digest ?? null,
              by: record?.by ?? null,
            });
            await this.runOnce('skew');
            return done();
          }
        } catch (e) {
          // A read or a write that failed (no leader yet, shutting down): look again later.
          this.o.log.debug('waiting for the leader\'s bootstrap', { error: e instanceof Error ? e.message : String(e) });
        }
        if (!settled && !this.stopped) this.timer = setTimeout(() => void poll(), this.o.pollMs ?? 200);
      };
      void poll();
    });
  }

  /** The record in this replica's store (what it has applied). */
  async record(): Promise<BootstrapRecord | undefined> {
    const kv = await this.o.store.get(BOOTSTRAP_KEY);
    if (!kv) return undefined;
    try {
      return JSON.parse(Buffer.from(kv.value).toString('utf8')) as BootstrapRecord;
    } catch {
      return undefined;
    }
  }

  /** One reconcile at a time: a leadership gained again while one runs joins it. */
  private runOnce(cause: 'leader' | 'skew'): Promise<void> {
    this.running ??= (async () => {
      try {
        if (cause === 'leader') this.runs.asLeader++;
        else this.runs.forSkew++;
        await this.o.reconcile();
        // Only a leader's run speaks for the cluster: a skewed follower's build is not the leader's.
        if (cause === 'leader') {
          const record: BootstrapRecord = { digest: this.o.digest, by: this.o.name, at: new Date().toISOString() };
          await this.o.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: BOOTSTRAP_KEY, value: Buffer.from(JSON.stringify(record)) }] });
          this.o.log.info('bootstrap objects reconciled by the leader', { digest: this.o.digest });
        }
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.unsubscribe?.();
  }
}
