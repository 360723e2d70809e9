// bench/scenarios/writes owns the write rows: create pods with 32 in flight (fsync on) next to
// etcd puts of the same bytes, then unconditional updates (PUT) of those pods next to etcd
// overwrites, then their deletion next to etcd deletes. etcd is driven twice — through the
// etcd3 client (gRPC, as etcd's own clients talk to it) and through its v3 JSON gateway with
// the very generator the server gets — and the faster of the two is the baseline. Creates and
// updates alternate between the systems in rounds, after an unmeasured JIT warm-up of each
// system (BenchPlan.jitWarmupMs). The etcd3 client's load comes from two generator processes,
// half the puts in flight each, on disjoint key ranges: one Node process driving gRPC
// saturated its core near 4,300 puts/s, so etcd's figure was a lower bound (the bench's load
// generator check said so). Imports: context, load/protocol, report/rows.

import { cpuNote, CREATED, roundLabel, type BenchContext, type Measured } from '../context.js';
import type { EtcdJob, HttpJob, RequestTemplate } from '../load/protocol.js';
import { ratioOf, type Row } from '../report/rows.js';

const NAMESPACE = 'bench';

interface EtcdFigures {
  grpc: Measured;
  gateway: Measured;
  best: { name: string; measured: Measured };
}

/** Request numbers for one system across rounds: each round continues where the last stopped. */
class Sequence {
  next = 0;
  constructor(readonly start: number) {
    this.next = start;
  }
  get used(): number {
    return this.next - this.start;
  }
}

export async function writesScenario(ctx: BenchContext): Promise<void> {
  const { plan } = ctx;
  await ctx.ensureNamespace(NAMESPACE);
  const podPath = `/api/v1/namespaces/${NAMESPACE}/pods`;
  const createBody = ctx.pod({ namespace: NAMESPACE, name: 'bench-c-{n}' });
  const updateBody = ctx.pod({ namespace: NAMESPACE, name: 'bench-c-{m}', annotations: { 'bench/update': '{n}' } });
  // etcd stores what clusterd stores: the object as the server holds it after defaulting.
  const sample = await ctx.admin.post(podPath, JSON.parse(ctx.pod({ namespace: NAMESPACE, name: 'bench-c-sample' })));
  if (!CREATED.includes(sample.status)) throw new Error(`creating a sample pod: ${sample.status} ${sample.text().slice(0, 300)}`);
  await ctx.admin.delete(`${podPath}/bench-c-sample`);
  const etcdValue = sample.text();
  const etcdKey = `/registry/pods/${NAMESPACE}/bench-c-{n}`;
  const etcdKeyModulo = `/registry/pods/${NAMESPACE}/bench-c-{m}`;
  const roundMs = plan.durationMs / plan.rounds;
  const timed = { warmupMs: plan.warmupMs, durationMs: roundMs };
  const etcd = ctx.etcd;

  // create: clusterd names bench-c-0…; etcd's gRPC keys and gateway keys use disjoint ranges.
  const ours = new Sequence(0);
  // The two halves of the gRPC load: keys from 0 and from 500,000,000.
  const grpcKeys = [new Sequence(0), new Sequence(500_000_000)] as const;
  const gatewayKeys = new Sequence(1_000_000_000);
  const createPhases: ((round: number) => Promise<Measured>)[] = [
    async (r) => {
      const m = await ctx.measure(`create: clusterd, ${roundLabel(r)}`, ctx.serverJob({ ...ctx.timing(r, timed), connections: plan.writeInFlight, startIndex: ours.next, request: { method: 'POST', path: podPath, body: { template: createBody } }, okStatus: CREATED }), ctx.server.pid);
      ours.next = m.result.nextIndex;
      return m;
    },
  ];
  if (etcd) {
    createPhases.push(
      async (r) => {
        const m = await grpcHalves(ctx, `create: etcd (etcd3 gRPC), ${roundLabel(r)}`, (half) => ({ ...etcdBase(ctx), ...ctx.timing(r, timed), startIndex: grpcKeys[half].next, op: 'put', key: etcdKey, value: etcdValue }));
        grpcKeys.forEach((seq, half) => (seq.next = (m.parts?.[half] ?? m.result).nextIndex));
        return m;
      },
      async (r) => {
        const m = await ctx.measure(`create: etcd (JSON gateway), ${roundLabel(r)}`, gatewayJob(ctx, { ...ctx.timing(r, timed), startIndex: gatewayKeys.next }, { method: 'POST', path: '/v3/kv/put', body: { etcdKey, etcdValue } }), etcd.pid);
        gatewayKeys.next = m.result.nextIndex;
        return m;
      },
    );
  }
  // Unmeasured first: its pods stay (counted in created, updated and deleted with the rest).
  const [createWarm] = await ctx.warmUp(createPhases);
  const [create, createGrpc, createGateway] = await ctx.alternate(plan.rounds, createPhases);
  const created = ours.used;
  ctx.storedPods += create!.result.ok + (createWarm?.result.ok ?? 0);
  addWriteRows(ctx, 'create pods, 32 in flight, fsync on', 'creates/s', create!, figures(createGrpc, createGateway), '≥ 1.0 × etcd puts/s', (r) => r >= 1, `${Buffer.byteLength(createBody)}-byte request bodies; etcd puts the ${etcdValue.length}-byte object as clusterd serves it`);

  // update: unconditional PUTs spread over the pods just created; etcd overwrites its keys.
  const updatePhases: ((round: number) => Promise<Measured>)[] = [
    (r) => ctx.measure(`update: clusterd, ${roundLabel(r)}`, ctx.serverJob({ ...ctx.timing(r, timed), connections: plan.writeInFlight, modulo: created, startIndex: (r + 1) * 1_000_000, request: { method: 'PUT', path: `${podPath}/bench-c-{m}`, body: { template: updateBody } }, okStatus: [200] }), ctx.server.pid),
  ];
  if (etcd) {
    updatePhases.push(
      // Overwrites of the keys the first half created (0…), from both halves.
      (r) => grpcHalves(ctx, `update: etcd (etcd3 gRPC), ${roundLabel(r)}`, (half) => ({ ...etcdBase(ctx), ...ctx.timing(r, timed), startIndex: (r + 1) * 1_000_000 + half * 500_000, modulo: Math.max(1, grpcKeys[0].used), op: 'put', key: etcdKeyModulo, value: etcdValue })),
      (r) => ctx.measure(`update: etcd (JSON gateway), ${roundLabel(r)}`, gatewayJob(ctx, { ...ctx.timing(r, timed), startIndex: (r + 1) * 1_000_000, modulo: Math.max(1, grpcKeys[0].used) }, { method: 'POST', path: '/v3/kv/put', body: { etcdKey: etcdKeyModulo, etcdValue } }), etcd.pid),
    );
  }
  await ctx.warmUp(updatePhases);
  const [update, updateGrpc, updateGateway] = await ctx.alternate(plan.rounds, updatePhases);
  addWriteRows(ctx, 'update (PUT), 32 in flight', 'updates/s', update!, figures(updateGrpc, updateGateway), '≥ 1.0 × etcd puts/s', (r) => r >= 1, 'unconditional PUT (no resourceVersion) of the pods created above, changing an annotation; etcd overwrites the keys it created');

  // delete: every pod the create phase made, once; etcd deletes every key it wrote.
  const del = await ctx.measure('delete: clusterd', ctx.serverJob({ connections: plan.writeInFlight, warmupMs: 0, requests: created, request: { method: 'DELETE', path: `${podPath}/bench-c-{n}` }, okStatus: [200, 202] }), ctx.server.pid);
  ctx.storedPods -= del.result.ok;
  let etcdDelete: EtcdFigures | undefined;
  if (etcd) {
    const g = await grpcHalves(ctx, 'delete: etcd (etcd3 gRPC)', (half) => ({ ...etcdBase(ctx), warmupMs: 0, startIndex: grpcKeys[half].start, requests: grpcKeys[half].used, op: 'delete', key: etcdKey }));
    const w = await ctx.measure('delete: etcd (JSON gateway)', gatewayJob(ctx, { warmupMs: 0, startIndex: 1_000_000_000, requests: gatewayKeys.used }, { method: 'POST', path: '/v3/kv/deleterange', body: { etcdKey } }), etcd.pid);
    etcdDelete = figures(g, w);
  }
  addWriteRows(ctx, 'delete, 32 in flight', 'deletes/s', del, etcdDelete, 'reported', null, `deletes the ${created} pods created above, one request each; etcd deletes the keys it wrote`);
}

/**
 * An etcd3 (gRPC) job from two generator processes at once, half the writes in flight each
 * (`half` 0 or 1 picks each one's keys), measured together against etcd.
 */
function grpcHalves(ctx: BenchContext, label: string, job: (half: 0 | 1) => Omit<EtcdJob, 'inFlight'>): Promise<Measured> {
  const first = Math.ceil(ctx.plan.writeInFlight / 2);
  return ctx.measureSpread(label, [{ ...job(0), inFlight: first }, { ...job(1), inFlight: ctx.plan.writeInFlight - first }], [ctx.etcd!.pid]);
}

function etcdBase(ctx: BenchContext): Pick<EtcdJob, 'kind' | 'endpoint' | 'tls'> {
  return { kind: 'etcd', endpoint: ctx.etcd!.url, tls: ctx.tls };
}

function gatewayJob(ctx: BenchContext, shape: Partial<HttpJob> & { warmupMs: number }, request: RequestTemplate): HttpJob {
  return { kind: 'http', baseUrl: ctx.etcd!.url, tls: ctx.tls, connections: ctx.plan.writeInFlight, ...shape, request, okStatus: [200] };
}

function figures(grpc: Measured | undefined, gateway: Measured | undefined): EtcdFigures | undefined {
  if (!grpc || !gateway) return undefined;
  const best = grpc.result.okPerSecond >= gateway.result.okPerSecond ? { name: 'etcd3 gRPC', measured: grpc } : { name: 'etcd JSON gateway', measured: gateway };
  return { grpc, gateway, best };
}

function addWriteRows(
  ctx: BenchContext,
  scenario: string,
  figure: string,
  ours: Measured,
  etcd: EtcdFigures | undefined,
  target: string,
  check: ((ratio: number) => boolean) | null,
  what: string,
): void {
  const o = ours.result;
  const e = etcd?.best.measured.result;
  const ratio = ratioOf(o.okPerSecond, e?.okPerSecond);
  const errors = Object.entries(o.errors).map(([k, v]) => `${k}×${v}`).join(', ');
  const etcdNote = etcd
    ? `; etcd: gRPC ${Math.round(etcd.grpc.result.okPerSecond)}/s (p99 ${etcd.grpc.result.latency.p99Ms} ms), JSON gateway ${Math.round(etcd.gateway.result.okPerSecond)}/s (p99 ${etcd.gateway.result.latency.p99Ms} ms); ${cpuNote('etcd', etcd.best.measured)}`
    : '; etcd not installed';
  const note = `${what}; ${cpuNote('clusterd', ours)}${errors ? `; errors ${errors}: ${o.firstError}` : ''}${etcdNote}`;
  const baseline = e ? { baseline: { name: etcd!.best.name, value: e.okPerSecond } } : {};
  const rows: Row[] = [
    { scenario, figure, unit: '/s', value: o.okPerSecond, ...baseline, ratio, target, holds: check && ratio !== null ? check(ratio) : null, note },
    { scenario, figure: 'p99 latency', unit: 'ms', value: o.latency.p99Ms, ...(e ? { baseline: { name: etcd!.best.name, value: e.latency.p99Ms } } : {}), ratio: ratioOf(o.latency.p99Ms, e?.latency.p99Ms), target: 'reported', holds: null },
  ];
  for (const r of rows) ctx.add(r);
}
