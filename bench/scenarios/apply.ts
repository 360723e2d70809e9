// bench/scenarios/apply owns the server-side apply row (issue 6): applies of a Deployment that
// three managers share (one owns the spec, one labels, one annotations), next to plain PUTs of
// the same object changing the same field. Several Deployments, so concurrent requests rarely
// touch the same one. The PUTs go to a second set of Deployments set up the same way: a PUT
// takes the field it changes from the applier, whose next apply of it would then conflict, and
// the two alternate in rounds after the unmeasured JIT warm-up of both (BenchPlan.jitWarmupMs),
// as the other rows do. Reported as n/a while the server does not serve apply patches.
// Imports: context, report/rows, scenarios/fixtures.

import { cpuNote, roundLabel, type BenchContext } from '../context.js';
import { notAvailable, ratioOf } from '../report/rows.js';
import { deploymentManifest } from './fixtures.js';

const NAMESPACE = 'bench-ssa';
const APPLY = 'application/apply-patch+yaml';
const NOT_SERVED = new Set([404, 405, 406, 415]);

export async function applyScenario(ctx: BenchContext): Promise<void> {
  const { plan } = ctx;
  const scenario = `server-side apply of a Deployment with three managers, ${plan.ssaDeployments} in flight`;
  await ctx.ensureNamespace(NAMESPACE);
  const base = `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`;
  const specOf = (name: string, rev: string) => {
    const d = deploymentManifest(NAMESPACE, name, 3);
    (d.metadata as Record<string, unknown>).annotations = { 'bench/rev': rev };
    return d;
  };
  // Set-up: manager A applies the spec, B labels, C annotations, on each Deployment of both sets.
  for (let i = 0; i < 2 * plan.ssaDeployments; i++) {
    const name = i < plan.ssaDeployments ? `bench-ssa-${i}` : `bench-put-${i - plan.ssaDeployments}`;
    const steps: [string, unknown][] = [
      ['bench-a', specOf(name, '0')],
      ['bench-b', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, labels: { team: 'bench', tier: 'web' } } }],
      ['bench-c', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, annotations: { 'bench/contact': 'bench@example.com', 'bench/purpose': 'apply benchmark' } } }],
    ];
    for (const [manager, body] of steps) {
      const r = await ctx.admin.request('PATCH', `${base}/${name}?fieldManager=${manager}`, { body, headers: { 'content-type': APPLY } });
      if (NOT_SERVED.has(r.status)) {
        const why = `feature not served yet (apply patch answered ${r.status})`;
        ctx.add(notAvailable(scenario, 'applies/s', 'reported', why));
        ctx.add(notAvailable(scenario, 'p99 latency', 'reported', why));
        return;
      }
      if (r.status !== 200 && r.status !== 201) throw new Error(`apply set-up (${manager} on ${name}): ${r.status} ${r.text().slice(0, 300)}`);
    }
  }
  const managers = (await ctx.admin.get(`${base}/bench-ssa-0`)).json<{ metadata: { managedFields?: unknown[] } }>().metadata.managedFields?.length ?? 0;

  const timed = { connections: plan.ssaDeployments, warmupMs: plan.warmupMs, durationMs: plan.durationMs / plan.rounds, modulo: plan.ssaDeployments };
  const applyBody = JSON.stringify(specOf('bench-ssa-{m}', '{n}'));
  // The PUT body: the stored object as a client would send it back, minus identity and version.
  const stored = (await ctx.admin.get(`${base}/bench-put-0`)).json<{ metadata: Record<string, unknown> }>();
  for (const k of ['uid', 'resourceVersion', 'managedFields', 'creationTimestamp', 'generation']) delete stored.metadata[k];
  stored.metadata.name = 'bench-put-{m}';
  stored.metadata.annotations = { ...(stored.metadata.annotations as Record<string, string>), 'bench/rev': '{n}' };
  const putBody = JSON.stringify(stored);
  // Each round starts its {n} where the last one stopped, so no apply or PUT repeats the
  // previous value of the field (a no-op write would be cheaper than the row means).
  const next = { ssa: 0, put: 0 };
  const phases = [
    async (r: number) => {
      const m = await ctx.measure(`apply: clusterd SSA, ${roundLabel(r)}`, ctx.serverJob({ ...ctx.timing(r, timed), startIndex: next.ssa, request: { method: 'PATCH', path: `${base}/bench-ssa-{m}?fieldManager=bench-a`, headers: { 'content-type': APPLY }, body: { template: applyBody } }, okStatus: [200] }), ctx.server.pid);
      next.ssa = m.result.nextIndex;
      return m;
    },
    async (r: number) => {
      const m = await ctx.measure(`apply: clusterd PUT, ${roundLabel(r)}`, ctx.serverJob({ ...ctx.timing(r, timed), startIndex: next.put, request: { method: 'PUT', path: `${base}/bench-put-{m}?fieldManager=bench-put`, body: { template: putBody } }, okStatus: [200] }), ctx.server.pid);
      next.put = m.result.nextIndex;
      return m;
    },
  ];
  await ctx.warmUp(phases);
  const [ssa, put] = await ctx.alternate(plan.rounds, phases);

  const s = ssa!.result;
  const p = put!.result;
  const errors = (r: typeof s) => Object.entries(r.errors).map(([k, v]) => `${k}×${v}`).join(', ');
  const note = `${managers} managedFields entries per Deployment before the run; apply: ${cpuNote('clusterd', ssa!)}; PUT: ${cpuNote('clusterd', put!)}${errors(s) ? `; apply errors ${errors(s)}: ${s.firstError}` : ''}${errors(p) ? `; PUT errors ${errors(p)}: ${p.firstError}` : ''}`;
  const applyRatio = ratioOf(s.okPerSecond, p.okPerSecond);
  ctx.add({ scenario, figure: 'applies/s', unit: '/s', value: s.okPerSecond, baseline: { name: 'PUT of the same object', value: p.okPerSecond }, ratio: applyRatio, target: '≥ 0.8 × PUT', holds: applyRatio === null ? null : applyRatio >= 0.8, note });
  ctx.add({ scenario, figure: 'p99 latency', unit: 'ms', value: s.latency.p99Ms, baseline: { name: 'PUT of the same object', value: p.latency.p99Ms }, ratio: ratioOf(s.latency.p99Ms, p.latency.p99Ms), target: 'reported', holds: null });
}
