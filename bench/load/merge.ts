// bench/load/merge owns combining load results: of generators that ran at the same time
// against the same target (rates add up), and of rounds that ran one after another (rates
// average over the total time). Latency histograms merge exactly. Imports: load/protocol,
// support/latency.

import { LatencyRecorder } from '../support/latency.js';
import type { HttpLoadResult, WatchResult } from './protocol.js';

function mergeErrors(results: HttpLoadResult[]): Record<string, number> {
  const errors: Record<string, number> = {};
  for (const r of results) for (const [k, v] of Object.entries(r.errors)) errors[k] = (errors[k] ?? 0) + v;
  return errors;
}

function firstError(results: HttpLoadResult[]): { firstError?: string } {
  const e = results.find((r) => r.firstError)?.firstError;
  return e ? { firstError: e } : {};
}

/** Generators that ran side by side: counts and rates add up, CPU adds up. */
export function mergeConcurrent(results: HttpLoadResult[]): HttpLoadResult {
  if (results.length === 1) return results[0]!;
  const latency = LatencyRecorder.from(...results.map((r) => r.histogram));
  return {
    requests: sum(results, (r) => r.requests),
    ok: sum(results, (r) => r.ok),
    errors: mergeErrors(results),
    ...firstError(results),
    elapsedMs: Math.max(...results.map((r) => r.elapsedMs)),
    okPerSecond: sum(results, (r) => r.okPerSecond),
    latency: latency.summary(),
    histogram: latency.toJSON(),
    bytesIn: sum(results, (r) => r.bytesIn),
    nextIndex: Math.max(...results.map((r) => r.nextIndex)),
    generatorCpu: sum(results, (r) => r.generatorCpu),
  };
}

/** Rounds run one after another: totals over the total measured time. */
export function mergeSequential(results: HttpLoadResult[]): HttpLoadResult {
  if (results.length === 1) return results[0]!;
  const latency = LatencyRecorder.from(...results.map((r) => r.histogram));
  const elapsedMs = sum(results, (r) => r.elapsedMs);
  const ok = sum(results, (r) => r.ok);
  return {
    requests: sum(results, (r) => r.requests),
    ok,
    errors: mergeErrors(results),
    ...firstError(results),
    elapsedMs,
    okPerSecond: elapsedMs > 0 ? (ok * 1000) / elapsedMs : 0,
    latency: latency.summary(),
    histogram: latency.toJSON(),
    bytesIn: sum(results, (r) => r.bytesIn),
    nextIndex: results[results.length - 1]!.nextIndex,
    generatorCpu: weighted(results.map((r) => [r.generatorCpu, r.elapsedMs])),
  };
}

export function sum<T>(xs: T[], f: (x: T) => number): number {
  return xs.reduce((a, x) => a + f(x), 0);
}

/** Mean of [value, weight] pairs; undefined values are skipped. */
export function weighted(pairs: [number | undefined, number][]): number {
  let total = 0;
  let w = 0;
  for (const [v, weight] of pairs) {
    if (v === undefined) continue;
    total += v * weight;
    w += weight;
  }
  return w > 0 ? total / w : 0;
}

/** Watcher processes that ran side by side: counts add up, histograms merge, CPU adds up. */
export function mergeWatchResults(results: WatchResult[]): WatchResult {
  if (results.length === 1) return results[0]!;
  const events: Record<string, number> = {};
  for (const r of results) for (const [k, v] of Object.entries(r.events)) events[k] = (events[k] ?? 0) + v;
  const fromAck = LatencyRecorder.from(...results.map((r) => r.fromAckHistogram));
  const fromSend = LatencyRecorder.from(...results.map((r) => r.fromSendHistogram));
  const firstError = results.find((r) => r.firstError)?.firstError;
  return {
    established: sum(results, (r) => r.established),
    failedToEstablish: sum(results, (r) => r.failedToEstablish),
    ...(firstError ? { firstError } : {}),
    events,
    closedEarly: sum(results, (r) => r.closedEarly),
    fromAck: fromAck.summary(),
    fromSend: fromSend.summary(),
    fromAckHistogram: fromAck.toJSON(),
    fromSendHistogram: fromSend.toJSON(),
    expected: sum(results, (r) => r.expected),
    delivered: sum(results, (r) => r.delivered),
    generatorCpu: sum(results, (r) => r.generatorCpu),
  };
}
