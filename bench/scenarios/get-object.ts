// bench/scenarios/get-object owns the row "get one object (2 KB pod), 64 connections":
// requests/s and latency of GET on one pod, next to the ceiling answering the same path with
// the bytes the server returned. Both are driven from two generator processes (one process
// alone saturates before the ceiling does) and alternate in rounds. Imports: context,
// report/rows.

import { cpuNote, CREATED, type BenchContext } from '../context.js';
import { ratioOf } from '../report/rows.js';

const NAMESPACE = 'bench';
const SCENARIO = 'get one object (2 KB pod), 64 connections';

export async function getObjectScenario(ctx: BenchContext): Promise<void> {
  const { plan } = ctx;
  await ctx.ensureNamespace(NAMESPACE);
  const created = await ctx.admin.post(`/api/v1/namespaces/${NAMESPACE}/pods`, JSON.parse(ctx.pod({ namespace: NAMESPACE, name: 'get-0' })));
  if (!CREATED.includes(created.status)) throw new Error(`creating the pod to get: ${created.status} ${created.text()}`);
  ctx.storedPods++;
  const path = `/api/v1/namespaces/${NAMESPACE}/pods/get-0`;
  const headers = { accept: 'application/json' };
  const real = await ctx.admin.get(path, headers);
  ctx.podBytes = real.body.length;
  await ctx.ceiling.route('GET', path, real.status, real.headers, real.body);

  const job = { connections: plan.getConnections, warmupMs: plan.warmupMs, durationMs: plan.durationMs / plan.rounds, request: { method: 'GET', path, headers }, okStatus: [200] };
  const [ours, ceiling] = await ctx.alternate(plan.rounds, [
    (r) => ctx.measure(`get: clusterd, round ${r + 1}`, ctx.serverJob(job), ctx.server.pid, { split: true }),
    (r) => ctx.measure(`get: ceiling, round ${r + 1}`, { kind: 'http', baseUrl: ctx.ceiling.url, tls: ctx.tls, ...job }, ctx.ceiling.pid, { split: true }),
  ]);
  const o = ours!.result;
  const c = ceiling!.result;
  const note = `${real.body.length}-byte responses, ${plan.rounds} alternating rounds; ${cpuNote('clusterd', ours!)}; ${cpuNote('ceiling', ceiling!)}`;
  const rps = ratioOf(o.okPerSecond, c.okPerSecond);
  ctx.add({ scenario: SCENARIO, figure: 'requests/s', unit: '/s', value: o.okPerSecond, baseline: { name: 'ceiling', value: c.okPerSecond }, ratio: rps, target: '≥ 0.5 × ceiling', holds: rps === null ? null : rps >= 0.5, note });
  ctx.add({ scenario: SCENARIO, figure: 'p50 latency', unit: 'ms', value: o.latency.p50Ms, baseline: { name: 'ceiling', value: c.latency.p50Ms }, ratio: ratioOf(o.latency.p50Ms, c.latency.p50Ms), target: 'reported', holds: null });
  ctx.add({ scenario: SCENARIO, figure: 'p99 latency', unit: 'ms', value: o.latency.p99Ms, baseline: { name: 'ceiling', value: c.latency.p99Ms }, ratio: ratioOf(o.latency.p99Ms, c.latency.p99Ms), target: 'reported', holds: null });
}
