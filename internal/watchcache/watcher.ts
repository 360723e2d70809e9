// internal/watchcache/watcher owns one watch's delivery state: its filter, a bounded queue of
// outputs, and the async iteration the HTTP layer reads from. Writers never wait on a watcher:
// when the queue is full the watcher is closed and its consumer resumes from the last version
// it saw (memory per watcher stays bounded; one slow client cannot stall the others).
// Consumers are woken in delivery rounds (see delivery-rounds).
// Imports: types, delivery-rounds, storedobject.

import { replaceResourceVersion } from '../storedobject/stored-object.js';
import { wakeInNextRound } from './delivery-rounds.js';
import type { CacheEntry, CacheEvent, EntryFilter, WatchOutput } from './types.js';

/**
 * What a watcher sees of an object that leaves its selection: upstream's cacher sends the
 * previous content (the state that matched), versioned at the change's resourceVersion.
 */
function leftSelectionAt(prev: CacheEntry, revision: number): CacheEntry {
  if (prev.corrupt) return { ...prev, revision };
  try {
    return { ...prev, revision, bytes: replaceResourceVersion(prev.bytes, revision) };
  } catch {
    return { ...prev, revision };
  }
}

export type CloseReason = 'consumer' | 'overflow' | 'cache-stopped' | 'error';

export class CacheWatcher implements AsyncIterable<WatchOutput> {
  private readonly queue: WatchOutput[] = [];
  private waiting: (() => void) | undefined;
  private closedReason: CloseReason | undefined;
  /** Live events that arrived while a replay from the store was still loading. */
  private held: CacheEvent[] | undefined;
  /** Every event up to this revision has been queued (or filtered out): safe bookmark value. */
  private progressRevision: number;
  /** Changes at or below this revision are not this watcher's to deliver. */
  private readonly startRevision: number;
  /** Callback-mode consumer (see consume()); the async iterator is the other mode. */
  private consumer: (() => void) | undefined;
  private consumerDue = false;
  private paused = false;

  constructor(
    readonly filter: EntryFilter,
    readonly capacity: number,
    startRevision: number,
    private readonly onClose: (w: CacheWatcher) => void,
    /** The cache's revision when the watch starts, if older than the start (a version not reached yet). */
    reachedRevision = startRevision,
    /**
     * The revision of the last batch the cache has finished handing out (its changes of this
     * watcher's resource included): read when a bookmark needs it, rather than the cache
     * telling every watcher of every resource after every batch.
     */
    private readonly clock?: { readonly revision: number },
  ) {
    this.progressRevision = Math.min(startRevision, reachedRevision);
    this.startRevision = startRevision;
  }

  get closed(): CloseReason | undefined {
    return this.closedReason;
  }

  /** Called by the cache for each change of the watched resource, in revision order. */
  deliver(ev: CacheEvent): void {
    if (this.closedReason || ev.revision <= this.startRevision) return;
    if (this.held) {
      this.held.push(ev);
      return;
    }
    this.route(ev, this.filter);
  }

  /**
   * As deliver, for a change the caller has already found within the watch's scope (its
   * namespace): `inScope` is the rest of the filter, undefined when that accepts everything.
   */
  deliverInScope(ev: CacheEvent, inScope: EntryFilter | undefined): void {
    if (this.closedReason || ev.revision <= this.startRevision) return;
    if (this.held) {
      this.held.push(ev);
      return;
    }
    this.route(ev, inScope);
  }

  /** Everything up to `revision` has been handed to this watcher (matching or not). */
  progress(revision: number): void {
    if (!this.held && revision > this.progressRevision) this.progressRevision = revision;
  }

  /** The progress revision, brought up to the cache's clock (not while a replay is loading). */
  private progressed(): number {
    if (this.clock) this.progress(this.clock.revision);
    return this.progressRevision;
  }

  /** Hold live events until a replay (loaded asynchronously) has been delivered. */
  hold(): void {
    this.held ??= [];
  }

  /**
   * Delivers replayed events (those after the start revision), then what was held meanwhile.
   * The cache guarantees replay and held events do not overlap: replay ends where holding began.
   */
  release(replay: readonly CacheEvent[]): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const ev of replay) if (ev.revision > this.startRevision) this.route(ev, this.filter);
    for (const ev of held) this.route(ev, this.filter);
  }

  /** Queues a synthetic ADDED (initial state) without filter transitions. */
  initial(entry: CacheEntry): void {
    if (this.filter(entry)) this.push({ type: 'ADDED', entry });
  }

  /** Queues a bookmark at the latest fully delivered revision, unless events are still pending. */
  bookmark(initialEventsEnd = false): boolean {
    // Never a version the store has not reached, nor one older than the start: a watch from a
    // future version gets bookmarks once the cache passes it (upstream's cacheWatcher likewise
    // sends no bookmark older than the requested version).
    const revision = this.progressed();
    if (this.closedReason || this.held || revision < this.startRevision) return false;
    this.push(initialEventsEnd ? { type: 'BOOKMARK', revision, initialEventsEnd } : { type: 'BOOKMARK', revision });
    return true;
  }

  /** The revision up to which this watcher has seen everything. */
  get revision(): number {
    return this.progressed();
  }

  /** Ends the stream with an ERROR output (for example 410 when history is gone). */
  fail(code: number, reason: string, message: string, details?: Readonly<Record<string, unknown>>): void {
    if (this.closedReason) return;
    this.queue.push(details ? { type: 'ERROR', code, reason, message, details } : { type: 'ERROR', code, reason, message });
    this.close('error');
  }

  // An unchanged event is queued as the cache's own object, so every watcher that receives it
  // holds the same output and consumers can recognise identical batches by identity.
  // `filter` undefined accepts everything (no call per event for a watch without selectors).
  private route(ev: CacheEvent, filter: EntryFilter | undefined): void {
    if (ev.revision > this.progressRevision) this.progressRevision = ev.revision;
    if (ev.type === 'DELETED') {
      if (!filter || filter(ev.entry)) this.push(ev);
      return;
    }
    const now = !filter || filter(ev.entry);
    const before = ev.prev !== undefined && (!filter || filter(ev.prev));
    // A change that moves an object into or out of the selection is an ADDED or DELETED for this watcher.
    if (now && before) this.push(ev.type === 'MODIFIED' ? ev : { type: 'MODIFIED', entry: ev.entry });
    else if (now) this.push(ev.type === 'ADDED' ? ev : { type: 'ADDED', entry: ev.entry });
    else if (before) this.push({ type: 'DELETED', entry: leftSelectionAt(ev.prev!, ev.revision) });
  }

  private push(out: WatchOutput): void {
    if (this.closedReason) return;
    if (this.queue.length >= this.capacity) {
      this.close('overflow');
      return;
    }
    this.queue.push(out);
    this.wakeInRound();
  }

  private wakeInRound(): void {
    if (this.consumer) {
      if (!this.consumerDue && !this.paused) {
        this.consumerDue = true;
        wakeInNextRound(this.runConsumer);
      }
      return;
    }
    const w = this.waiting;
    this.waiting = undefined;
    if (w) wakeInNextRound(w);
  }

  private readonly runConsumer = (): void => {
    this.consumerDue = false;
    if (!this.paused) this.consumer?.();
  };

  /** Wakes the consumer now (async mode) or in the next round (callback mode): used on close. */
  private wake(): void {
    if (this.consumer) {
      this.wakeInRound();
      return;
    }
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }

  /**
   * Callback mode, for consumers that write synchronously: `onReadable` runs in a delivery
   * round whenever outputs are queued or the watcher closed, and should drain(). Replaces the
   * async iterator (use one mode per watcher).
   */
  consume(onReadable: () => void): void {
    this.consumer = onReadable;
    if (this.queue.length > 0 || this.closedReason) this.wakeInRound();
  }

  /** Callback mode: stop calling the consumer (its socket is full); outputs keep queueing. */
  pause(): void {
    this.paused = true;
  }

  /** Callback mode: call the consumer again, in the next round if something is waiting. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.queue.length > 0 || this.closedReason) this.wakeInRound();
  }

  /** Stops delivery; the consumer drains what is queued (an ERROR stays last), then ends. */
  close(reason: CloseReason = 'consumer'): void {
    if (this.closedReason) return;
    this.closedReason = reason;
    if (reason === 'overflow') this.queue.length = 0;
    this.onClose(this);
    // A paused consumer (full socket) still gets its last round, so its stream ends.
    this.paused = false;
    this.wake();
  }

  /** Number of outputs waiting to be consumed. */
  get pending(): number {
    return this.queue.length;
  }

  /** Takes what is queued now without waiting (for batching writes). */
  drain(): WatchOutput[] {
    return this.queue.splice(0);
  }

  /** Resolves when something is queued or the watcher closes. */
  async ready(): Promise<void> {
    if (this.queue.length > 0 || this.closedReason) return;
    await new Promise<void>((resolve) => (this.waiting = resolve));
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchOutput> {
    for (;;) {
      await this.ready();
      const batch = this.drain();
      for (const out of batch) yield out;
      if (batch.length === 0 && this.closedReason) return;
    }
  }
}
