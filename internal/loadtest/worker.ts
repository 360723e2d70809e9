// internal/loadtest/worker owns what one load-tool worker process does: keep its watchers on
// the namespace (bench/load's WatchFleet, one per target) and send its share of the request
// mix over keep-alive connections to the targets, closed loop or paced, for the run's duration,
// counting outcomes per operation, per error and per target. The objects it updates, gets and
// deletes are its own (it created them), so their last resourceVersion is known and a conflict
// means another of its connections updated the object first. Imports: bench/load (exchange,
// agent, templates, watch fleet), bench/support/latency, loadtest/protocol.

import type { Agent } from 'node:https';
import { exchange, tlsAgent, type Exchange } from '../../bench/load/http-load.js';
import { wallClockMs, type WatchResult } from '../../bench/load/protocol.js';
import { compileTemplate, type RenderedRequest } from '../../bench/load/request-template.js';
import { SENT_AT_ANNOTATION, WatchFleet } from '../../bench/load/watch-load.js';
import { mergeWatchResults } from '../../bench/load/merge.js';
import { LatencyRecorder } from '../../bench/support/latency.js';
import { REQUEST_OPS, type RequestOp } from './options.js';
import type { ErrorFigures, Progress, WorkerJob, WorkerLoadResult } from './protocol.js';

/** The label every object of a run carries (its value: the run id). */
export const RUN_LABEL = 'clusterd-load/run';
const RESOURCE_VERSION = /"resourceVersion":"([^"]+)"/;
/** An open-loop request starting later than this after its scheduled time is late. */
const LATE_MS = 5;

interface Live {
  name: string;
  rv: string;
  /** Requests on it in flight (a delete takes only an idle object). */
  busy: number;
}

interface Outcome {
  kind: 'ok' | 'conflict' | 'error';
  /** Error key: "<status> <reason>" or a network error code. */
  key?: string;
  message?: string;
}

export class Worker {
  private readonly fleets: { fleet: WatchFleet; established: number }[] = [];
  private readonly agents: Agent[];
  private readonly bases: URL[];
  private readonly live: Live[] = [];
  private readonly liveIndex = new Map<string, number>();
  private readonly latency = Object.fromEntries(REQUEST_OPS.map((op) => [op, new LatencyRecorder()])) as Record<RequestOp, LatencyRecorder>;
  private readonly counts = Object.fromEntries(REQUEST_OPS.map((op) => [op, { requests: 0, ok: 0, conflicts: 0, errors: 0 }])) as Record<
    RequestOp,
    { requests: number; ok: number; conflicts: number; errors: number }
  >;
  private readonly errors: Record<string, ErrorFigures> = {};
  private readonly perTarget: { requests: number; errors: number }[];
  private readonly renderCreate: (n: number) => RenderedRequest;
  private readonly payload: string;
  private readonly cumulative: number[];
  private readonly totalWeight: number;
  private pendingAcks: [number, number][] = [];
  private nextName = 0;
  private late = 0;
  private substituted = 0;
  private stopAt = Infinity;
  private updateSeq = 0;

  constructor(private readonly job: WorkerJob) {
    this.bases = job.targets.map((t) => new URL(t.server));
    const perTargetConnections = job.targets.map((_, t) => countFor(t, job.firstConnection, job.connections, job.targets.length));
    this.agents = job.targets.map((t, i) => tlsAgent(t.tls, Math.max(1, perTargetConnections[i]!)));
    this.perTarget = job.targets.map(() => ({ requests: 0, errors: 0 }));
    this.payload = 'x'.repeat(job.objectSize);
    const ns = job.namespace;
    const labels = JSON.stringify({ [RUN_LABEL]: job.runId, 'app.kubernetes.io/managed-by': 'clusterd-load' });
    this.renderCreate = compileTemplate({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/configmaps`,
      body: {
        template:
          `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"load-${job.runId}-${job.index}-{n}","labels":${labels},` +
          `"annotations":{"${SENT_AT_ANNOTATION}":"{ts}"}},"data":{"payload":"${this.payload}"}}`,
      },
    });
    let acc = 0;
    this.cumulative = REQUEST_OPS.map((op) => (acc += job.mix[op]));
    this.totalWeight = acc;
  }

  /** Opens the watchers; resolves with how many are established. */
  async openWatchers(): Promise<{ established: number; failed: number; firstError?: string }> {
    const { job } = this;
    const byTarget = job.targets.map((_, t) => countFor(t, job.firstWatcher, job.watchers, job.targets.length));
    let established = 0;
    let failed = 0;
    let firstError: string | undefined;
    await Promise.all(
      job.targets.map(async (target, t) => {
        if (byTarget[t] === 0) return;
        const fleet = new WatchFleet({
          kind: 'watch',
          baseUrl: target.server,
          tls: target.tls,
          headers: target.headers,
          watchers: byTarget[t]!,
          // Only this run's objects: a shared namespace (or a controller's objects in a new one, such
          // as the root CA ConfigMap) must not count as the run's events.
          path: `/api/v1/namespaces/${job.namespace}/configmaps?watch=1&resourceVersion=${encodeURIComponent(job.watchFrom)}&labelSelector=${encodeURIComponent(`${RUN_LABEL}=${job.runId}`)}`,
          protocol: 'http2',
          streamsPerSession: 100,
        });
        const r = await fleet.open();
        this.fleets.push({ fleet, established: r.established });
        established += r.established;
        failed += r.failed;
        firstError ??= r.firstError;
      }),
    );
    return { established, failed, ...(firstError ? { firstError } : {}) };
  }

  /** Acknowledged writes of every worker: [resourceVersion, wall-clock ms]. */
  acks(acks: [number, number][]): void {
    for (const f of this.fleets) f.fleet.acks(acks);
  }

  stop(): void {
    this.stopAt = Math.min(this.stopAt, performance.now());
  }

  progress(): Progress {
    let requests = 0;
    let ok = 0;
    let conflicts = 0;
    let errors = 0;
    for (const c of Object.values(this.counts)) {
      requests += c.requests;
      ok += c.ok;
      conflicts += c.conflicts;
      errors += c.errors;
    }
    return { requests, ok, conflicts, errors, watchEvents: this.fleets.reduce((n, f) => n + f.fleet.received, 0) };
  }

  /** Takes the acknowledgements gathered since the last call. */
  takeAcks(): [number, number][] {
    const a = this.pendingAcks;
    this.pendingAcks = [];
    return a;
  }

  /** Sends the mix for the job's duration; resolves once every request has been answered. */
  async run(): Promise<WorkerLoadResult> {
    const { job } = this;
    const startedAt = wallClockMs();
    const t0 = performance.now();
    this.stopAt = Math.min(this.stopAt, t0 + job.durationMs);
    let scheduled = 0;
    const connection = async (i: number) => {
      const target = (job.firstConnection + i) % job.targets.length;
      for (;;) {
        if (job.ratePerSec > 0) {
          const due = t0 + (scheduled++ * 1000) / job.ratePerSec;
          if (due >= this.stopAt) return;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          if (performance.now() >= this.stopAt) return;
          if (performance.now() - due > LATE_MS) this.late++;
        } else if (performance.now() >= this.stopAt) return;
        await this.one(target);
      }
    };
    await Promise.all(Array.from({ length: job.connections }, (_, i) => connection(i)));
    const endedAt = wallClockMs();
    for (const a of this.agents) a.destroy();
    return {
      ops: Object.fromEntries(REQUEST_OPS.map((op) => [op, { ...this.counts[op], latency: this.latency[op].toJSON() }])) as WorkerLoadResult['ops'],
      errors: this.errors,
      targets: this.perTarget,
      late: this.late,
      substitutedCreates: this.substituted,
      startedAt,
      endedAt,
    };
  }

  /**
   * Closes the watchers once each has received `perWatcherEvents` events and `perWatcher`
   * deliveries of timed writes, or `drainMs` passed. The fleets count only the timed ones
   * (ADDED, MODIFIED), so the deletes' events are waited for here first.
   */
  async finishWatchers(perWatcher: number, perWatcherEvents: number, drainMs: number): Promise<WatchResult | null> {
    if (!this.fleets.length) return null;
    const deadline = performance.now() + drainMs;
    const allIn = () => this.fleets.every((f) => f.fleet.received >= perWatcherEvents * f.established);
    while (!allIn() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const left = Math.max(0, deadline - performance.now());
    const results = await Promise.all(this.fleets.map((f) => f.fleet.finish(perWatcher * f.established, left)));
    return mergeWatchResults(results);
  }

  private pick(): RequestOp {
    const x = Math.random() * this.totalWeight;
    const i = this.cumulative.findIndex((c) => x < c);
    return REQUEST_OPS[i < 0 ? REQUEST_OPS.length - 1 : i]!;
  }

  /** A random live object; for deletes, one nothing else is using (a few tries). */
  private object(idle: boolean): Live | undefined {
    for (let tries = 0; tries < 8 && this.live.length; tries++) {
      const o = this.live[Math.floor(Math.random() * this.live.length)]!;
      if (!idle || o.busy === 0) return o;
    }
    return undefined;
  }

  private forget(o: Live): void {
    const i = this.liveIndex.get(o.name)!;
    const last = this.live.pop()!;
    if (last !== o) {
      this.live[i] = last;
      this.liveIndex.set(last.name, i);
    }
    this.liveIndex.delete(o.name);
  }

  private async one(target: number): Promise<void> {
    let op = this.pick();
    const o = op === 'create' || op === 'list' ? undefined : this.object(op === 'delete');
    if (op !== 'create' && op !== 'list' && !o) {
      op = 'create';
      this.substituted++;
    }
    const { job } = this;
    const ns = job.namespace;
    const headers = { ...job.targets[target]!.headers, accept: 'application/json' };
    const path = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
    let request: RenderedRequest;
    let created: string | undefined;
    switch (op) {
      case 'create': {
        const n = this.nextName++;
        created = `load-${job.runId}-${job.index}-${n}`;
        request = this.renderCreate(n);
        request.headers = { ...request.headers, ...headers };
        break;
      }
      case 'update': {
        const body = Buffer.from(
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: {
              name: o!.name,
              namespace: ns,
              resourceVersion: o!.rv,
              labels: { [RUN_LABEL]: job.runId, 'app.kubernetes.io/managed-by': 'clusterd-load' },
              annotations: { [SENT_AT_ANNOTATION]: wallClockMs().toFixed(3) },
            },
            data: { payload: this.payload, update: String(++this.updateSeq) },
          }),
        );
        request = { method: 'PUT', path: path(o!.name), headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) }, body };
        break;
      }
      case 'get':
        request = { method: 'GET', path: path(o!.name), headers, body: undefined };
        break;
      case 'list':
        request = { method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps${job.listLimit > 0 ? `?limit=${job.listLimit}` : ''}`, headers, body: undefined };
        break;
      case 'delete':
        this.forget(o!);
        request = { method: 'DELETE', path: path(o!.name), headers, body: undefined };
        break;
    }
    if (o) o.busy++;
    const started = performance.now();
    let outcome: Outcome;
    let answer: Exchange | undefined;
    try {
      answer = await exchange(this.agents[target]!, this.bases[target]!, request, op === 'create' || op === 'update', job.timeoutMs);
      outcome = classify(op, answer);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      outcome = { kind: 'error', key: err.code === 'ETIMEDOUT' ? 'timeout' : (err.code ?? err.name), message: err.message };
    }
    const ended = performance.now();
    if (o) o.busy--;
    const c = this.counts[op];
    c.requests++;
    this.perTarget[target]!.requests++;
    if (outcome.kind === 'ok') {
      c.ok++;
      this.latency[op].record(ended - started);
      if (op === 'create' || op === 'update') this.written(answer!, o ?? created!);
    } else if (outcome.kind === 'conflict') {
      c.conflicts++;
    } else {
      c.errors++;
      this.perTarget[target]!.errors++;
      const e = (this.errors[outcome.key!] ??= { count: 0, byOp: {}, example: outcome.message ?? '' });
      e.count++;
      e.byOp[op] = (e.byOp[op] ?? 0) + 1;
    }
  }

  /** A successful create (of that name) or update: remember the object's resourceVersion and acknowledge it for the watch lag. */
  private written(answer: Exchange, o: Live | string): void {
    const rv = RESOURCE_VERSION.exec(answer.body!.toString('utf8'))?.[1];
    if (rv === undefined) return;
    if (typeof o === 'string') {
      this.liveIndex.set(o, this.live.length);
      this.live.push({ name: o, rv, busy: 0 });
    } else if (newer(rv, o.rv)) {
      o.rv = rv;
    }
    if (this.job.reportAcks) this.pendingAcks.push([Number(rv), wallClockMs()]);
  }
}

/** How many of `count` consecutive slots from `first`, dealt round-robin over `targets`, land on target t. */
export function countFor(t: number, first: number, count: number, targets: number): number {
  let n = 0;
  for (let i = 0; i < count; i++) if ((first + i) % targets === t) n++;
  return n;
}

/** resourceVersions are opaque strings; clusterd's are decimal, compared as numbers when they are. */
function newer(a: string, b: string): boolean {
  return /^\d+$/.test(a) && /^\d+$/.test(b) ? BigInt(a) > BigInt(b) : a !== b;
}

// A create answers 200 here (spec §4.4 item 5); upstream answers 201. Both count.
const OK_STATUS: Record<RequestOp, number[]> = { create: [200, 201], update: [200], get: [200], list: [200], delete: [200, 202] };

export function classify(op: RequestOp, r: Exchange): Outcome {
  if (OK_STATUS[op].includes(r.status)) return { kind: 'ok' };
  let reason = '';
  let message = '';
  try {
    const s = JSON.parse(r.body?.toString('utf8') ?? '') as { reason?: unknown; message?: unknown };
    if (typeof s.reason === 'string') reason = s.reason;
    if (typeof s.message === 'string') message = s.message;
  } catch {
    message = r.body?.toString('utf8').slice(0, 300) ?? '';
  }
  if (op === 'update' && r.status === 409 && (reason === 'Conflict' || reason === '')) return { kind: 'conflict' };
  return { kind: 'error', key: reason ? `${r.status} ${reason}` : String(r.status), message: message || `HTTP ${r.status}` };
}
