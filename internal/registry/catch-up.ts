// internal/registry/catch-up owns bringing this replica's derived state up to the cluster's:
// the served custom resources (CRD controller), the RBAC index and anything else a replica
// builds in memory from objects it follows in its watch cache. Those follow the cache a little
// after it applies, and a follower's cache follows the leader's commits a little after they are
// acknowledged elsewhere, so a client that wrote a CRD or a RoleBinding through one replica and
// immediately uses it through another could be told 404 or 403 there. The answers that depend
// on such state and say "no" (an unknown resource, a denial) wait for wait() and are decided
// again: the cache brought to the consistent revision (the cacher's consistent-read wait:
// ReadIndex on a Raft replica), then every registered follower drains what the cache handed
// it. Only "no" answers pay the round trip; concurrent callers share one.
// Imports: none.

export interface CatchUpOptions {
  /** The longest a caller waits (no leader, a partitioned replica): it then keeps its answer. */
  timeoutMs?: number;
}

export class CatchUp {
  private readonly followers = new Set<() => void>();
  private readonly timeoutMs: number;
  /** The round in flight, and the one callers arriving meanwhile share (it starts after it). */
  private running: Promise<boolean> | undefined;
  private queued: Promise<boolean> | undefined;

  /**
   * `fresh` resolves once this replica's cache holds every write acknowledged before the call
   * (CachedStorage.waitUntilFresh with a consistent read mode), and rejects when it cannot.
   */
  constructor(
    private readonly fresh: () => Promise<unknown>,
    options: CatchUpOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
  }

  /**
   * Registers a follower's synchronous drain: it applies what its cache watcher has queued,
   * so after the cache reached a revision the follower has too. Returns the unregistration.
   */
  register(drain: () => void): () => void {
    this.followers.add(drain);
    return () => this.followers.delete(drain);
  }

  /**
   * Resolves true once this replica's cache and followers hold every write acknowledged before
   * the call (by any replica), false when that could not be established in time.
   */
  wait(): Promise<boolean> {
    // A round already running may have read its revision before this caller's write was
    // acknowledged: callers arriving meanwhile share the next round.
    if (!this.running) return (this.running = this.round());
    if (!this.queued) {
      this.queued = this.running.then(() => {
        this.queued = undefined;
        return (this.running = this.round());
      });
    }
    return this.queued;
  }

  private async round(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.timeoutMs);
      timer.unref?.();
    });
    try {
      const caught = (async (): Promise<boolean> => {
        await this.fresh();
        for (const drain of this.followers) drain();
        return true;
      })().catch(() => false);
      return await Promise.race([caught, expired]);
    } finally {
      clearTimeout(timer);
      this.running = undefined;
    }
  }
}
