// internal/loadtest/summary owns the load tool's results: merging what the worker processes
// report into one LoadSummary (the `--output json` document) and writing it as text, plus the
// progress line printed while the run goes on. Imports: bench/support/latency, bench/load/merge,
// loadtest/options, loadtest/protocol.

import type { WatchResult } from '../../bench/load/protocol.js';
import { mergeWatchResults } from '../../bench/load/merge.js';
import { LatencyRecorder, type LatencySummary } from '../../bench/support/latency.js';
import { describeOptions, REQUEST_OPS, type LoadOptions, type RequestOp } from './options.js';
import type { Progress, WorkerLoadResult } from './protocol.js';

export interface OpSummary {
  requests: number;
  ok: number;
  conflicts: number;
  errors: number;
  /** Successful requests per second over the run. */
  okPerSecond: number;
  /** Of successful requests, milliseconds. */
  latency: LatencySummary;
}

export interface LoadSummary {
  kind: 'LoadSummary';
  runId: string;
  settings: {
    targets: { server: string; kubeconfig: string }[];
    namespace: string;
    durationMs: number;
    processes: number;
    concurrency: number;
    rate: number;
    mix: Record<RequestOp, number>;
    watchers: number;
    objectSize: number;
    listLimit: number;
  };
  /** From the first request to the last answer. */
  elapsedMs: number;
  totals: Omit<OpSummary, 'latency'> & { requestsPerSecond: number };
  operations: Record<RequestOp, OpSummary>;
  /** By "<status> <reason>" (or a network error's code), largest first. */
  errors: { error: string; count: number; byOperation: Partial<Record<RequestOp, number>>; example: string }[];
  /** Open loop only: requests that could not start on schedule (every connection busy). */
  late: number;
  /** update/get/delete sent as creates because a process had no object for them. */
  substitutedCreates: number;
  /** Successful creates + updates + deletes: each is one event for every watcher. */
  writes: number;
  watch: WatchSummary | null;
  targets: { server: string; kubeconfig: string; requests: number; errors: number }[];
  namespace: { name: string; created: boolean; cleanup: 'kept' | 'namespace deleted' | 'objects deleted' | string };
  /** Ended early by SIGINT. */
  interrupted: boolean;
}

export interface WatchSummary {
  watchers: number;
  established: number;
  failedToEstablish: number;
  firstError?: string;
  /** Streams the server ended before the tool closed them. */
  closedEarly: number;
  /** Every event received, over all watchers, and by type. */
  eventsReceived: number;
  events: Record<string, number>;
  /** Watchers × successful creates and updates: the events carrying a write time. */
  expectedDeliveries: number;
  delivered: number;
  /** From the answer to the write to the event's arrival, ms, over all watchers. */
  lag: LatencySummary;
  /** From the write's send time (in the object) to the event's arrival, ms. */
  lagFromSend: LatencySummary;
}

export interface SummaryInput {
  options: LoadOptions;
  runId: string;
  targets: { server: string; kubeconfig: string }[];
  results: WorkerLoadResult[];
  watch: (WatchResult | null)[];
  watchRequested: number;
  namespace: LoadSummary['namespace'];
  interrupted: boolean;
}

export function summarize(input: SummaryInput): LoadSummary {
  const { options: o, results } = input;
  const startedAt = Math.min(...results.map((r) => r.startedAt));
  const endedAt = Math.max(...results.map((r) => r.endedAt));
  const elapsedMs = Math.max(0, endedAt - startedAt);
  const perSecond = (n: number) => (elapsedMs > 0 ? round((n * 1000) / elapsedMs) : 0);
  const operations = {} as Record<RequestOp, OpSummary>;
  for (const op of REQUEST_OPS) {
    const figures = results.map((r) => r.ops[op]);
    const ok = sum(figures.map((f) => f.ok));
    operations[op] = {
      requests: sum(figures.map((f) => f.requests)),
      ok,
      conflicts: sum(figures.map((f) => f.conflicts)),
      errors: sum(figures.map((f) => f.errors)),
      okPerSecond: perSecond(ok),
      latency: LatencyRecorder.from(...figures.map((f) => f.latency)).summary(),
    };
  }
  const all = Object.values(operations);
  const totals = {
    requests: sum(all.map((x) => x.requests)),
    ok: sum(all.map((x) => x.ok)),
    conflicts: sum(all.map((x) => x.conflicts)),
    errors: sum(all.map((x) => x.errors)),
    okPerSecond: 0,
    requestsPerSecond: 0,
  };
  totals.okPerSecond = perSecond(totals.ok);
  totals.requestsPerSecond = perSecond(totals.requests);

  const errors = new Map<string, LoadSummary['errors'][number]>();
  for (const r of results) {
    for (const [key, e] of Object.entries(r.errors)) {
      const m = errors.get(key) ?? { error: key, count: 0, byOperation: {}, example: e.example };
      m.count += e.count;
      for (const [op, n] of Object.entries(e.byOp) as [RequestOp, number][]) m.byOperation[op] = (m.byOperation[op] ?? 0) + n;
      errors.set(key, m);
    }
  }
  const watchResults = input.watch.filter((w): w is WatchResult => w !== null);
  let watch: WatchSummary | null = null;
  if (input.watchRequested > 0) {
    const w = watchResults.length ? mergeWatchResults(watchResults) : undefined;
    const events = w?.events ?? {};
    watch = {
      watchers: input.watchRequested,
      established: w?.established ?? 0,
      failedToEstablish: w ? w.failedToEstablish : input.watchRequested,
      ...(w?.firstError ? { firstError: w.firstError } : {}),
      closedEarly: w?.closedEarly ?? 0,
      eventsReceived: sum(Object.values(events)),
      events,
      expectedDeliveries: w?.expected ?? 0,
      delivered: w?.delivered ?? 0,
      lag: w?.fromAck ?? LatencyRecorder.from().summary(),
      lagFromSend: w?.fromSend ?? LatencyRecorder.from().summary(),
    };
  }
  return {
    kind: 'LoadSummary',
    runId: input.runId,
    settings: {
      targets: input.targets,
      namespace: o.namespace,
      durationMs: o.durationMs,
      processes: o.processes,
      concurrency: o.concurrency,
      rate: o.rate,
      mix: o.mix,
      watchers: o.watchers,
      objectSize: o.objectSize,
      listLimit: o.listLimit,
    },
    elapsedMs: round(elapsedMs),
    totals,
    operations,
    errors: [...errors.values()].sort((a, b) => b.count - a.count),
    late: sum(results.map((r) => r.late)),
    substitutedCreates: sum(results.map((r) => r.substitutedCreates)),
    writes: operations.create.ok + operations.update.ok + operations.delete.ok,
    watch,
    targets: input.targets.map((t, i) => ({
      ...t,
      requests: sum(results.map((r) => r.targets[i]?.requests ?? 0)),
      errors: sum(results.map((r) => r.targets[i]?.errors ?? 0)),
    })),
    namespace: input.namespace,
    interrupted: input.interrupted,
  };
}

/** The summary as the text an operator reads. */
export function formatText(s: LoadSummary, options: LoadOptions): string {
  const lines: string[] = [];
  lines.push(`clusterd-load: ${describeOptions(options)}`);
  lines.push(`${s.settings.targets.length} target${s.settings.targets.length === 1 ? '' : 's'}; ran ${(s.elapsedMs / 1000).toFixed(1)}s${s.interrupted ? ' (interrupted)' : ''}`);
  lines.push('');
  const header = ['operation', 'requests', 'ok', 'conflicts', 'errors', 'ok/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'];
  const rows: string[][] = [header];
  for (const op of REQUEST_OPS) {
    const x = s.operations[op];
    if (x.requests === 0 && options.mix[op] === 0) continue;
    const l = x.latency;
    const lat = l.count ? [ms(l.p50Ms), ms(l.p90Ms), ms(l.p99Ms), ms(l.maxMs)] : ['-', '-', '-', '-'];
    rows.push([op, String(x.requests), String(x.ok), op === 'update' ? String(x.conflicts) : '-', String(x.errors), fixed(x.okPerSecond, 1), ...lat]);
  }
  rows.push(['total', String(s.totals.requests), String(s.totals.ok), String(s.totals.conflicts), String(s.totals.errors), fixed(s.totals.okPerSecond, 1), '', '', '', '']);
  lines.push(...table(rows));
  if (s.substitutedCreates) lines.push(`(${s.substitutedCreates} of the creates stood in for an update, get or delete while a process had no object yet)`);
  if (s.late) lines.push(`${s.late} requests started more than 5 ms late: all --concurrency connections were busy, the server did not keep up with --rate ${s.settings.rate}`);
  lines.push('');
  if (s.errors.length === 0) lines.push('errors: none');
  else {
    lines.push('errors:');
    for (const e of s.errors) {
      const by = Object.entries(e.byOperation)
        .map(([op, n]) => `${op} ${n}`)
        .join(', ');
      lines.push(`  ${e.error}: ${e.count} (${by})${e.example ? ` — e.g. ${e.example.slice(0, 200)}` : ''}`);
    }
  }
  if (s.watch) {
    const w = s.watch;
    lines.push('');
    const types = Object.entries(w.events)
      .map(([t, n]) => `${t} ${n}`)
      .join(', ');
    lines.push(`watch: ${w.established} of ${w.watchers} watchers established; ${w.eventsReceived} events received${types ? ` (${types})` : ''}`);
    if (w.failedToEstablish) lines.push(`  ${w.failedToEstablish} failed to open${w.firstError ? `: ${w.firstError}` : ''}`);
    if (w.closedEarly) lines.push(`  ${w.closedEarly} watch streams were ended by the server before the run's end`);
    lines.push(`  events of this run's creates and updates: ${w.delivered} of ${w.expectedDeliveries} expected (${w.established} watchers × ${s.operations.create.ok + s.operations.update.ok} writes)`);
    const l = w.lag;
    lines.push(`  watch lag (write answered → event received): p50 ${ms(l.p50Ms)} ms, p90 ${ms(l.p90Ms)} ms, p99 ${ms(l.p99Ms)} ms, max ${ms(l.maxMs)} ms over ${l.count} deliveries`);
  }
  lines.push('');
  lines.push('targets:');
  for (const t of s.targets) lines.push(`  ${t.server} (${t.kubeconfig}): ${t.requests} requests, ${t.errors} errors`);
  lines.push('');
  lines.push(`namespace ${s.namespace.name}: ${s.namespace.cleanup}${s.namespace.cleanup === 'kept' ? '' : ' (--keep keeps them)'}`);
  return lines.join('\n') + '\n';
}

/** `[  6s/30s] 18342 requests, 3057/s (last 2.0s: 3101/s), 0 errors, 2 conflicts, 91234 watch events` */
export function progressLine(elapsedMs: number, durationMs: number, now: Progress, previous?: { elapsedMs: number; progress: Progress }): string {
  const secs = (elapsedMs / 1000).toFixed(0).padStart(3);
  const rate = elapsedMs > 0 ? Math.round((now.requests * 1000) / elapsedMs) : 0;
  const span = previous ? elapsedMs - previous.elapsedMs : 0;
  const recent = previous && span > 0 ? ` (last ${(span / 1000).toFixed(1)}s: ${Math.round(((now.requests - previous.progress.requests) * 1000) / span)}/s)` : '';
  return (
    `[${secs}s/${Math.round(durationMs / 1000)}s] ${now.requests} requests, ${rate}/s${recent}, ${now.errors} error${now.errors === 1 ? '' : 's'}, ` +
    `${now.conflicts} conflict${now.conflicts === 1 ? '' : 's'}, ${now.watchEvents} watch events`
  );
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd());
}

const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);
const round = (x: number) => Math.round(x * 10) / 10;
const fixed = (x: number, d: number) => x.toFixed(d);
const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
