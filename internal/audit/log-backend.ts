// internal/audit/log-backend owns getting audit events from requests to the sink without
// letting either hold the other up without bound: a bounded queue in front of one writer.
//   batch:           a full queue drops the event at once and counts it
//                    (apiserver_audit_error_total{plugin="buffered"}, as upstream's buffered
//                    backend counts a blocked buffer);
//   blocking:        a full queue makes the request wait for room, at most --audit-log-blocking-timeout;
//                    then the event is dropped and counted (plugin="log");
//   blocking-strict: as blocking, and a RequestReceived event that could not be queued fails the
//                    request (apiserver_audit_requests_rejected_total), as upstream's mode does.
// Write errors count every event of the failed write (plugin="log"). Drops are also logged (at
// most once a second), so nothing is lost silently. The metrics carry upstream's names.
// Imports: log, audit/rotating-file (types), prom-client.

import { Counter, Registry } from 'prom-client';
import type { Logger } from '../log/logger.js';
import type { LineSink } from './rotating-file.js';

export type AuditMode = 'batch' | 'blocking' | 'blocking-strict';
export const AUDIT_MODES: readonly AuditMode[] = ['batch', 'blocking', 'blocking-strict'];

export class AuditMetrics {
  readonly events: Counter;
  readonly errors: Counter<'plugin'>;
  readonly levels: Counter<'level'>;
  readonly rejected: Counter;

  constructor(registry: Registry) {
    this.events = new Counter({ name: 'apiserver_audit_event_total', help: 'Counter of audit events generated and sent to the audit backend.', registers: [registry] });
    this.errors = new Counter({
      name: 'apiserver_audit_error_total',
      help: 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.',
      labelNames: ['plugin'],
      registers: [registry],
    });
    this.levels = new Counter({ name: 'apiserver_audit_level_total', help: 'Counter of policy levels for audit events (1 per request).', labelNames: ['level'], registers: [registry] });
    this.rejected = new Counter({ name: 'apiserver_audit_requests_rejected_total', help: 'Counter of apiserver requests rejected due to an error in audit logging backend.', registers: [registry] });
  }
}

export interface BackendOptions {
  mode: AuditMode;
  /** Events the queue holds. */
  bufferSize: number;
  /** batch: most events per write. */
  batchMaxSize: number;
  /** batch: longest a partial batch waits for more events. */
  batchMaxWaitMs: number;
  /** blocking modes: longest a request waits for room in a full queue. */
  blockingTimeoutMs: number;
  metrics: AuditMetrics;
  log: Logger;
}

interface Waiter {
  line: string;
  resolve(queued: boolean): void;
  timer: NodeJS.Timeout;
}

export class LogBackend {
  private queue: string[] = [];
  private head = 0;
  private readonly waiters: Waiter[] = [];
  private writing = false;
  private batchTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private idle: Array<() => void> = [];
  private lastDropLog = 0;
  private droppedSinceLog = 0;

  constructor(
    private readonly sink: LineSink,
    private readonly opts: BackendOptions,
  ) {}

  private get length(): number {
    return this.queue.length - this.head;
  }

  /**
   * Queues one serialized event (a JSON line without its newline). True when queued; false when
   * dropped (counted and logged); a promise when the request must wait for room (blocking modes).
   */
  enqueue(line: string): boolean | Promise<boolean> {
    this.opts.metrics.events.inc();
    if (this.closed) return this.drop('log', 1, 'audit backend is closed');
    if (this.length < this.opts.bufferSize && this.waiters.length === 0) {
      this.queue.push(line);
      this.kick();
      return true;
    }
    if (this.opts.mode === 'batch') return this.drop('buffered', 1, 'audit buffer queue blocked');
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        line,
        resolve,
        timer: setTimeout(() => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          resolve(this.drop('log', 1, `audit queue full for ${this.opts.blockingTimeoutMs}ms`));
        }, this.opts.blockingTimeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  /** Writes what is queued and closes the sink; waits at most timeoutMs for a stuck sink. */
  async close(timeoutMs: number): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    this.kick(true);
    const drained = new Promise<void>((r) => {
      if (!this.writing && this.length === 0 && this.waiters.length === 0) r();
      else this.idle.push(r);
    });
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = await Promise.race([drained.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutMs)))]);
    clearTimeout(timer);
    if (gaveUp) {
      const left = this.length + this.waiters.length;
      for (const w of this.waiters.splice(0)) {
        clearTimeout(w.timer);
        w.resolve(false);
      }
      this.queue = [];
      this.head = 0;
      if (left > 0) this.drop('log', left, 'audit sink did not drain before shutdown');
      this.opts.log.warn('audit log did not drain before shutdown', { left });
      return; // the stuck write still holds the sink; closing it under the write is not safe
    }
    await this.sink.close().catch((e: unknown) => this.opts.log.warn('closing the audit log failed', { error: String(e) }));
  }

  private drop(plugin: 'log' | 'buffered', n: number, why: string): false {
    this.opts.metrics.errors.inc({ plugin }, n);
    this.droppedSinceLog += n;
    const now = Date.now();
    if (now - this.lastDropLog >= 1000) {
      this.opts.log.warn('audit events dropped', { reason: why, dropped: this.droppedSinceLog, mode: this.opts.mode });
      this.lastDropLog = now;
      this.droppedSinceLog = 0;
    }
    return false;
  }

  private kick(now = false): void {
    if (this.writing || this.length === 0) return;
    if (this.opts.mode === 'batch' && !now && !this.closed && this.length < this.opts.batchMaxSize && this.opts.batchMaxWaitMs > 0) {
      this.batchTimer ??= setTimeout(() => {
        this.batchTimer = undefined;
        this.kick(true);
      }, this.opts.batchMaxWaitMs);
      return;
    }
    clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    void this.writeLoop();
  }

  private async writeLoop(): Promise<void> {
    this.writing = true;
    try {
      while (this.length > 0) {
        const max = this.opts.mode === 'batch' ? Math.max(1, this.opts.batchMaxSize) : this.length;
        const n = Math.min(max, this.length);
        const lines = this.queue.slice(this.head, this.head + n);
        this.head += n;
        if (this.head > 1024 && this.head * 2 > this.queue.length) {
          this.queue = this.queue.slice(this.head);
          this.head = 0;
        }
        this.admitWaiters();
        await this.writeLines(lines);
        this.admitWaiters();
      }
    } finally {
      this.writing = false;
    }
    if (this.length > 0) this.kick(this.closed);
    else if (this.waiters.length === 0) for (const r of this.idle.splice(0)) r();
  }

  /** Moves waiting requests' events into the room that writing made. */
  private admitWaiters(): void {
    while (this.waiters.length > 0 && this.length < this.opts.bufferSize) {
      const w = this.waiters.shift()!;
      clearTimeout(w.timer);
      this.queue.push(w.line);
      w.resolve(true);
    }
  }

  /**
   * One write per call when it fits the sink's size limit; otherwise the lines are cut so each
   * write is whole lines, letting the sink rotate between them. A line the sink refuses is
   * counted as an error; the others are still written.
   */
  private async writeLines(lines: string[]): Promise<void> {
    const limit = (this.sink as { limit?: number }).limit ?? Infinity;
    let part: Buffer[] = [];
    let partBytes = 0;
    const flush = async () => {
      if (part.length === 0) return;
      const chunk = part.length === 1 ? part[0]! : Buffer.concat(part, partBytes);
      const count = part.length;
      part = [];
      partBytes = 0;
      try {
        await this.sink.write(chunk);
      } catch (e) {
        this.drop('log', count, `writing the audit log failed: ${(e as Error).message}`);
      }
    };
    for (const line of lines) {
      const b = Buffer.from(`${line}\n`);
      const written = (this.sink as { written?: number }).written ?? 0;
      if (partBytes > 0 && (partBytes + b.length > limit || written + partBytes + b.length > limit)) await flush();
      part.push(b);
      partBytes += b.length;
    }
    await flush();
  }
}
