// internal/controllers/reconciler owns the loop the small controllers share: watch resource
// prefixes of the watch cache from their current state, turn each event into queue keys, and
// reconcile keys one at a time, retrying a failed key after a delay. Start and stop follow
// leadership (the caller decides when). A write that lost an optimistic-concurrency race (409
// Conflict: the cache had not yet seen another writer's change) is retried soon and quietly, as
// upstream's controllers requeue a conflict; only a key that keeps conflicting is worth a warning.
// Imports: apierrors, watchcache, log.

import { isConflict } from '../apierrors/status.js';

import type { Logger } from '../log/logger.js';
import type { CacheEntry, EventType } from '../watchcache/types.js';
import type { WatchCache } from '../watchcache/watch-cache.js';
import type { CacheWatcher } from '../watchcache/watcher.js';

export interface ReconcilerSpec {
  name: string;
  /** Resource prefixes to watch, each with the keys an event of it enqueues. */
  sources: Array<{ prefix: string; keys(type: EventType, entry: CacheEntry): string[] }>;
  /** Brings one key to its wanted state; throws to be retried. Returns a delay to look again (ms), if any. */
  reconcile(key: string): Promise<number | void>;
  retryMs?: number;
}

/** Conflicts in a row on one key before they are logged as a failure. */
const QUIET_CONFLICTS = 5;
/** A conflict is retried after at most this long: the newer object is normally cached by then. */
const CONFLICT_RETRY_MS = 100;

export class Reconciler {
  private watchers: CacheWatcher[] = [];
  private readonly queue = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Keys whose last reconciles failed with a conflict, and how many times in a row. */
  private readonly conflicts = new Map<string, number>();
  private draining = false;
  private running = false;

  constructor(
    private readonly spec: ReconcilerSpec,
    private readonly cache: WatchCache,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    for (const source of this.spec.sources) this.follow(source);
  }

  /**
   * The current state first (each object as ADDED, read synchronously), then the changes after
   * it. Not a watch from revision 0: its initial events count against the watcher's queue bound,
   * so a prefix holding more objects than the bound would overflow at once, and following again
   * from 0 would overflow again, forever.
   */
  private follow(source: ReconcilerSpec['sources'][number]): void {
    if (!this.running) return;
    if (!this.cache.ready) {
      setTimeout(() => this.follow(source), 100).unref();
      return;
    }
    const revision = this.cache.revision;
    for (const entry of this.cache.resource(source.prefix).list().entries) for (const key of source.keys('ADDED', entry)) this.enqueue(key);
    const watcher = this.cache.watch({ prefix: source.prefix, filter: () => true, fromRevision: revision });
    this.watchers.push(watcher);
    void (async () => {
      for await (const out of watcher) {
        if (!('entry' in out)) continue;
        for (const key of source.keys(out.type, out.entry)) this.enqueue(key);
      }
      this.watchers = this.watchers.filter((w) => w !== watcher);
      // Ended by overflow or a cache restart while running: follow again from the current state.
      if (this.running) {
        this.log.info('controller: following again after its watch ended', { controller: this.spec.name, prefix: source.prefix });
        setTimeout(() => this.follow(source), 0).unref();
      }
    })();
  }

  stop(): void {
    this.running = false;
    for (const w of this.watchers) w.close();
    this.watchers = [];
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.queue.clear();
    this.conflicts.clear();
  }

  enqueue(key: string): void {
    if (!this.running) return;
    this.queue.add(key);
    if (!this.draining) void this.drain();
  }

  private later(key: string, ms: number): void {
    clearTimeout(this.timers.get(key));
    const t = setTimeout(() => {
      this.timers.delete(key);
      this.enqueue(key);
    }, ms);
    t.unref();
    this.timers.set(key, t);
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.size > 0 && this.running) {
        const [key] = this.queue;
        this.queue.delete(key!);
        try {
          const again = await this.spec.reconcile(key!);
          this.conflicts.delete(key!);
          if (typeof again === 'number' && this.running) this.later(key!, again);
        } catch (e) {
          const retryMs = this.spec.retryMs ?? 1000;
          const error = e instanceof Error ? e.message : String(e);
          // Stopped meanwhile (leadership lost, or the server stopping under it): expected.
          if (!this.running) {
            this.log.debug(`${this.spec.name}: reconcile ended by the stop`, { key, error });
            continue;
          }
          if (isConflict(e)) {
            const inARow = (this.conflicts.get(key!) ?? 0) + 1;
            this.conflicts.set(key!, inARow);
            if (inARow < QUIET_CONFLICTS) {
              this.log.debug(`${this.spec.name}: reconcile lost a write race; retrying`, { key, error });
              if (this.running) this.later(key!, Math.min(retryMs, CONFLICT_RETRY_MS));
              continue;
            }
          } else {
            this.conflicts.delete(key!);
          }
          this.log.warn(`${this.spec.name}: reconcile failed; retrying`, { key, error });
          if (this.running) this.later(key!, retryMs);
        }
      }
    } finally {
      this.draining = false;
    }
  }
}
