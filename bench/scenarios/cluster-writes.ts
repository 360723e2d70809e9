// bench/scenarios/cluster-writes owns the rows "3 replicas: create pods, N in flight": creates of
// the bench's 2 KB pod through three clusterd replicas (Raft, fsync on), the requests in
// flight spread evenly over the three replicas from three generator processes (one per
// replica), next to a three-member etcd taking puts of the same object, the same number in
// flight spread the same way over its members. As in the writes scenario etcd is driven
// through the etcd3 client (gRPC) and through its v3 JSON gateway with the very generator
// clusterd gets, and the faster of the two is the baseline. Before the first level every
// system gets the unmeasured JIT warm-up (BenchPlan.jitWarmupMs): the replicas are fresh. Systems alternate in rounds; each
// round opens its connections first (prime) and counts the creates completing inside its
// window (steady state, see countBy).
// Targets: at least etcd's throughput, p99 within 1.5 × etcd's. Imports: context,
// load/protocol, report/rows, scenarios/cluster-setup.

import { cpuNote, CREATED, roundLabel, WARMUP_ROUND, type BenchContext, type Measured } from '../context.js';
import { mergeSequential } from '../load/merge.js';
import type { EtcdJob, HttpJob, HttpLoadResult } from '../load/protocol.js';
import { ratioOf } from '../report/rows.js';
import { adminClient, ensureNamespace, raftNote, raftSnapshot, REPLICAS, spread, withClusters } from './cluster-setup.js';

const NAMESPACE = 'bench';

export async function clusterWritesScenario(ctx: BenchContext): Promise<void> {
  const { plan } = ctx;
  await withClusters(ctx, 'cluster-writes', { etcd: true }, async (clusterd, etcd) => {
    const leaderBefore = await clusterd.leader();
    const client = adminClient(clusterd, leaderBefore);
    const podPath = `/api/v1/namespaces/${NAMESPACE}/pods`;
    let etcdValue: string;
    try {
      await ensureNamespace(client, NAMESPACE);
      const sample = await client.post(podPath, JSON.parse(ctx.pod({ namespace: NAMESPACE, name: 'bench-c-sample' })));
      if (!CREATED.includes(sample.status)) throw new Error(`creating a sample pod: ${sample.status} ${sample.text().slice(0, 300)}`);
      await client.delete(`${podPath}/bench-c-sample`);
      etcdValue = sample.text();
    } finally {
      client.close();
    }
    const createBody = ctx.pod({ namespace: NAMESPACE, name: 'bench-c-{n}' });
    const etcdKey = `/registry/pods/${NAMESPACE}/bench-c-{n}`;
    // Completions inside each round's window count (see countBy), after a longer warm-up.
    const timed = { warmupMs: plan.clusterWarmupMs, durationMs: plan.durationMs / plan.rounds, countBy: 'completion' as const };
    // Every round's HTTP/1.1 connections (one per request in flight) are opened before its
    // warm-up starts: with 256 in flight their TLS handshakes otherwise fell into the measured
    // window on the loaded cores, which measured connection set-up rather than the steady
    // write rate (etcd's gRPC generator opens one connection; the JSON gateway is primed alike).
    const primeClusterd = { method: 'GET', path: '/readyz' };
    const primeGateway = { method: 'GET', path: '/health' };
    // Request numbers: generator i uses i × 10⁹ onwards (clusterd's names, etcd's gRPC keys),
    // etcd's gateway keys i × 10⁹ + 5 × 10⁸ onwards; each round continues where the last stopped.
    const next = { clusterd: REPLICAS.map((_, i) => i * 1e9), grpc: REPLICAS.map((_, i) => i * 1e9), gateway: REPLICAS.map((_, i) => i * 1e9 + 5e8) };
    const advance = (seq: number[], m: Measured): Measured => {
      (m.parts ?? [m.result]).forEach((p, i) => (seq[i] = p.nextIndex));
      return m;
    };

    let warmed = false;
    for (const inFlight of plan.clusterWriteInFlight) {
      const shares = spread(inFlight, REPLICAS.length);
      let raft = '';
      // Each replica's own clients over the rounds (does a follower's client fare worse?).
      const perReplica: HttpLoadResult[][] = REPLICAS.map(() => []);
      const phases: ((round: number) => Promise<Measured>)[] = [
        async (r) => {
          const before = await raftSnapshot(clusterd);
          const jobs: HttpJob[] = REPLICAS.map((name, i) => ({ kind: 'http', baseUrl: clusterd.url(name), tls: clusterd.tls, ...ctx.timing(r, timed), connections: shares[i]!, startIndex: next.clusterd[i]!, prime: primeClusterd, request: { method: 'POST', path: podPath, body: { template: createBody } }, okStatus: CREATED }));
          const m = advance(next.clusterd, await ctx.measureSpread(`cluster create ${inFlight}: clusterd ×3, ${roundLabel(r)}`, jobs, clusterd.pids()));
          if (r === WARMUP_ROUND) return m;
          (m.parts ?? [m.result]).forEach((p, i) => perReplica[i]!.push(p));
          raft = await raftNote(clusterd, before, leaderBefore);
          ctx.progress.step(`  ${raft}`);
          return m;
        },
      ];
      if (etcd) {
        phases.push(
          async (r) => {
            const label = `cluster create ${inFlight}: etcd ×3 (etcd3 gRPC), ${roundLabel(r)}`;
            const jobs: EtcdJob[] = REPLICAS.map((name, i) => ({ kind: 'etcd', endpoint: etcd.url(name), tls: clusterd.tls, ...ctx.timing(r, timed), inFlight: shares[i]!, startIndex: next.grpc[i]!, op: 'put', key: etcdKey, value: etcdValue }));
            return advance(next.grpc, await ctx.measureSpread(label, jobs, etcd.pids()));
          },
          async (r) => {
            const label = `cluster create ${inFlight}: etcd ×3 (JSON gateway), ${roundLabel(r)}`;
            const jobs: HttpJob[] = REPLICAS.map((name, i) => ({ kind: 'http', baseUrl: etcd.url(name), tls: clusterd.tls, ...ctx.timing(r, timed), connections: shares[i]!, startIndex: next.gateway[i]!, prime: primeGateway, request: { method: 'POST', path: '/v3/kv/put', body: { etcdKey, etcdValue } }, okStatus: [200] }));
            return advance(next.gateway, await ctx.measureSpread(label, jobs, etcd.pids()));
          },
        );
      }
      // The JIT warm-up (BenchPlan.jitWarmupMs) once, at the first level: fresh replicas.
      if (!warmed) await ctx.warmUp(phases);
      warmed = true;
      const [ours, grpc, gateway] = await ctx.alternate(plan.rounds, phases);
      const leaderAfter = await clusterd.leader();
      const byReplica = REPLICAS.map((name, i) => {
        const x = mergeSequential(perReplica[i]!);
        return `${name}${name === leaderBefore ? ' (leader)' : ''} ${Math.round(x.okPerSecond)}/s, p50 ${x.latency.p50Ms} ms, p99 ${x.latency.p99Ms} ms`;
      });
      const best = grpc && gateway ? (grpc.result.okPerSecond >= gateway.result.okPerSecond ? { name: 'etcd ×3, etcd3 gRPC', m: grpc } : { name: 'etcd ×3, JSON gateway', m: gateway }) : undefined;
      const o = ours!.result;
      const e = best?.m.result;
      const scenario = `3 replicas: create pods, ${inFlight} in flight (${shares.join('+')} per replica), fsync on`;
      const errors = Object.entries(o.errors).map(([k, v]) => `${k}×${v}`).join(', ');
      const etcdNote = best
        ? `etcd (3 members): gRPC ${Math.round(grpc!.result.okPerSecond)}/s (p50 ${grpc!.result.latency.p50Ms} ms, p99 ${grpc!.result.latency.p99Ms} ms), JSON gateway ${Math.round(gateway!.result.okPerSecond)}/s (p50 ${gateway!.result.latency.p50Ms} ms, p99 ${gateway!.result.latency.p99Ms} ms); ${cpuNote('etcd ×3', best.m)}`
        : 'etcd not installed';
      const note = [
        `${Buffer.byteLength(createBody)}-byte request bodies, the ${etcdValue.length}-byte object as clusterd serves it for etcd`,
        `clusterd p50 ${o.latency.p50Ms} ms; by the replica the clients talk to: ${byReplica.join(', ')}; leader ${leaderBefore}${leaderAfter !== leaderBefore ? ` then ${leaderAfter} (an election during the run)` : ' throughout'}`,
        `${cpuNote('clusterd ×3', ours!)}${errors ? `; errors ${errors}: ${o.firstError}` : ''}`,
        etcdNote,
        `${raft} (last round)`,
      ].join('; ');
      const tput = ratioOf(o.okPerSecond, e?.okPerSecond);
      const p99 = ratioOf(o.latency.p99Ms, e?.latency.p99Ms);
      ctx.add({ scenario, figure: 'creates/s', unit: '/s', value: o.okPerSecond, ...(e ? { baseline: { name: best!.name, value: e.okPerSecond } } : {}), ratio: tput, target: '≥ 1.0 × etcd puts/s', holds: tput === null ? null : tput >= 1, note });
      ctx.add({ scenario, figure: 'p99 latency', unit: 'ms', value: o.latency.p99Ms, ...(e ? { baseline: { name: best!.name, value: e.latency.p99Ms } } : {}), ratio: p99, target: '≤ 1.5 × etcd', holds: p99 === null ? null : p99 <= 1.5 });
    }
  });
}
