// internal/store/etcd-store owns the RevisionStore on an external etcd cluster (--storage=etcd):
// every key lives at `<etcd prefix><our key>` with our stored bytes as the value unchanged; the
// store revision is etcd's revision (resourceVersion = mod revision, as upstream); a Command is
// one etcd Txn (mod-revision compares, puts and deletes); older revisions are read through
// etcd's MVCC; one etcd watch over the prefix, resumed from the last delivered revision after
// any break, feeds subscribers, and execute() resolves once that watch has delivered the
// write's revision. Compaction is announced to every server through a key under the prefix
// (the compacting server writes it, then compacts), as upstream's compactor does.
// Imports: etcd3, types, layout (key validity).

import { Etcd3, type IKeyValue, type IOptions, type IRequestOp, type IWatchResponse } from 'etcd3';
import { isValidKey } from './layout.js';
import {
  StoreError,
  type AppliedBatch,
  type Command,
  type KeyValue,
  type RangeOptions,
  type RangeResult,
  type RevisionStore,
  type StoreEvent,
  type TxnResult,
} from './types.js';

export interface EtcdStoreOptions {
  /** Client URLs (https://host:port). */
  servers: string[];
  /** Prepended to every key (upstream's --etcd-prefix). */
  prefix: string;
  /** PEM contents; without `ca` the servers are dialled over plain HTTP/2. */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  /** How long one unary call may take before it fails (a down etcd answers fast with 503). */
  requestTimeoutMs?: number;
  /** How long execute() waits for the local watch to deliver a committed write. */
  watchWaitMs?: number;
}

/**
 * Keys of the store itself, after the prefix and outside our key space (ours start with '/'):
 * the compaction mark every server watches, and the key a server writes when its watch resumes
 * from an older revision (its event marks the end of the catch-up).
 */
/**
 * A fault-handling policy that runs a call once. etcd3 types the slot as a cockatiel policy, of
 * which it calls only `execute(fn)`; cockatiel is not a dependency of ours for this one object.
 */
type GlobalPolicy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;
const NO_RETRY = { execute: (fn: () => unknown) => fn() } as unknown as GlobalPolicy;

const COMPACT_KEY = '#compact_rev_key';
const SYNC_KEY = '#watch_sync';

/** How long the watch must be quiet before etcd is asked for a progress mark. */
const PROGRESS_QUIET_MS = 100;

type Stream = NodeJS.ReadWriteStream & { cancel?: () => void; write(req: unknown): boolean };

export class EtcdRevisionStore implements RevisionStore {
  private readonly listeners = new Set<(batch: AppliedBatch) => void>();
  private readonly waiters: Array<{ revision: number; resolve: () => void }> = [];
  /** Revision up to which the watch has delivered everything under the prefix. */
  private applied: number;
  /** Revision of the last event the watch delivered (what eventsSince replays up to). */
  private lastEvent = 0;
  private compacted = 0;
  /** Mod revision of the compact key as last seen (the compare of the next compaction). */
  private compactKeyVersion = 0;
  private closed = false;
  private watch: Stream | undefined;
  private watchUp = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private backoffMs = 50;
  private readonly keyPrefix: Buffer;
  private readonly end: Buffer;
  private readonly requestTimeoutMs: number;
  private readonly watchWaitMs: number;
  private onWatchCreated: (() => void) | undefined;
  /** Why the watch is not delivering, when it is not (the `etcd` readyz check reports it). */
  watchError: string | undefined = 'watch not started';

  private constructor(
    readonly client: Etcd3,
    private readonly options: EtcdStoreOptions,
    revision: number,
  ) {
    this.applied = revision;
    this.keyPrefix = Buffer.from(options.prefix, 'utf8');
    this.end = prefixEnd(this.keyPrefix);
    this.requestTimeoutMs = options.requestTimeoutMs ?? 5000;
    this.watchWaitMs = options.watchWaitMs ?? 10_000;
  }

  /** Connects, reads the current revision and the compaction mark, and starts the watch. */
  static async open(options: EtcdStoreOptions): Promise<EtcdRevisionStore> {
    const timeout = options.requestTimeoutMs ?? 5000;
    const client = new Etcd3({
      hosts: options.servers,
      ...(options.tls?.ca
        ? { credentials: { rootCertificate: options.tls.ca, ...(options.tls.cert ? { certChain: options.tls.cert } : {}), ...(options.tls.key ? { privateKey: options.tls.key } : {}) } }
        : {}),
      dialTimeout: timeout,
      // No retries: etcd3's default retries a failed call up to three times, and a transaction
      // whose first try was applied before the connection broke would come back as a failed
      // compare (a 409 for the client's own create). A failure is answered once, as 503 or 504.
      faultHandling: { global: NO_RETRY },
      // Unary calls fail within the bound (503 to the client) instead of hanging on a dead etcd;
      // the watch stream has no deadline.
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeout }),
    });
    try {
      const prefix = Buffer.from(options.prefix, 'utf8');
      const mark = await client.kv.range({ key: Buffer.concat([prefix, Buffer.from(COMPACT_KEY)]) });
      const store = new EtcdRevisionStore(client, options, Number(mark.header.revision));
      const kv = mark.kvs[0];
      if (kv) {
        store.compacted = Number(kv.value.toString('utf8')) || 0;
        store.compactKeyVersion = Number(kv.mod_revision);
      }
      // Served only once the watch is in place: a write before it would cost a catch-up.
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new StoreError('STORE_UNAVAILABLE', `the etcd watch was not established within ${timeout} ms: ${store.watchError}`)), timeout);
        store.onWatchCreated = () => {
          clearTimeout(timer);
          resolve();
        };
        store.startWatch();
      }).catch(async (e: unknown) => {
        await store.close();
        throw e;
      });
      store.onWatchCreated = undefined;
      return store;
    } catch (e) {
      client.close();
      throw mapError(e, 'connecting to etcd');
    }
  }

  private etcdKey(key: string): Buffer {
    return Buffer.concat([this.keyPrefix, Buffer.from(key, 'utf8')]);
  }

  private ourKey(key: Buffer): string {
    return key.subarray(this.keyPrefix.length).toString('utf8');
  }

  private toKv(kv: IKeyValue, deleted = false): KeyValue {
    return {
      key: this.ourKey(kv.key),
      value: deleted ? new Uint8Array(0) : new Uint8Array(kv.value.buffer, kv.value.byteOffset, kv.value.byteLength),
      createRevision: Number(kv.create_revision),
      modRevision: Number(kv.mod_revision),
      version: Number(kv.version),
    };
  }

  currentRevision(): number {
    return this.applied;
  }

  /**
   * etcd's current revision (a count-only range: linearizable, one round trip), once the watch
   * has delivered it: upstream's consistent read from cache.
   */
  async consistentRevision(): Promise<number> {
    this.assertOpen();
    let revision: number;
    try {
      const r = await this.client.kv.range({ key: this.keyPrefix, range_end: this.end, count_only: true, limit: 1 });
      revision = Number(r.header.revision);
    } catch (e) {
      throw mapError(e, 'reading the current revision', 'STORE_READ_UNAVAILABLE');
    }
    await this.waitApplied(revision, 'STORE_READ_UNAVAILABLE');
    return revision;
  }

  assertWritable(): void {
    this.assertOpen();
  }

  compactedRevision(): number {
    return this.compacted;
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError('STORE_CLOSED', 'store is closed');
  }

  private checkRevision(revision: number | undefined): number {
    this.assertOpen();
    const current = this.applied;
    if (!revision) return current;
    if (revision > current) {
      throw new StoreError('STORE_FUTURE_REVISION', `revision ${revision} is newer than the current revision ${current}`, { revision, currentRevision: current });
    }
    if (revision < this.compacted) {
      throw new StoreError('STORE_COMPACTED', `revision ${revision} has been compacted (compacted revision ${this.compacted})`, { revision, compactedRevision: this.compacted });
    }
    return revision;
  }

  async get(key: string, revision?: number): Promise<KeyValue | undefined> {
    const at = this.checkRevision(revision);
    try {
      const r = await this.client.kv.range({ key: this.etcdKey(key), revision: at });
      const kv = r.kvs[0];
      return kv ? this.toKv(kv) : undefined;
    } catch (e) {
      throw this.readError(e, at);
    }
  }

  async range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    const at = this.checkRevision(options.revision);
    const start = options.after !== undefined ? Buffer.concat([this.etcdKey(options.after), Buffer.from([0])]) : this.etcdKey(prefix);
    const end = prefix === '' ? this.end : prefixEnd(this.etcdKey(prefix));
    const limit = options.limit && options.limit > 0 ? options.limit : 0;
    try {
      const r = await this.client.kv.range({ key: start, range_end: end, revision: at, limit });
      const kvs = r.kvs.filter((kv) => !this.isInternalKey(kv.key)).map((kv) => this.toKv(kv));
      const result: RangeResult = { kvs, more: r.more, revision: at };
      if (options.count) result.count = Number(r.count);
      return result;
    } catch (e) {
      throw this.readError(e, at);
    }
  }

  private isCompactKey(key: Buffer): boolean {
    return key.length === this.keyPrefix.length + COMPACT_KEY.length && key.subarray(this.keyPrefix.length).toString('utf8') === COMPACT_KEY;
  }

  /** The store's own keys (compaction mark, watch sync), never shown as data. */
  private isInternalKey(key: Buffer): boolean {
    return key[this.keyPrefix.length] === 0x23; // '#'
  }

  private readError(e: unknown, at: number): StoreError {
    const err = mapError(e, `reading at revision ${at}`, 'STORE_READ_UNAVAILABLE');
    if (err.code === 'STORE_COMPACTED') this.compacted = Math.max(this.compacted, at + 1);
    return err;
  }

  /**
   * Events under `prefix` after `afterRevision` up to the current revision, replayed by a
   * watch of the whole store prefix from that revision: it ends at the last event the main
   * watch delivered, which that watch is certain to reach.
   */
  async eventsSince(prefix: string, afterRevision: number): Promise<StoreEvent[]> {
    this.checkRevision(afterRevision || undefined);
    if (afterRevision < this.compacted) {
      throw new StoreError('STORE_COMPACTED', `revision ${afterRevision} has been compacted`, { revision: afterRevision, compactedRevision: this.compacted });
    }
    const upTo = this.lastEvent;
    const at = this.applied;
    if (upTo <= afterRevision) return [];
    const events: StoreEvent[] = [];
    const stream = (await this.client.watchClient.watch()) as unknown as Stream;
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new StoreError('STORE_READ_UNAVAILABLE', 'replaying events from etcd timed out')), this.watchWaitMs);
        const done = (err?: Error) => {
          clearTimeout(timer);
          if (err) reject(err);
          else resolve();
        };
        stream.on('error', (e: unknown) => done(mapError(e, 'replaying events')));
        stream.on('data', (res: IWatchResponse) => {
          if (res.compact_revision && Number(res.compact_revision) > 0) {
            this.compacted = Math.max(this.compacted, Number(res.compact_revision));
            done(new StoreError('STORE_COMPACTED', `revision ${afterRevision} has been compacted`, { revision: afterRevision, compactedRevision: Number(res.compact_revision) }));
            return;
          }
          if (res.canceled) return done(new StoreError('STORE_READ_UNAVAILABLE', `etcd ended the replay: ${res.cancel_reason}`));
          let last = 0;
          for (const ev of res.events ?? []) {
            last = Number(ev.kv.mod_revision);
            if (last > at || this.isInternalKey(ev.kv.key)) continue;
            const key = this.ourKey(ev.kv.key);
            if (!key.startsWith(prefix)) continue;
            events.push(this.toEvent(ev.type === 'Delete' ? 'delete' : 'put', ev.kv, ev.prev_kv));
          }
          if (last >= upTo) done();
        });
        stream.write({ create_request: { key: this.keyPrefix, range_end: this.end, start_revision: afterRevision + 1, prev_kv: true } });
      });
    } finally {
      stream.cancel?.();
    }
    return events;
  }

  private toEvent(type: 'put' | 'delete', kv: IKeyValue, prev: IKeyValue | undefined): StoreEvent {
    const ev: StoreEvent = { type, kv: this.toKv(kv, type === 'delete') };
    if (prev && prev.key && prev.key.length > 0) ev.prevKv = this.toKv(prev);
    return ev;
  }

  async execute(command: Command): Promise<TxnResult> {
    this.assertOpen();
    if (command.type === 'compact') return this.compact(command.revision);
    const seen = new Set<string>();
    for (const op of command.ops) {
      // etcd refuses two ops on one key in a txn; the level store does the same check.
      if (!isValidKey(op.key) || seen.has(op.key)) throw new Error(`invalid or duplicate key in command: ${op.key}`);
      seen.add(op.key);
    }
    const success: IRequestOp[] = command.ops.map((op) =>
      op.type === 'put'
        ? { request_put: { key: this.etcdKey(op.key), value: Buffer.from(op.value.buffer, op.value.byteOffset, op.value.byteLength) } }
        : { request_delete_range: { key: this.etcdKey(op.key) } },
    );
    // On failure the compared keys are read back in the same txn: etcd does not say which failed.
    const failure: IRequestOp[] = command.compares.map((c) => ({ request_range: { key: this.etcdKey(c.key), keys_only: true } }));
    let res;
    try {
      res = await this.client.kv.txn({
        compare: command.compares.map((c) => ({ key: this.etcdKey(c.key), target: 'Mod' as const, result: 'Equal' as const, mod_revision: c.modRevision })),
        success,
        failure,
      });
    } catch (e) {
      // A deadline passed after the request left: etcd may have applied it.
      throw mapError(e, 'writing', 'STORE_NOT_PROPOSED');
    }
    const revision = Number(res.header.revision);
    // Subscribers see the write before the caller does (the contract of subscribe()).
    await this.waitApplied(revision, 'STORE_OUTCOME_UNKNOWN');
    if (res.succeeded) return { succeeded: true, revision };
    const failed =
      command.compares.find((c, i) => {
        const kv = res.responses[i]?.response_range?.kvs[0];
        return (kv ? Number(kv.mod_revision) : 0) !== c.modRevision;
      }) ?? command.compares[0];
    const failedKey = failed?.key;
    return failedKey !== undefined ? { succeeded: false, revision, failedKey } : { succeeded: false, revision };
  }

  /**
   * Announces the compaction (every server's watch sees the compact key) and compacts etcd's
   * history at or below `revision`. The compare on the key makes a second compactor that saw
   * an older mark give way, as upstream's.
   */
  async compact(revision: number): Promise<TxnResult> {
    this.assertOpen();
    const key = Buffer.concat([this.keyPrefix, Buffer.from(COMPACT_KEY)]);
    let res;
    try {
      res = await this.client.kv.txn({
        compare: [{ key, target: 'Mod', result: 'Equal', mod_revision: this.compactKeyVersion }],
        success: [{ request_put: { key, value: Buffer.from(String(revision)) } }],
        failure: [{ request_range: { key } }],
      });
      if (res.succeeded) await this.client.kv.compact({ revision, physical: false });
    } catch (e) {
      throw mapError(e, 'compacting');
    }
    const after = Number(res.header.revision);
    await this.waitApplied(after, 'STORE_OUTCOME_UNKNOWN');
    return { succeeded: res.succeeded, revision: after };
  }

  subscribe(listener: (batch: AppliedBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether the watch is delivering (the `etcd` readyz check). */
  get watching(): boolean {
    return this.watchUp;
  }

  /** Resolves once the watch has delivered `revision`; fails with `code` after watchWaitMs. */
  private waitApplied(revision: number, code: 'STORE_READ_UNAVAILABLE' | 'STORE_OUTCOME_UNKNOWN'): Promise<void> {
    if (revision <= this.applied) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter = { revision, resolve: () => (clearTimeout(timer), resolve()) };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new StoreError(code, `the etcd watch did not deliver revision ${revision} within ${this.watchWaitMs} ms (at ${this.applied}${this.watchError ? `: ${this.watchError}` : ''})`, { retryAfterSeconds: 1 }));
      }, this.watchWaitMs);
      this.waiters.push(waiter);
      // Nothing under the prefix may change up to `revision` (a write elsewhere in etcd, a
      // failed txn): etcd's progress answer moves the watch there.
      this.requestProgressSoon();
    });
  }

  private progressTimer: NodeJS.Timeout | undefined;
  /** When the watch last delivered events, and when progress was last asked for. */
  private lastDataAt = 0;
  private progressAskedAt = 0;
  /**
   * Whether the watch has caught up since it was (re)created: until then a progress answer
   * may run ahead of queued events (see requestProgressSoon), so none is taken.
   */
  private caughtUp = false;
  /** Revision of the sync key write that ends the catch-up. */
  private syncRevision = Infinity;

  /**
   * Asks etcd for a progress mark once the watch has been quiet for PROGRESS_QUIET_MS. etcd
   * 3.4 before 3.4.31 answers a progress request at once with the store's revision even while
   * events up to it are still queued for the stream; asking only when nothing has arrived for a
   * while, and ignoring an answer that events overtook, keeps such an answer from skipping them.
   */
  private requestProgressSoon(): void {
    if (this.progressTimer) return;
    this.progressTimer = setTimeout(() => {
      this.progressTimer = undefined;
      if (!this.waiters.some((w) => w.revision > this.applied)) return;
      if (this.watch && this.watchUp && this.caughtUp && performance.now() - this.lastDataAt >= PROGRESS_QUIET_MS) {
        this.progressAskedAt = performance.now();
        this.watch.write({ progress_request: {} });
      }
      this.requestProgressSoon();
    }, PROGRESS_QUIET_MS);
    this.progressTimer.unref();
  }

  private advance(batch: AppliedBatch): void {
    this.applied = batch.revision;
    for (const listener of this.listeners) listener(batch);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (w.revision <= this.applied) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  /** The watch of the whole prefix from the revision after the last delivered one. */
  private startWatch(): void {
    if (this.closed) return;
    void (this.client.watchClient.watch() as unknown as Promise<Stream>)
      .then((stream) => {
        if (this.closed) return stream.cancel?.();
        this.watch = stream;
        let broken = false;
        const broke = (why: string) => {
          if (broken) return;
          broken = true;
          this.watchUp = false;
          this.caughtUp = false;
          this.syncRevision = Infinity;
          this.watchError = why;
          if (this.watch === stream) this.watch = undefined;
          stream.cancel?.();
          this.scheduleReconnect();
        };
        stream.on('error', (e: unknown) => broke(`watch failed: ${e instanceof Error ? e.message : String(e)}`));
        stream.on('end', () => broke('watch stream ended'));
        stream.on('data', (res: IWatchResponse) => {
          if (broken) return;
          if (res.created && !res.canceled) {
            this.watchUp = true;
            this.watchError = undefined;
            this.backoffMs = 50;
            // Revisions from the start up to etcd's current one may still be queued: a write of
            // the sync key lands after them, and its event ends the catch-up.
            this.caughtUp = Number(res.header.revision) < start;
            if (!this.caughtUp) void this.writeSyncKey(stream);
            this.onWatchCreated?.();
            return;
          }
          if (res.compact_revision && Number(res.compact_revision) > 0) {
            // Our next revision is compacted away: events are lost, so subscribers reload from a
            // range at the current revision (as upstream's cacher relists) and the watch resumes there.
            this.compacted = Math.max(this.compacted, Number(res.compact_revision));
            void this.resetFromCurrent().finally(() => broke(`watch compacted at ${res.compact_revision}`));
            return;
          }
          if (res.canceled) return broke(`etcd cancelled the watch: ${res.cancel_reason}`);
          this.onWatchResponse(res);
        });
        const start = this.applied + 1;
        stream.write({
          create_request: { key: this.keyPrefix, range_end: this.end, start_revision: start, prev_kv: true, progress_notify: true },
        });
      })
      .catch((e: unknown) => {
        this.watchUp = false;
        this.watchError = `watch failed: ${e instanceof Error ? e.message : String(e)}`;
        this.scheduleReconnect();
      });
  }

  private async writeSyncKey(stream: Stream): Promise<void> {
    const key = Buffer.concat([this.keyPrefix, Buffer.from(SYNC_KEY)]);
    while (!this.closed && this.watch === stream && !this.caughtUp) {
      try {
        const r = await this.client.kv.put({ key, value: Buffer.alloc(0) });
        this.syncRevision = Math.min(this.syncRevision, Number(r.header.revision));
        if (this.applied >= this.syncRevision) this.caughtUp = true;
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  private async resetFromCurrent(): Promise<void> {
    const r = await this.client.kv.range({ key: this.keyPrefix, range_end: this.end, count_only: true });
    const revision = Number(r.header.revision);
    const batch: AppliedBatch = { revision, events: [], reset: true, compactedRevision: this.compacted };
    this.lastEvent = revision;
    this.advance(batch);
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.startWatch();
    }, this.backoffMs);
    this.reconnectTimer.unref();
    this.backoffMs = Math.min(this.backoffMs * 2, 1000);
  }

  /** One response: its events grouped by revision, one batch each; or a progress mark. */
  private onWatchResponse(res: IWatchResponse): void {
    const events = res.events ?? [];
    if (events.length === 0) {
      // Progress: everything up to the header revision under the prefix was delivered.
      const revision = Number(res.header.revision);
      if (revision > this.applied && this.caughtUp && this.lastDataAt < this.progressAskedAt) this.advance({ revision, events: [] });
      return;
    }
    this.lastDataAt = performance.now();
    let batch: AppliedBatch | undefined;
    for (const ev of events) {
      const revision = Number(ev.kv.mod_revision);
      // A resumed watch never repeats what was delivered (it starts after `applied`).
      if (revision <= this.applied) continue;
      if (batch && batch.revision !== revision) {
        this.advance(batch);
        batch = undefined;
      }
      batch ??= { revision, events: [] };
      this.lastEvent = revision;
      if (revision >= this.syncRevision) {
        this.caughtUp = true;
        this.syncRevision = Infinity;
      }
      if (this.isInternalKey(ev.kv.key) && !this.isCompactKey(ev.kv.key)) continue;
      if (this.isCompactKey(ev.kv.key)) {
        if (ev.type !== 'Delete') {
          this.compacted = Math.max(this.compacted, Number(ev.kv.value.toString('utf8')) || 0);
          this.compactKeyVersion = revision;
          batch.compactedRevision = this.compacted;
        }
        continue;
      }
      batch.events.push(this.toEvent(ev.type === 'Delete' ? 'delete' : 'put', ev.kv, ev.prev_kv));
    }
    if (batch) this.advance(batch);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.progressTimer);
    this.watch?.cancel?.();
    for (const w of this.waiters.splice(0)) w.resolve();
    this.client.close();
  }
}

/** The first key after every key starting with `prefix` (etcd's range_end for a prefix). */
function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]!++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/**
 * etcd's and gRPC's errors as StoreErrors: compacted and future revisions by their codes, an
 * unreachable or slow etcd as `unavailable` (503/504 to the client) with its message.
 */
export function mapError(e: unknown, what: string, unavailable: 'STORE_UNAVAILABLE' | 'STORE_READ_UNAVAILABLE' | 'STORE_NOT_PROPOSED' = 'STORE_UNAVAILABLE'): StoreError {
  if (e instanceof StoreError) return e;
  const message = e instanceof Error ? e.message : String(e);
  if (/required revision has been compacted/.test(message)) return new StoreError('STORE_COMPACTED', `etcd: ${message}`);
  if (/required revision is a future revision/.test(message)) return new StoreError('STORE_FUTURE_REVISION', `etcd: ${message}`);
  const deadline = /deadline|DEADLINE_EXCEEDED/i.test(message) || (e instanceof Error && e.name === 'GRPCDeadlineExceededError');
  if (deadline && unavailable === 'STORE_NOT_PROPOSED') return new StoreError('STORE_OUTCOME_UNKNOWN', `etcd did not answer ${what} in time: ${message}`, { retryAfterSeconds: 1 });
  return new StoreError(unavailable, `etcd unavailable while ${what}: ${message}`, { retryAfterSeconds: 1 });
}
