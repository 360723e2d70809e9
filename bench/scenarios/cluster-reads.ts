// bench/scenarios/cluster-reads owns the rows "3 replicas: consistent GET / LIST on a follower":
// a three-replica clusterd holds N bench pods (2 KB); consistent reads (no resourceVersion, so
// each waits for a ReadIndex barrier — on a follower, a round trip to the leader — and for the
// replica to have applied up to it) are sent to one follower and, in alternating rounds, to the
// leader: GET of one of the N pods (request n reads pod n mod N) over the plan's GET
// connections, and LIST of all N over a few connections, both from two generator processes.
// Target: a follower within 1.5 × the leader (p99 at most 1.5 × the leader's, throughput at
// least 1 / 1.5 of it). Imports: context, load/protocol, report/rows, scenarios/cluster-setup.

import { cpuNote, CREATED, type BenchContext, type Measured } from '../context.js';
import type { HttpJob } from '../load/protocol.js';
import { ratioOf } from '../report/rows.js';
import type { ClusterdCluster } from '../targets/clusterd-cluster.js';
import { adminClient, ensureNamespace, raftSnapshot, spread, withClusters } from './cluster-setup.js';

const NAMESPACE = 'bench-reads';
const FOLLOWER_FACTOR = 1.5;

export async function clusterReadsScenario(ctx: BenchContext): Promise<void> {
  const { plan } = ctx;
  const count = plan.clusterReadPods;
  await withClusters(ctx, 'cluster-reads', { etcd: false }, async (clusterd) => {
    const leader = await clusterd.leader();
    const follower = clusterd.running().find((n) => n !== leader)!;
    const podPath = `/api/v1/namespaces/${NAMESPACE}/pods`;
    const client = adminClient(clusterd, leader);
    try {
      await ensureNamespace(client, NAMESPACE);
    } finally {
      client.close();
    }
    const fill = await ctx.measure(`cluster-reads: creating ${count} pods through the leader`, { kind: 'http', baseUrl: clusterd.url(leader), tls: clusterd.tls, connections: 32, warmupMs: 0, requests: count, request: { method: 'POST', path: podPath, body: { template: ctx.pod({ namespace: NAMESPACE, name: 'read-{n}' }) } }, okStatus: CREATED }, clusterd.pid(leader));
    if (fill.result.ok !== count) throw new Error(`filling ${NAMESPACE}: ${fill.result.ok} of ${count} created (${fill.result.firstError})`);
    await clusterd.allReady();
    const listed = await listCount(clusterd, follower, podPath);
    if (listed.items !== count) throw new Error(`a consistent list on follower ${follower} returned ${listed.items} pods, expected ${count}`);

    const headers = { accept: 'application/json' };
    // Completions inside each round's window count (see countBy), after a longer warm-up.
    const timed = { warmupMs: plan.clusterWarmupMs, durationMs: plan.durationMs / plan.rounds, countBy: 'completion' as const };
    const getRequest = { method: 'GET', path: `${podPath}/read-{m}`, headers };
    const listRequest = { method: 'GET', path: podPath, headers };
    const on = (name: string, connections: number, request: HttpJob['request']): HttpJob[] =>
      spread(connections, 2).map((c) => ({ kind: 'http', baseUrl: clusterd.url(name), tls: clusterd.tls, ...timed, connections: c, modulo: count, request, okStatus: [200] }));

    const reads = { getFollower: new ReadCounts(), getLeader: new ReadCounts(), listFollower: new ReadCounts(), listLeader: new ReadCounts() };
    const [getFollower, getLeader] = await ctx.alternate(plan.rounds, [
      (r) => reads.getFollower.around(clusterd, follower, () => ctx.measureSpread(`cluster-reads: consistent GET on follower ${follower}, round ${r + 1}`, on(follower, plan.getConnections, getRequest), clusterd.pids())),
      (r) => reads.getLeader.around(clusterd, leader, () => ctx.measureSpread(`cluster-reads: consistent GET on leader ${leader}, round ${r + 1}`, on(leader, plan.getConnections, getRequest), clusterd.pids())),
    ]);
    const [listFollower, listLeader] = await ctx.alternate(plan.rounds, [
      (r) => reads.listFollower.around(clusterd, follower, () => ctx.measureSpread(`cluster-reads: consistent LIST on follower ${follower}, round ${r + 1}`, on(follower, plan.clusterListConnections, listRequest), clusterd.pids())),
      (r) => reads.listLeader.around(clusterd, leader, () => ctx.measureSpread(`cluster-reads: consistent LIST on leader ${leader}, round ${r + 1}`, on(leader, plan.clusterListConnections, listRequest), clusterd.pids())),
    ]);
    const leaderAfter = await clusterd.leader();
    const stable = leaderAfter === leader ? `leader ${leader} throughout` : `leader ${leader} then ${leaderAfter} (an election during the run: the figures mix roles)`;
    const batching = (f: ReadCounts, l: ReadCounts) => `; consistent reads per read-index request (warm-ups included) — on the follower ${f.perRequest()}, on the leader ${l.perRequest()}`;
    addRows(ctx, `3 replicas: consistent GET of one of ${count.toLocaleString('en-US')} pods, ${plan.getConnections} connections`, 'GETs/s', getFollower!, getLeader!, `${Math.round(listed.bytes / count)}-byte pods (mean as listed); follower ${follower}, ${stable}${batching(reads.getFollower, reads.getLeader)}`);
    addRows(ctx, `3 replicas: consistent LIST of ${count.toLocaleString('en-US')} pods, ${plan.clusterListConnections} connections`, 'LISTs/s', listFollower!, listLeader!, `${(listed.bytes / 1e6).toFixed(2)} MB per list; follower ${follower}, ${stable}${batching(reads.listFollower, reads.listLeader)}`);
  });
}

/**
 * The read barriers one replica served and the read-index requests it sent over the rounds of
 * one phase (from its Raft counters before and after each round): how many reads share a
 * request, the batching that keeps a follower's reads from costing a round of heartbeats each.
 */
class ReadCounts {
  private reads = 0;
  private requests = 0;

  async around(clusterd: ClusterdCluster, name: string, run: () => Promise<Measured>): Promise<Measured> {
    const before = (await raftSnapshot(clusterd)).get(name);
    const m = await run();
    const after = (await raftSnapshot(clusterd)).get(name);
    if (before && after) {
      this.reads += (after['reads_total'] ?? 0) - (before['reads_total'] ?? 0);
      this.requests += (after['read_index_requests_total'] ?? 0) - (before['read_index_requests_total'] ?? 0);
    }
    return m;
  }

  perRequest(): string {
    return this.requests > 0 ? `${(this.reads / this.requests).toFixed(1)} (${this.reads} reads, ${this.requests} requests)` : 'n/a';
  }
}

async function listCount(clusterd: ClusterdCluster, name: string, path: string): Promise<{ items: number; bytes: number }> {
  const client = adminClient(clusterd, name);
  try {
    const r = await client.get(path, { accept: 'application/json' });
    if (r.status !== 200) throw new Error(`list on ${name}: ${r.status} ${r.text().slice(0, 300)}`);
    return { items: r.json<{ items: unknown[] }>().items.length, bytes: r.body.length };
  } finally {
    client.close();
  }
}

function addRows(ctx: BenchContext, scenario: string, figure: string, follower: Measured, leader: Measured, what: string): void {
  const f = follower.result;
  const l = leader.result;
  const errors = Object.entries(f.errors).concat(Object.entries(l.errors)).map(([k, v]) => `${k}×${v}`).join(', ');
  const tput = ratioOf(f.okPerSecond, l.okPerSecond);
  const p99 = ratioOf(f.latency.p99Ms, l.latency.p99Ms);
  const note = `${what}; p50 ${f.latency.p50Ms} ms on the follower vs ${l.latency.p50Ms} ms on the leader; CPU of the three replicas together — follower reads: ${cpuNote('clusterd ×3', follower)}; leader reads: ${cpuNote('clusterd ×3', leader)}${errors ? `; errors ${errors}: ${f.firstError ?? l.firstError}` : ''}`;
  ctx.add({ scenario, figure: `${figure} on a follower`, unit: '/s', value: f.okPerSecond, baseline: { name: 'leader', value: l.okPerSecond }, ratio: tput, target: `≥ ${(1 / FOLLOWER_FACTOR).toFixed(2)} × leader (follower cost ≤ ${FOLLOWER_FACTOR} ×)`, holds: tput === null ? null : tput >= 1 / FOLLOWER_FACTOR, note });
  ctx.add({ scenario, figure: 'p99 latency on a follower', unit: 'ms', value: f.latency.p99Ms, baseline: { name: 'leader', value: l.latency.p99Ms }, ratio: p99, target: `≤ ${FOLLOWER_FACTOR} × leader`, holds: p99 === null ? null : p99 <= FOLLOWER_FACTOR });
}
