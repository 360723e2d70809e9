// e2e/load-tool: the load tool (cmd/clusterd-load, `make load`) run as a real process against a
// real clusterd and a real three-replica cluster for a few seconds: its JSON summary must agree
// with what the server holds afterwards (objects created minus deleted, every write's event at
// every watcher), report no errors, and order its percentiles; a bad flag is exit 2 with a
// message, an unreachable target exit 1 with one line.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadSummary } from '../internal/loadtest/summary.js';
import { REQUEST_OPS } from '../internal/loadtest/options.js';
import { ClusterProcess } from './support/cluster-process.js';
import { runProcess, type ProcessRun } from './support/run-process.js';
import { PROJECT_ROOT, startServerProcess, type ServerProcess } from './support/server-process.js';

const TOOL = join(PROJECT_ROOT, 'dist', 'cmd', 'clusterd-load', 'main.js');
const WATCHERS = 4;

function runTool(args: string[]): Promise<ProcessRun> {
  return runProcess(process.execPath, [TOOL, ...args]);
}

/** Runs the tool with the test's settings; `overrides` (--flag=value) replace the defaults of the same flag. */
async function load(kubeconfigs: string[], namespace: string, overrides: string[] = []): Promise<{ run: ProcessRun; summary: LoadSummary }> {
  const defaults = [
    '--duration=3s',
    '--processes=2',
    '--concurrency=6',
    `--mix=create=50,update=25,get=10,list=5,delete=10,watch=${WATCHERS}`,
    '--object-size=256',
    `--namespace=${namespace}`,
    '--progress=1s',
    '--output=json',
  ];
  const flagOf = (a: string) => a.split('=')[0];
  const run = await runTool([
    ...kubeconfigs.flatMap((k) => ['--kubeconfig', k]),
    ...defaults.filter((d) => !overrides.some((o) => flagOf(o) === flagOf(d))),
    ...overrides,
  ]);
  expect(run.code, run.stderr).toBe(0);
  return { run, summary: JSON.parse(run.stdout) as LoadSummary };
}

/** What every run's summary must say of itself, whatever the server. */
function expectConsistentSummary(s: LoadSummary): void {
  expect(s.kind).toBe('LoadSummary');
  expect(s.totals.errors, JSON.stringify(s.errors)).toBe(0);
  expect(s.errors).toEqual([]);
  expect(s.totals.requests).toBeGreaterThan(0);
  let requests = 0;
  for (const op of REQUEST_OPS) {
    const x = s.operations[op];
    requests += x.requests;
    expect(x.ok + x.conflicts + x.errors).toBe(x.requests);
    expect(x.latency.count).toBe(x.ok);
    if (x.ok > 0) {
      expect(x.latency.p50Ms).toBeGreaterThan(0);
      expect(x.latency.p50Ms).toBeLessThanOrEqual(x.latency.p90Ms);
      expect(x.latency.p90Ms).toBeLessThanOrEqual(x.latency.p99Ms);
      expect(x.latency.p99Ms).toBeLessThanOrEqual(x.latency.maxMs);
    }
    if (op !== 'update') expect(x.conflicts).toBe(0);
  }
  expect(s.totals.requests).toBe(requests);
  expect(s.operations.create.ok).toBeGreaterThan(0);
  expect(s.writes).toBe(s.operations.create.ok + s.operations.update.ok + s.operations.delete.ok);
  expect(s.targets.reduce((n, t) => n + t.requests, 0)).toBe(s.totals.requests);
  // Every watcher saw every write made while it watched: one event each, of the write's type.
  const w = s.watch!;
  expect(w.established).toBe(WATCHERS);
  expect(w.closedEarly).toBe(0);
  expect(w.eventsReceived).toBeGreaterThanOrEqual(WATCHERS * s.writes);
  expect(w.events['ADDED']).toBe(WATCHERS * s.operations.create.ok);
  expect(w.events['MODIFIED'] ?? 0).toBe(WATCHERS * s.operations.update.ok);
  expect(w.events['DELETED'] ?? 0).toBe(WATCHERS * s.operations.delete.ok);
  expect(w.expectedDeliveries).toBe(WATCHERS * (s.operations.create.ok + s.operations.update.ok));
  expect(w.delivered).toBe(w.expectedDeliveries);
  expect(w.lag.count).toBe(w.delivered);
  expect(w.lag.p50Ms).toBeLessThanOrEqual(w.lag.p99Ms);
  expect(w.lag.p99Ms).toBeLessThanOrEqual(w.lag.maxMs);
}

async function objectsOfRun(get: (path: string) => Promise<{ status: number; body: string }>, namespace: string, runId: string): Promise<string[]> {
  const r = await get(`/api/v1/namespaces/${namespace}/configmaps?labelSelector=${encodeURIComponent(`clusterd-load/run=${runId}`)}`);
  expect(r.status, r.body).toBe(200);
  return (JSON.parse(r.body) as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name);
}

describe('clusterd-load against one clusterd', () => {
  let server: ServerProcess;
  /** The first test's run (kept): its objects must outlive a later run's clean-up. */
  let kept: { runId: string; objects: number } | undefined;
  const get = async (path: string) => {
    const r = await server.admin.get(path);
    return { status: r.status, body: r.text() };
  };

  beforeAll(async () => {
    server = await startServerProcess();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('reports what the server holds afterwards (--keep), with progress lines while it runs', async () => {
    const { run, summary: s } = await load([server.kubeconfig], 'load-kept', ['--keep']);
    expectConsistentSummary(s);
    expect(run.stderr).toMatch(/\[\s+\d+s\/3s\] \d+ requests, \d+\/s.*, 0 errors, \d+ conflicts?, \d+ watch events/);
    expect(s.namespace).toEqual({ name: 'load-kept', created: true, cleanup: 'kept' });
    const names = await objectsOfRun(get, 'load-kept', s.runId);
    expect(names.length).toBe(s.operations.create.ok - s.operations.delete.ok);
    expect(new Set(names).size).toBe(names.length);
    kept = { runId: s.runId, objects: names.length };
  });

  it('deletes the namespace it created unless --keep, and only its own objects in one that existed', async () => {
    const { summary: made } = await load([server.kubeconfig], 'load-gone', ['--duration=1s', '--progress=0']);
    expect(made.namespace.cleanup).toBe('namespace deleted');
    const ns = await get('/api/v1/namespaces/load-gone');
    // Deleted, or still finalizing its contents.
    if (ns.status === 200) expect((JSON.parse(ns.body) as { status: { phase: string } }).status.phase).toBe('Terminating');
    else expect(ns.status).toBe(404);

    const { summary: again } = await load([server.kubeconfig], 'load-kept', ['--duration=1s', '--progress=0']);
    expect(again.namespace).toMatchObject({ created: false, cleanup: `objects of run ${again.runId} deleted` });
    expect(again.operations.create.ok).toBeGreaterThan(0);
    expect(await objectsOfRun(get, 'load-kept', again.runId)).toEqual([]);
    expect((await objectsOfRun(get, 'load-kept', kept!.runId)).length).toBe(kept!.objects);
  });

  it('answers a bad command line with exit 2 and a message, an unreachable target with exit 1 and one line', async () => {
    const bad = await runTool(['--kubeconfig', server.kubeconfig, '--mix', 'create=10,frobnicate=5']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--mix: unknown operation "frobnicate"');
    expect(bad.stdout).toBe('');
    const unknown = await runTool(['--kubeconfig', server.kubeconfig, '--concurency', '4']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown flag: --concurency');

    // The same credentials, pointed at a port where nothing listens (the server's own, once it is gone, is not reusable here).
    const dead = join(server.dataDir, 'dead.kubeconfig');
    writeFileSync(dead, readFileSync(server.kubeconfig, 'utf8').replace(`127.0.0.1:${server.port}`, '127.0.0.1:1'));
    const down = await runTool(['--kubeconfig', `${server.kubeconfig},${dead}`, '--duration', '1s']);
    expect(down.code).toBe(1);
    expect(down.stderr.trim()).toMatch(/^clusterd-load: cannot reach https:\/\/127\.0\.0\.1:1 \(kubeconfig .*dead\.kubeconfig\): .*ECONNREFUSED/);
    expect(down.stderr).not.toContain('    at ');

    const help = await runTool(['--help']);
    expect(help.code).toBe(0);
    for (const flag of ['--kubeconfig', '--context', '--duration', '--processes', '--concurrency', '--rate', '--mix', '--object-size', '--list-limit', '--timeout', '--namespace', '--keep', '--output', '--progress']) {
      expect(help.stdout).toContain(flag);
    }
  });
});

describe('clusterd-load against a three-replica cluster', () => {
  let cluster: ClusterProcess;

  beforeAll(async () => {
    cluster = await ClusterProcess.create();
    await cluster.startAll();
    await cluster.waitAllReady();
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  it('spreads requests over every replica and agrees with the cluster afterwards', async () => {
    const names = cluster.runningNames();
    const { summary: s } = await load(
      names.map((n) => cluster.kubeconfig(n)),
      'load-cluster',
      ['--keep', '--progress=0'],
    );
    expectConsistentSummary(s);
    expect(s.targets.map((t) => t.server)).toEqual(names.map((n) => cluster.url(n)));
    for (const t of s.targets) expect(t.requests).toBeGreaterThan(0);
    // Read back through every replica (consistent reads): each holds exactly the run's objects.
    for (const n of names) {
      const r = await cluster.http.request(cluster.url(n), 'GET', `/api/v1/namespaces/load-cluster/configmaps?labelSelector=${encodeURIComponent(`clusterd-load/run=${s.runId}`)}`);
      expect(r.status, r.body).toBe(200);
      expect((JSON.parse(r.body) as { items: unknown[] }).items.length).toBe(s.operations.create.ok - s.operations.delete.ok);
    }
  });
});
