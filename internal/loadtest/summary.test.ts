import { describe, expect, it } from 'vitest';
import { LatencyRecorder } from '../../bench/support/latency.js';
import { share } from './coordinator.js';
import { parseLoadArgs, REQUEST_OPS, type LoadOptions, type RequestOp } from './options.js';
import type { WorkerLoadResult } from './protocol.js';
import { formatText, progressLine, summarize } from './summary.js';
import { classify, countFor } from './worker.js';

const options = parseLoadArgs(['--kubeconfig', 'k', '--mix', 'create=1,update=1,get=1,list=1,delete=0,watch=0']) as LoadOptions;

function result(startedAt: number, endedAt: number, latencies: Partial<Record<RequestOp, number[]>>, extra: Partial<WorkerLoadResult> = {}): WorkerLoadResult {
  const ops = {} as WorkerLoadResult['ops'];
  for (const op of REQUEST_OPS) {
    const r = new LatencyRecorder();
    for (const ms of latencies[op] ?? []) r.record(ms);
    ops[op] = { requests: r.count, ok: r.count, conflicts: 0, errors: 0, latency: r.toJSON() };
  }
  return { ops, errors: {}, targets: [{ requests: 0, errors: 0 }], late: 0, substitutedCreates: 0, startedAt, endedAt, ...extra };
}

const input = (results: WorkerLoadResult[]) => ({
  options,
  runId: 'abc123',
  targets: [{ server: 'https://127.0.0.1:6443', kubeconfig: 'k' }],
  results,
  watch: [],
  watchRequested: 0,
  namespace: { name: 'clusterd-load', created: true, cleanup: 'namespace deleted' },
  interrupted: false,
});

describe('summarize', () => {
  it('adds up the workers: counts, rates over the whole run, exact merged percentiles, errors by key', () => {
    const a = result(1000, 3000, { create: [1, 2, 3, 4], get: [10] });
    a.ops.update = { ...a.ops.update, requests: 3, conflicts: 2, errors: 1 };
    a.errors = { '500 InternalError': { count: 1, byOp: { update: 1 }, example: 'boom' } };
    a.targets = [{ requests: 8, errors: 1 }];
    const b = result(1500, 5000, { create: [100, 200], list: [5] });
    b.errors = { '500 InternalError': { count: 2, byOp: { create: 2 }, example: 'later' }, timeout: { count: 3, byOp: { list: 3 }, example: 'slow' } };
    b.ops.create = { ...b.ops.create, requests: 4, errors: 2 };
    b.ops.list = { ...b.ops.list, requests: 4, errors: 3 };
    b.targets = [{ requests: 8, errors: 5 }];
    const s = summarize(input([a, b]));

    expect(s.elapsedMs).toBe(4000);
    expect(s.operations.create).toMatchObject({ requests: 8, ok: 6, errors: 2, okPerSecond: 1.5 });
    expect(s.operations.create.latency).toMatchObject({ count: 6, maxMs: 200 });
    expect(s.operations.create.latency.p50Ms).toBeCloseTo(3, 1);
    expect(s.operations.update).toMatchObject({ requests: 3, ok: 0, conflicts: 2, errors: 1 });
    expect(s.totals).toMatchObject({ requests: 16, ok: 8, conflicts: 2, errors: 6, okPerSecond: 2, requestsPerSecond: 4 });
    expect(s.errors).toEqual([
      { error: '500 InternalError', count: 3, byOperation: { update: 1, create: 2 }, example: 'boom' },
      { error: 'timeout', count: 3, byOperation: { list: 3 }, example: 'slow' },
    ]);
    expect(s.targets).toEqual([{ server: 'https://127.0.0.1:6443', kubeconfig: 'k', requests: 16, errors: 6 }]);
    expect(s.writes).toBe(6);
    expect(s.watch).toBeNull();

    const text = formatText(s, options);
    expect(text).toMatch(/^create +8 +6 +- +2 +1\.5 +3\.\d+ +200 +200 +200$/m);
    expect(text).toMatch(/^update +3 +0 +2 +1 +0\.0 +- +- +- +-$/m);
    expect(text).not.toMatch(/^delete/m);
    expect(text).toMatch(/^total +16 +8 +2 +6 +2\.0$/m);
    expect(text).toContain('500 InternalError: 3 (update 1, create 2) — e.g. boom');
    expect(text).toContain('namespace clusterd-load: namespace deleted (--keep keeps them)');
  });
});

describe('progressLine', () => {
  it('says elapsed time, requests, the rate so far and lately, errors, conflicts, watch events', () => {
    const p = { requests: 300, ok: 290, conflicts: 1, errors: 9, watchEvents: 1200 };
    expect(progressLine(4000, 30_000, p, { elapsedMs: 2000, progress: { ...p, requests: 100 } })).toBe(
      '[  4s/30s] 300 requests, 75/s (last 2.0s: 100/s), 9 errors, 1 conflict, 1200 watch events',
    );
    expect(progressLine(2000, 30_000, { ...p, errors: 1 })).toBe('[  2s/30s] 300 requests, 150/s, 1 error, 1 conflict, 1200 watch events');
  });
});

describe('dealing connections and watchers', () => {
  it('splits a total over processes and slots over targets without losing any', () => {
    expect([0, 1, 2].map((i) => share(16, 3, i))).toEqual([6, 5, 5]);
    // Process 1 has slots 6..10 of 16 over 3 targets: 6→0, 7→1, 8→2, 9→0, 10→1.
    expect([0, 1, 2].map((t) => countFor(t, 6, 5, 3))).toEqual([2, 2, 1]);
  });
});

describe('classify', () => {
  const answer = (status: number, body: unknown) => ({ status, bytes: 0, body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) });
  it('counts an update precondition failure as a conflict and anything else by status and reason', () => {
    expect(classify('create', answer(200, {}))).toEqual({ kind: 'ok' });
    expect(classify('create', answer(201, {}))).toEqual({ kind: 'ok' });
    expect(classify('update', answer(409, { kind: 'Status', reason: 'Conflict', message: 'the object has been modified' }))).toEqual({ kind: 'conflict' });
    expect(classify('create', answer(409, { kind: 'Status', reason: 'AlreadyExists', message: 'exists' }))).toEqual({ kind: 'error', key: '409 AlreadyExists', message: 'exists' });
    expect(classify('get', answer(503, 'upstream gone'))).toEqual({ kind: 'error', key: '503', message: 'upstream gone' });
  });
});
