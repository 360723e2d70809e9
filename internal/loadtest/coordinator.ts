// internal/loadtest/coordinator owns one run of the load tool: check every target, make the
// namespace ready, fork the worker processes and deal them connections and watchers over the
// targets, start them together, relay write acknowledgements to every worker's watchers (for the
// watch lag), print the progress line, drain the watchers, clean up and return the summary. It
// sends no load itself. Imports: loadtest/* (options, targets, protocol, summary).

import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WatchResult } from '../../bench/load/protocol.js';
import type { LoadOptions } from './options.js';
import type { FromWorker, Progress, ToWorker, WorkerJob, WorkerLoadResult } from './protocol.js';
import { progressLine, summarize, type LoadSummary } from './summary.js';
import { statusMessage, TargetClient, TargetError, type Target } from './targets.js';
import { RUN_LABEL } from './worker.js';

const WORKER_ENTRY = join(dirname(fileURLToPath(import.meta.url)), 'worker-main.js');
/** How long watchers may take, after the load, to receive the events of its last writes. */
const WATCH_DRAIN_MS = 10_000;

export interface RunIo {
  /** Progress and notices (stderr). */
  note(line: string): void;
}

/** Splits `total` over `parts`: the first ones get one more when it does not divide. */
export function share(total: number, parts: number, i: number): number {
  return Math.floor(total / parts) + (i < total % parts ? 1 : 0);
}

class WorkerHandle {
  progress: Progress = { requests: 0, ok: 0, conflicts: 0, errors: 0, watchEvents: 0 };
  private waiting = new Map<FromWorker['type'], (m: FromWorker) => void>();
  private failure: ((e: Error) => void)[] = [];
  private exited = false;
  onAcks: ((acks: [number, number][]) => void) | undefined;

  constructor(
    readonly index: number,
    readonly child: ChildProcess,
  ) {
    child.on('message', (raw) => {
      const m = raw as FromWorker;
      if (m.type === 'progress') this.progress = m.progress;
      else if (m.type === 'acks') this.onAcks?.(m.acks);
      else if (m.type === 'error') this.fail(new Error(`load process ${index} failed: ${m.message}`));
      else {
        const w = this.waiting.get(m.type);
        this.waiting.delete(m.type);
        w?.(m);
      }
    });
    child.on('exit', (code, signal) => {
      this.exited = true;
      this.fail(new Error(`load process ${index} exited (${code ?? signal}) before it finished`));
    });
  }

  private fail(e: Error): void {
    const f = this.failure;
    this.failure = [];
    this.waiting.clear();
    for (const reject of f) reject(e);
  }

  send(m: ToWorker): void {
    if (!this.exited && this.child.connected) this.child.send(m);
  }

  /** Sends `m` (if any) and waits for the answer of type `type`. */
  ask<T extends FromWorker['type']>(type: T, m?: ToWorker): Promise<Extract<FromWorker, { type: T }>> {
    if (this.exited) return Promise.reject(new Error(`load process ${this.index} is not running`));
    return new Promise((resolve, reject) => {
      this.waiting.set(type, (x) => resolve(x as Extract<FromWorker, { type: T }>));
      this.failure.push(reject);
      if (m) this.send(m);
    });
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.waiting.clear();
    this.failure = [];
    this.child.removeAllListeners('message');
    if (this.child.connected) this.child.disconnect();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  }
}

export class LoadRun {
  private readonly runId = randomBytes(3).toString('hex');
  private readonly clients: TargetClient[];
  private workers: WorkerHandle[] = [];
  private interrupted = false;

  constructor(
    private readonly options: LoadOptions,
    private readonly targets: Target[],
    private readonly io: RunIo,
  ) {
    this.clients = targets.map((t) => new TargetClient(t));
  }

  /** Stop starting requests (SIGINT): the run ends early with what it has. */
  interrupt(): void {
    this.interrupted = true;
    for (const w of this.workers) w.send({ type: 'stop' });
  }

  /** Kills the workers now (a second SIGINT). */
  abort(): void {
    for (const w of this.workers) w.child.kill('SIGKILL');
  }

  async run(): Promise<LoadSummary> {
    try {
      return await this.runInner();
    } finally {
      await Promise.all(this.workers.map((w) => w.stop()));
      for (const c of this.clients) c.close();
    }
  }

  private async runInner(): Promise<LoadSummary> {
    const o = this.options;
    await Promise.all(this.clients.map((c) => c.check()));
    const created = await this.ensureNamespace();
    const watchFrom = await this.namespaceResourceVersion();
    this.io.note(`clusterd-load: run ${this.runId}: ${this.targets.length} target${this.targets.length === 1 ? '' : 's'} answering; namespace ${o.namespace}${created ? ' created' : ' exists'}`);

    const jobs: WorkerJob[] = [];
    let firstConnection = 0;
    let firstWatcher = 0;
    for (let i = 0; i < o.processes; i++) {
      const connections = share(o.concurrency, o.processes, i);
      const watchers = share(o.watchers, o.processes, i);
      jobs.push({
        index: i,
        runId: this.runId,
        targets: this.targets.map((t) => ({ server: t.server, tls: t.tls, headers: t.headers })),
        namespace: o.namespace,
        connections,
        firstConnection,
        watchers,
        firstWatcher,
        watchFrom,
        reportAcks: o.watchers > 0,
        mix: o.mix,
        durationMs: o.durationMs,
        ratePerSec: o.rate > 0 ? (o.rate * connections) / o.concurrency : 0,
        objectSize: o.objectSize,
        listLimit: o.listLimit,
        timeoutMs: o.timeoutMs,
      });
      firstConnection += connections;
      firstWatcher += watchers;
    }
    this.workers = jobs.map((_, i) => new WorkerHandle(i, fork(WORKER_ENTRY, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: ['--max-old-space-size=2048'] })));
    // Every worker's watchers match every worker's writes.
    for (const w of this.workers) w.onAcks = (acks) => this.workers.forEach((x) => x.send({ type: 'acks', acks }));

    const ready = await Promise.all(this.workers.map((w, i) => w.ask('ready', { type: 'open', job: jobs[i]! })));
    const established = ready.reduce((n, r) => n + r.established, 0);
    if (o.watchers > 0) {
      const firstError = ready.find((r) => r.firstError)?.firstError;
      this.io.note(`clusterd-load: ${established} of ${o.watchers} watchers open${firstError ? ` (first failure: ${firstError})` : ''}`);
    }

    this.io.note(`clusterd-load: sending requests for ${(o.durationMs / 1000).toFixed(1)}s`);
    const t0 = performance.now();
    let previous: { elapsedMs: number; progress: Progress } | undefined;
    const ticker =
      o.progressIntervalMs > 0
        ? setInterval(() => {
            const progress = this.total();
            const elapsedMs = performance.now() - t0;
            this.io.note(progressLine(elapsedMs, o.durationMs, progress, previous));
            previous = { elapsedMs, progress };
          }, o.progressIntervalMs)
        : undefined;
    let results: WorkerLoadResult[];
    try {
      const loaded = this.workers.map((w) => w.ask('loaded'));
      for (const w of this.workers) w.send({ type: 'start' });
      if (this.interrupted) this.interrupt();
      results = (await Promise.all(loaded)).map((m) => m.result);
    } finally {
      clearInterval(ticker);
    }

    let watch: (WatchResult | null)[] = [];
    if (o.watchers > 0) {
      const perWatcher = results.reduce((n, r) => n + r.ops.create.ok + r.ops.update.ok, 0);
      const perWatcherEvents = perWatcher + results.reduce((n, r) => n + r.ops.delete.ok, 0);
      this.io.note(`clusterd-load: load done; waiting up to ${WATCH_DRAIN_MS / 1000}s for the watchers to receive the last events`);
      watch = (await Promise.all(this.workers.map((w) => w.ask('watched', { type: 'finish', perWatcher, perWatcherEvents, drainMs: WATCH_DRAIN_MS })))).map((m) => m.result);
    }
    const cleanup = await this.cleanUp(created);
    return summarize({
      options: o,
      runId: this.runId,
      targets: this.targets.map((t) => ({ server: t.server, kubeconfig: t.kubeconfig })),
      results,
      watch,
      watchRequested: o.watchers,
      namespace: { name: o.namespace, created, cleanup },
      interrupted: this.interrupted,
    });
  }

  private total(): Progress {
    const t: Progress = { requests: 0, ok: 0, conflicts: 0, errors: 0, watchEvents: 0 };
    for (const w of this.workers) for (const k of Object.keys(t) as (keyof Progress)[]) t[k] += w.progress[k];
    return t;
  }

  /** Creates the namespace when missing (waiting out one still terminating); true when it did. */
  private async ensureNamespace(): Promise<boolean> {
    const ns = this.options.namespace;
    const c = this.clients[0]!;
    const deadline = performance.now() + 60_000;
    for (;;) {
      const got = await c.call('GET', `/api/v1/namespaces/${ns}`);
      if (got.status === 200) {
        const phase = (JSON.parse(got.body.toString('utf8')) as { status?: { phase?: string } }).status?.phase;
        if (phase !== 'Terminating') return false;
        if (performance.now() > deadline) throw new TargetError(`namespace ${ns} is still terminating after 60s (from an earlier run?): choose another --namespace`);
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (got.status !== 404) throw new TargetError(`cannot read namespace ${ns} on ${c.target.server}: ${got.status} ${statusMessage(got)}`);
      const made = await c.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'app.kubernetes.io/managed-by': 'clusterd-load' } } });
      if (made.status === 200 || made.status === 201) return true;
      // Made meanwhile by someone else (or being deleted): look again.
      if (made.status === 409 && performance.now() < deadline) continue;
      throw new TargetError(`cannot create namespace ${ns} on ${c.target.server}: ${made.status} ${statusMessage(made)}`);
    }
  }

  /** The namespace's ConfigMap list resourceVersion: the watchers start there, so they see only this run's writes. */
  private async namespaceResourceVersion(): Promise<string> {
    const c = this.clients[0]!;
    const r = await c.call('GET', `/api/v1/namespaces/${this.options.namespace}/configmaps?limit=1`);
    const rv = r.status === 200 ? (JSON.parse(r.body.toString('utf8')) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion : undefined;
    if (!rv) throw new TargetError(`cannot list ConfigMaps in ${this.options.namespace} on ${c.target.server}: ${r.status} ${statusMessage(r)}`);
    return rv;
  }

  /** Without --keep: the namespace when this run made it, else this run's objects. */
  private async cleanUp(created: boolean): Promise<string> {
    const ns = this.options.namespace;
    if (this.options.keep) return 'kept';
    const c = this.clients[0]!;
    try {
      const r = created
        ? await c.call('DELETE', `/api/v1/namespaces/${ns}`)
        : await c.call('DELETE', `/api/v1/namespaces/${ns}/configmaps?labelSelector=${encodeURIComponent(`${RUN_LABEL}=${this.runId}`)}`, undefined, 60_000);
      if (r.status === 200 || r.status === 202) return created ? 'namespace deleted' : `objects of run ${this.runId} deleted`;
      return `clean-up failed: ${r.status} ${statusMessage(r)}`;
    } catch (e) {
      return `clean-up failed: ${(e as Error).message}`;
    }
  }
}
