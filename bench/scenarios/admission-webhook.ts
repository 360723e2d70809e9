// bench/scenarios/admission-webhook owns the row "creates through a no-op validating webhook":
// ConfigMap creates with 32 in flight into a namespace a validating webhook selects (a real
// HTTPS server on loopback in the bench process, allowing everything) next to the same creates
// into a namespace it does not select, alternating on the same server and connections. The
// issue asks for the cost per request: reported as the added mean latency and the server CPU
// per create, both next to the plain creates of the same run.
// Imports: context, report/rows, internal/testserver/https-webhook-server.

import { cpuNote, CREATED, type BenchContext, type Measured } from '../context.js';
import { ratioOf } from '../report/rows.js';
import { startHttpsWebhookServer } from '../../internal/testserver/https-webhook-server.js';

const SCENARIO = 'creates through a no-op validating webhook on loopback vs plain creates';
const HOOKED = 'bench-webhook';
const PLAIN = 'bench-webhook-plain';

function ok(what: string, r: { status: number; text(): string }): void {
  if (r.status >= 300 && r.status !== 409) throw new Error(`${what}: ${r.status} ${r.text().slice(0, 300)}`);
}

/** Core-milliseconds of server CPU per successful create. */
const cpuPerCreate = (m: Measured): number | null => (m.targetCpu === undefined || m.result.okPerSecond === 0 ? null : (m.targetCpu * 1000) / m.result.okPerSecond);

export async function admissionWebhookScenario(ctx: BenchContext): Promise<void> {
  const { plan } = ctx;
  const groups = ((await ctx.admin.get('/apis')).json<{ groups: { name: string }[] }>().groups ?? []).map((g) => g.name);
  const group = groups.find((g) => g.startsWith('admissionregistration.'));
  if (!group) throw new Error('the server serves no admissionregistration group');
  const hook = await startHttpsWebhookServer({
    handler: (r) => {
      const review = JSON.parse(r.body) as { apiVersion: string; request: { uid: string } };
      return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } };
    },
  });
  const configPath = `/apis/${group}/v1/validatingwebhookconfigurations`;
  try {
    ok('creating the hooked namespace', await ctx.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: HOOKED, labels: { 'bench-webhook': 'on' } } }));
    await ctx.ensureNamespace(PLAIN);
    ok(
      'creating the webhook configuration',
      await ctx.admin.post(configPath, {
        apiVersion: `${group}/v1`,
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'bench-noop' },
        webhooks: [
          {
            name: 'noop.bench.example.com',
            clientConfig: { url: `${hook.url}/validate`, caBundle: hook.caBundle },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
            namespaceSelector: { matchLabels: { 'bench-webhook': 'on' } },
            failurePolicy: 'Fail',
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      }),
    );
    // The configuration reaches the dispatcher through the watch cache: wait until it calls.
    for (let tries = 0; hook.received.length === 0; tries++) {
      if (tries > 100) throw new Error('the webhook is never called');
      ok('probing the webhook', await ctx.admin.post(`/api/v1/namespaces/${HOOKED}/configmaps?dryRun=All`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' } }));
      if (hook.received.length === 0) await new Promise((res) => setTimeout(res, 100));
    }
    const body = (prefix: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-{n}` }, data: { key: 'value' } });
    const job = (ns: string, start: number) => ctx.serverJob({ connections: plan.writeInFlight, warmupMs: plan.warmupMs, durationMs: plan.durationMs / plan.rounds, startIndex: start, request: { method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { template: body('c') } }, okStatus: CREATED });
    let plainNext = 0;
    let hookedNext = 0;
    const calls = hook.received.length;
    const [plain, hooked] = await ctx.alternate(plan.rounds, [
      async (r) => {
        const m = await ctx.measure(`plain creates, round ${r + 1}`, job(PLAIN, plainNext), ctx.server.pid);
        plainNext = m.result.nextIndex;
        return m;
      },
      async (r) => {
        const m = await ctx.measure(`creates through the webhook, round ${r + 1}`, job(HOOKED, hookedNext), ctx.server.pid);
        hookedNext = m.result.nextIndex;
        return m;
      },
    ]);
    const p = plain!.result;
    const h = hooked!.result;
    const reviews = hook.received.length - calls;
    // Every create through the webhook namespace was reviewed (warm-up included), none of the others.
    if (reviews < h.ok) throw new Error(`the webhook saw ${reviews} reviews for ${h.ok} creates`);
    const note = `ConfigMap creates, ${plan.writeInFlight} in flight, ${plan.rounds} alternating rounds; ${reviews} reviews answered; the webhook server runs in the bench process; ${cpuNote('clusterd (plain)', plain!)}; ${cpuNote('clusterd (webhook)', hooked!)}`;
    ctx.add({ scenario: SCENARIO, figure: 'creates/s (through the webhook)', unit: '/s', value: h.okPerSecond, baseline: { name: 'plain creates', value: p.okPerSecond }, ratio: ratioOf(h.okPerSecond, p.okPerSecond), target: 'reported', holds: null, note });
    ctx.add({ scenario: SCENARIO, figure: 'mean latency per create (through the webhook)', unit: 'ms', value: h.latency.meanMs, baseline: { name: 'plain creates', value: p.latency.meanMs }, ratio: ratioOf(h.latency.meanMs, p.latency.meanMs), target: 'reported', holds: null, note: `added per request: ${(h.latency.meanMs - p.latency.meanMs).toFixed(2)} ms` });
    const hc = cpuPerCreate(hooked!);
    const pc = cpuPerCreate(plain!);
    ctx.add({ scenario: SCENARIO, figure: 'server CPU per create (through the webhook)', unit: 'core-ms', value: hc, baseline: { name: 'plain creates', value: pc }, ratio: ratioOf(hc, pc), target: 'reported', holds: null, ...(hc === null || pc === null ? { note: 'n/a: no CPU figure for the server process' } : { note: `added per request: ${(hc - pc).toFixed(3)} core-ms` }) });
  } finally {
    await ctx.admin.delete(`${configPath}/bench-noop`).catch(() => undefined);
    await hook.close();
  }
}
