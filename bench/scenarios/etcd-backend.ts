// bench/scenarios/etcd-backend owns the rows "3 servers on etcd ×3 vs 3 Raft replicas": creates
// of the bench's pod and GETs of one pod through three `clusterd --storage=etcd` processes on a
// three-member etcd, next to the same through three clusterd replicas on their own Raft group,
// the requests in flight spread evenly over the three servers. Systems alternate in rounds.
// The Raft cluster is the baseline (no target: the row says which is faster).
// Imports: internal/testserver (the test HTTPS client), context, load/protocol, report/rows, scenarios/cluster-setup, targets/clusterd-process.

import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CREATED, type BenchContext, type Measured } from '../context.js';
import type { HttpJob } from '../load/protocol.js';
import { ApiClient } from '../../internal/testserver/api-client.js';
import { ratioOf } from '../report/rows.js';
import { ClusterdProcess } from '../targets/clusterd-process.js';
import { adminClient, clusterPki, ensureNamespace, REPLICAS, spread, withClusters } from './cluster-setup.js';

const NAMESPACE = 'bench-etcd';

export async function etcdBackendScenario(ctx: BenchContext): Promise<void> {
  const { plan } = ctx;
  const pki = await clusterPki(ctx);
  await withClusters(ctx, 'etcd-backend', { etcd: true }, async (raft, etcd) => {
    if (!etcd) return;
    // Three servers on etcd with the cluster PKI (one CA, each its replica's serving certificate).
    const servers: ClusterdProcess[] = [];
    const untrack = ctx.track(async () => void (await Promise.all(servers.map((s) => s.stop()))));
    try {
      ctx.progress.step('etcd-backend: starting three clusterd --storage=etcd on the three etcd members');
      for (const name of REPLICAS) {
        const dataDir = join(ctx.scratchDir, `etcd-backend-${name}`);
        mkdirSync(join(dataDir, 'pki'), { recursive: true });
        cpSync(pki, join(dataDir, 'pki'), { recursive: true });
        cpSync(join(pki, 'replicas', name, 'apiserver.crt'), join(dataDir, 'pki', 'apiserver.crt'));
        cpSync(join(pki, 'replicas', name, 'apiserver.key'), join(dataDir, 'pki', 'apiserver.key'));
        const args = [
          '--storage=etcd',
          `--name=${name}`,
          `--etcd-servers=${REPLICAS.map((n) => etcd.url(n)).join(',')}`,
          `--etcd-cafile=${join(pki, 'ca.crt')}`,
          `--etcd-certfile=${join(pki, 'admin.crt')}`,
          `--etcd-keyfile=${join(pki, 'admin.key')}`,
          '--log-level=error',
        ];
        servers.push((await ClusterdProcess.start(dataDir, args)).server);
      }
      const podPath = `/api/v1/namespaces/${NAMESPACE}/pods`;
      const raftClient = adminClient(raft, await raft.leader());
      try {
        await ensureNamespace(raftClient, NAMESPACE);
      } finally {
        raftClient.close();
      }
      const etcdClient = new ApiClient(servers[0]!.url, { caPem: raft.tls.ca, certPem: raft.tls.cert, keyPem: raft.tls.key });
      try {
        await ensureNamespace(etcdClient, NAMESPACE);
        for (const c of [etcdClient, adminClient(raft, REPLICAS[0])]) {
          const r = await c.post(podPath, JSON.parse(ctx.pod({ namespace: NAMESPACE, name: 'bench-get' })));
          if (!CREATED.includes(r.status) && r.status !== 409) throw new Error(`creating the pod to get: ${r.status} ${r.text().slice(0, 300)}`);
        }
      } finally {
        etcdClient.close();
      }
      const timed = { warmupMs: plan.clusterWarmupMs, durationMs: plan.durationMs / plan.rounds, countBy: 'completion' as const };
      const inFlight = plan.clusterWriteInFlight[0]!;
      const shares = spread(inFlight, REPLICAS.length);
      const urls = { etcd: servers.map((s) => s.url), raft: REPLICAS.map((n) => raft.url(n)) };
      const pids = { etcd: [...servers.map((s) => s.pid), ...etcd.pids()], raft: raft.pids() };
      const next = { etcd: REPLICAS.map((_, i) => i * 1e9), raft: REPLICAS.map((_, i) => i * 1e9) };
      const createJobs = (system: 'etcd' | 'raft'): HttpJob[] =>
        urls[system].map((baseUrl, i) => ({ kind: 'http', baseUrl, tls: raft.tls, ...timed, connections: shares[i]!, startIndex: next[system][i]!, request: { method: 'POST', path: podPath, body: { template: ctx.pod({ namespace: NAMESPACE, name: `bench-e-{n}` }) } }, okStatus: CREATED }));
      const getJobs = (system: 'etcd' | 'raft'): HttpJob[] =>
        urls[system].map((baseUrl, i) => ({ kind: 'http', baseUrl, tls: raft.tls, ...timed, connections: shares[i]!, request: { method: 'GET', path: `${podPath}/bench-get` }, okStatus: [200] }));
      const advance = (seq: number[], m: Measured): Measured => {
        (m.parts ?? [m.result]).forEach((p, i) => (seq[i] = p.nextIndex));
        return m;
      };
      const [onEtcd, onRaft] = await ctx.alternate(plan.rounds, [
        async (r) => advance(next.etcd, await ctx.measureSpread(`etcd backend create ${inFlight}: clusterd ×3 on etcd ×3, round ${r + 1}`, createJobs('etcd'), pids.etcd)),
        async (r) => advance(next.raft, await ctx.measureSpread(`etcd backend create ${inFlight}: clusterd ×3 on Raft, round ${r + 1}`, createJobs('raft'), pids.raft)),
      ]);
      const [getEtcd, getRaft] = await ctx.alternate(plan.rounds, [
        async (r) => ctx.measureSpread(`etcd backend get ${inFlight}: clusterd ×3 on etcd ×3, round ${r + 1}`, getJobs('etcd'), pids.etcd),
        async (r) => ctx.measureSpread(`etcd backend get ${inFlight}: clusterd ×3 on Raft, round ${r + 1}`, getJobs('raft'), pids.raft),
      ]);
      const scenario = `3 servers on etcd ×3 vs 3 Raft replicas, ${inFlight} in flight (${shares.join('+')} per server)`;
      const e = onEtcd!.result;
      const r = onRaft!.result;
      const faster = e.okPerSecond >= r.okPerSecond ? 'etcd' : 'Raft';
      const note = `creates: on etcd ${Math.round(e.okPerSecond)}/s (p99 ${e.latency.p99Ms} ms), on Raft ${Math.round(r.okPerSecond)}/s (p99 ${r.latency.p99Ms} ms); ${faster} is faster. On etcd every write is a gRPC Txn to etcd's leader and returns once the server's own etcd watch delivers it (two hops and etcd's own fsync), and the three etcd members share the two cores with the three servers; on Raft the replica is the log (one hop to the leader, its fsync). GETs are served from each server's watch cache on both, so their cost is the same code`;
      ctx.add({ scenario, figure: 'creates/s', unit: '/s', value: e.okPerSecond, baseline: { name: 'clusterd ×3 on Raft', value: r.okPerSecond }, ratio: ratioOf(e.okPerSecond, r.okPerSecond), target: 'none (side by side)', holds: null, note });
      ctx.add({ scenario, figure: 'create p99', unit: 'ms', value: e.latency.p99Ms, baseline: { name: 'clusterd ×3 on Raft', value: r.latency.p99Ms }, ratio: ratioOf(e.latency.p99Ms, r.latency.p99Ms), target: 'none (side by side)', holds: null });
      ctx.add({ scenario, figure: 'GET p99', unit: 'ms', value: getEtcd!.result.latency.p99Ms, baseline: { name: 'clusterd ×3 on Raft', value: getRaft!.result.latency.p99Ms }, ratio: ratioOf(getEtcd!.result.latency.p99Ms, getRaft!.result.latency.p99Ms), target: 'none (side by side)', holds: null, note: `GETs/s: on etcd ${Math.round(getEtcd!.result.okPerSecond)}, on Raft ${Math.round(getRaft!.result.okPerSecond)}` });
    } finally {
      await Promise.all(servers.map((s) => s.stop().catch(() => undefined)));
      untrack();
    }
  });
}
