// bench/scenarios/admission-policy owns the row "creates through a ValidatingAdmissionPolicy":
// pod creates (32 in flight, fsync on) in a namespace one validating policy with three CEL
// rules applies to, next to the same creates in a namespace it does not select, alternating on
// the same server, after an unmeasured JIT warm-up of both (BenchPlan.jitWarmupMs). The
// policy is compiled once (per generation) and evaluated per request; the target is
// ≥ 0.8 × the plain creates.
// Imports: context, report/rows.

import { cpuNote, CREATED, roundLabel, type BenchContext } from '../context.js';
import { ratioOf } from '../report/rows.js';

const PLAIN = 'bench-vap-plain';
const GUARDED = 'bench-vap-policy';
const SCENARIO = 'create pods through a ValidatingAdmissionPolicy (3 CEL rules) vs plain creates';
const POLICY = 'bench-three-rules';

/** Three rules of the kinds policies carry: a name check, a macro over containers, a label check. */
const RULES = [
  { expression: "object.metadata.name.startsWith('vap-')", message: 'pod names start with vap-' },
  { expression: "object.spec.containers.all(c, c.image != '' && !c.image.endsWith(':latest'))", message: 'images are pinned' },
  { expression: "!has(object.metadata.labels) || !('forbidden' in object.metadata.labels)", message: 'no forbidden label' },
];

function ok(what: string, r: { status: number; text(): string }): void {
  if (!CREATED.includes(r.status) && r.status !== 409) throw new Error(`${what}: ${r.status} ${r.text().slice(0, 300)}`);
}

export async function admissionPolicyScenario(ctx: BenchContext): Promise<void> {
  const { plan } = ctx;
  const groups = ((await ctx.admin.get('/apis')).json<{ groups: { name: string }[] }>().groups ?? []).map((g) => g.name);
  const ar = groups.find((g) => g.startsWith('admissionregistration.'));
  if (!ar) throw new Error('the server serves no admissionregistration group');
  await ctx.ensureNamespace(PLAIN);
  ok('creating the policy namespace', await ctx.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: GUARDED, labels: { 'bench-vap': 'on' } } }));
  ok('creating the policy', await ctx.admin.post(`/apis/${ar}/v1/validatingadmissionpolicies`, {
    apiVersion: `${ar}/v1`,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: POLICY },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }], namespaceSelector: { matchLabels: { 'bench-vap': 'on' } } },
      validations: RULES,
    },
  }));
  ok('creating the binding', await ctx.admin.post(`/apis/${ar}/v1/validatingadmissionpolicybindings`, { apiVersion: `${ar}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: POLICY }, spec: { policyName: POLICY, validationActions: ['Deny'] } }));
  // The policy is in force once a pod it refuses is refused.
  for (let tries = 0; ; tries++) {
    const r = await ctx.admin.post(`/api/v1/namespaces/${GUARDED}/pods?dryRun=All`, JSON.parse(ctx.pod({ namespace: GUARDED, name: 'refused' })));
    if (r.status === 422) break;
    if (tries > 100) throw new Error(`the policy does not refuse a pod it should: ${r.status} ${r.text().slice(0, 300)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
  const timed = { warmupMs: plan.warmupMs, durationMs: plan.durationMs / plan.rounds };
  const next = { [PLAIN]: 0, [GUARDED]: 0 };
  const phase = (ns: typeof PLAIN | typeof GUARDED, label: string) => async (r: number) => {
    const body = ctx.pod({ namespace: ns, name: 'vap-{n}' });
    const m = await ctx.measure(`${label}, ${roundLabel(r)}`, ctx.serverJob({ ...ctx.timing(r, timed), connections: plan.writeInFlight, startIndex: next[ns], request: { method: 'POST', path: `/api/v1/namespaces/${ns}/pods`, body: { template: body } }, okStatus: CREATED }), ctx.server.pid);
    next[ns] = m.result.nextIndex;
    return m;
  };
  const phases = [phase(PLAIN, 'create: no policy applies'), phase(GUARDED, 'create: through the policy')];
  // The policy's code (CEL evaluation, matching) is cold when the scenario starts; unwarmed,
  // whichever phase ran first paid for its compilation (round 1's plain creates, mostly).
  const warm = await ctx.warmUp(phases);
  const [plain, guarded] = await ctx.alternate(plan.rounds, phases);
  ctx.storedPods += plain!.result.ok + guarded!.result.ok + warm.reduce((n, m) => n + m.result.ok, 0);
  const p = plain!.result;
  const g = guarded!.result;
  const ratio = ratioOf(g.okPerSecond, p.okPerSecond);
  const note = `${plan.writeInFlight} in flight; ${plan.rounds} alternating rounds; ${cpuNote('clusterd (plain)', plain!)}; ${cpuNote('clusterd (policy)', guarded!)}`;
  ctx.add({ scenario: SCENARIO, figure: 'creates/s through the policy', unit: '/s', value: g.okPerSecond, baseline: { name: 'plain creates', value: p.okPerSecond }, ratio, target: '≥ 0.8 × plain creates', holds: ratio === null ? null : ratio >= 0.8, note });
  ctx.add({ scenario: SCENARIO, figure: 'p99 latency through the policy', unit: 'ms', value: g.latency.p99Ms, baseline: { name: 'plain creates', value: p.latency.p99Ms }, ratio: ratioOf(g.latency.p99Ms, p.latency.p99Ms), target: 'reported', holds: null });
}
