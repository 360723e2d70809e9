// bench/scenarios/one-member owns the single-replica question: creates of the bench's 2 KB pod
// with the plan's writes in flight (32) on a one-member Raft group (--initial-cluster with one
// entry, a cluster PKI made for that one replica) next to a single replica on the local
// replicator (no --initial-cluster: group-commit fsync, no Raft), both fresh, fsync on, in
// alternating rounds. The ratio decides whether the local replicator stays: it does only if
// the one-member group costs more than 10 % of create throughput. A single replica runs on the
// local replicator, so the row holds when the measurement justifies keeping it (the rule is a
// decision, not a throughput target: a one-member group within 10 % would make the local
// replicator the thing to remove). Imports: context,
// report/rows, scenarios/cluster-setup, targets/*.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../../internal/testserver/api-client.js';
import { cpuNote, CREATED, type BenchContext } from '../context.js';
import type { HttpJob } from '../load/protocol.js';
import { ratioOf } from '../report/rows.js';
import { ClusterdCluster, makeClusterPki } from '../targets/clusterd-cluster.js';
import { ClusterdProcess } from '../targets/clusterd-process.js';
import { ensureNamespace } from './cluster-setup.js';

const NAMESPACE = 'bench';
/** The one-member group may cost at most this share of the local replicator's creates/s. */
const MAX_COST = 0.1;

export async function oneMemberScenario(ctx: BenchContext): Promise<void> {
  const { plan } = ctx;
  const dir = join(ctx.scratchDir, 'one-member');
  const pki = join(dir, 'pki');
  mkdirSync(dir, { recursive: true });
  await makeClusterPki(pki, ['a']);
  ctx.progress.step('one-member: starting a one-member Raft group and a single replica on the local replicator');
  const raft = await ClusterdCluster.start(join(dir, 'raft'), pki, ['a']);
  const untrackRaft = ctx.track(() => raft.stop());
  let local: ClusterdProcess | undefined;
  let untrackLocal: () => void = () => undefined;
  try {
    local = (await ClusterdProcess.start(join(dir, 'local'), ['--log-level=error'])).server;
    const started = local;
    untrackLocal = ctx.track(() => started.stop());
    const localTls = local.adminTls();
    for (const [url, tls] of [[raft.url('a'), raft.tls], [local.url, localTls]] as const) {
      const client = new ApiClient(url, { caPem: tls.ca, certPem: tls.cert, keyPem: tls.key });
      try {
        await ensureNamespace(client, NAMESPACE);
      } finally {
        client.close();
      }
    }
    const podPath = `/api/v1/namespaces/${NAMESPACE}/pods`;
    const body = ctx.pod({ namespace: NAMESPACE, name: 'bench-c-{n}' });
    // Completions inside each round's window count (see countBy), after a longer warm-up, on
    // connections opened before it (prime: TLS handshakes are not what is compared).
    const timed = { warmupMs: plan.clusterWarmupMs, durationMs: plan.durationMs / plan.rounds, countBy: 'completion' as const };
    const next = { raft: 0, local: 0 };
    const job = (baseUrl: string, tls: HttpJob['tls'], startIndex: number): HttpJob => ({ kind: 'http', baseUrl, tls, ...timed, connections: plan.writeInFlight, startIndex, prime: { method: 'GET', path: '/readyz' }, request: { method: 'POST', path: podPath, body: { template: body } }, okStatus: CREATED });
    const [oneMember, localRep] = await ctx.alternate(plan.rounds, [
      async (r) => {
        const m = await ctx.measure(`one-member: one-member Raft group, round ${r + 1}`, job(raft.url('a'), raft.tls, next.raft), raft.pid('a'));
        next.raft = m.result.nextIndex;
        return m;
      },
      async (r) => {
        const m = await ctx.measure(`one-member: local replicator, round ${r + 1}`, job(local!.url, localTls, next.local), local!.pid);
        next.local = m.result.nextIndex;
        return m;
      },
    ]);
    const o = oneMember!.result;
    const l = localRep!.result;
    const ratio = ratioOf(o.okPerSecond, l.okPerSecond);
    const scenario = `1 replica: one-member Raft group vs local replicator, create pods, ${plan.writeInFlight} in flight, fsync on`;
    // Whether the measurement justifies the local replicator a single replica runs (see header).
    const keepLocal = ratio === null ? null : ratio < 1 - MAX_COST;
    const cost = ratio === null ? '' : `the one-member group costs ${Math.max(0, (1 - ratio) * 100).toFixed(1)} %`;
    const verdict = keepLocal === null ? '' : keepLocal ? `${cost} (> ${MAX_COST * 100} %): keep the local replicator` : `${cost} (≤ ${MAX_COST * 100} %): by this measure the local replicator is not needed, and a single replica should run as a one-member group`;
    const errors = Object.entries(o.errors).concat(Object.entries(l.errors)).map(([k, v]) => `${k}×${v}`).join(', ');
    const note = `${verdict}; ${Buffer.byteLength(body)}-byte request bodies, ${plan.rounds} alternating rounds; p50 ${o.latency.p50Ms} ms vs ${l.latency.p50Ms} ms; ${cpuNote('one-member group', oneMember!)}; ${cpuNote('local replicator', localRep!)}${errors ? `; errors ${errors}: ${o.firstError ?? l.firstError}` : ''}`;
    ctx.add({ scenario, figure: 'creates/s', unit: '/s', value: o.okPerSecond, baseline: { name: 'local replicator', value: l.okPerSecond }, ratio, target: `< ${1 - MAX_COST} × local replicator, which a single replica keeps only then`, holds: keepLocal, note });
    ctx.add({ scenario, figure: 'p99 latency', unit: 'ms', value: o.latency.p99Ms, baseline: { name: 'local replicator', value: l.latency.p99Ms }, ratio: ratioOf(o.latency.p99Ms, l.latency.p99Ms), target: 'reported', holds: null });
  } finally {
    ctx.progress.step('one-member: stopping both servers');
    await local?.stop().catch(() => undefined);
    untrackLocal();
    await raft.stop().catch(() => undefined);
    untrackRaft();
  }
}
