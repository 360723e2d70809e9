// bench/scenarios/get-object owns the row "get one object (2 KB pod), 64 connections":
// requests/s and latency of GET on one pod, next to the ceiling answering the same path with
// the bytes the server returned. Both are driven from two generator processes (one process
// alone saturates before the ceiling does) and alternate in rounds, after the unmeasured JIT
// warm-up of both (BenchPlan.jitWarmupMs). The same GETs over HTTP/2, as kubectl and client-go
// send theirs (streams multiplexed on a few connections), next to the ceiling's HTTP/2 server:
// a per-request cost of clusterd's HTTP/2 path shows there and nowhere else. It also owns the
// authentication row of the same run: the same GETs authenticated by a service-account token
// (minted once by TokenRequest, so every request after the first takes the verification
// cache's hit path) against a client certificate, alternating on the same server and path.
// Imports: context, report/rows.

import { cpuNote, CREATED, roundLabel, type BenchContext } from '../context.js';
import { ratioOf } from '../report/rows.js';
import { ApiClient } from '../../internal/testserver/api-client.js';

const NAMESPACE = 'bench';
const SCENARIO = 'get one object (2 KB pod), 64 connections';
const H2_SCENARIO = 'get one object (2 KB pod) over HTTP/2, 16 streams per connection';
/** HTTP/2 streams in flight on each connection of the HTTP/2 GET row. */
const H2_STREAMS = 16;
const AUTHN_SCENARIO = 'authenticated GETs: service-account token vs client certificate';
const READER = 'bench-reader';

type Status = { status: number; text(): string };
const ok = (what: string, r: Status): void => {
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text()}`);
};

/**
 * A token of the service account `bench-reader`, and the path it GETs: the pod when the account
 * may read it, else `/version` (readable by every user) while the server has no authorization
 * that could grant it the pod (the role and binding are created all the same, for when it has).
 */
async function serviceAccountReader(ctx: BenchContext, podPath: string): Promise<{ token: string; path: string }> {
  const groups = ((await ctx.admin.get('/apis')).json<{ groups: { name: string }[] }>().groups ?? []).map((g) => g.name);
  const authn = groups.find((g) => g.startsWith('authentication.'));
  if (!authn) throw new Error('the server serves no authentication group');
  const rbac = groups.find((g) => g.startsWith('rbac.authorization.'));
  const sa = await ctx.admin.post(`/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: READER } });
  if (sa.status !== 409) ok('creating the service account', sa);
  if (rbac) {
    const base = `/apis/${rbac}/v1/namespaces/${NAMESPACE}`;
    const role = { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name: READER }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] };
    const binding = { apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: { name: READER }, roleRef: { apiGroup: rbac, kind: 'Role', name: READER }, subjects: [{ kind: 'ServiceAccount', name: READER, namespace: NAMESPACE }] };
    for (const [what, r] of [['role', await ctx.admin.post(`${base}/roles`, role)], ['role binding', await ctx.admin.post(`${base}/rolebindings`, binding)]] as const) if (r.status !== 409) ok(`creating the ${what}`, r);
  }
  const minted = await ctx.admin.post(`/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${READER}/token`, { apiVersion: `${authn}/v1`, kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
  ok('requesting a token', minted);
  const token = minted.json<{ status: { token: string } }>().status.token;
  const client = new ApiClient(ctx.server.url, { caPem: ctx.tls.ca });
  try {
    const authorization = `Bearer ${token}`;
    const pod = await client.get(podPath, { authorization });
    if (pod.status === 200) return { token, path: podPath };
    if (pod.status !== 403) throw new Error(`GET with the service-account token: ${pod.status} ${pod.text()}`);
    ok('GET /version with the service-account token', await client.get('/version', { authorization }));
    return { token, path: '/version' };
  } finally {
    client.close();
  }
}

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
  const phases = [
    (r: number) => ctx.measure(`get: clusterd, ${roundLabel(r)}`, ctx.serverJob(ctx.timing(r, job)), ctx.server.pid, { split: true }),
    (r: number) => ctx.measure(`get: ceiling, ${roundLabel(r)}`, { kind: 'http', baseUrl: ctx.ceiling.url, tls: ctx.tls, ...ctx.timing(r, job) }, ctx.ceiling.pid, { split: true }),
  ];
  // This is the first load a fresh server sees: without the unmeasured JIT warm-up the write
  // rows get (BenchPlan.jitWarmupMs), its first round measured the compiler (a quick run's
  // round 1 gave 4,466/s, round 2 10,051/s), while the ceiling's few functions compile at once.
  await ctx.warmUp(phases);
  const [ours, ceiling] = await ctx.alternate(plan.rounds, phases);
  const o = ours!.result;
  const c = ceiling!.result;
  const note = `${real.body.length}-byte responses, ${plan.rounds} alternating rounds; ${cpuNote('clusterd', ours!)}; ${cpuNote('ceiling', ceiling!)}`;
  const rps = ratioOf(o.okPerSecond, c.okPerSecond);
  ctx.add({ scenario: SCENARIO, figure: 'requests/s', unit: '/s', value: o.okPerSecond, baseline: { name: 'ceiling', value: c.okPerSecond }, ratio: rps, target: '≥ 0.7 × ceiling', holds: rps === null ? null : rps >= 0.7, note });
  ctx.add({ scenario: SCENARIO, figure: 'p50 latency', unit: 'ms', value: o.latency.p50Ms, baseline: { name: 'ceiling', value: c.latency.p50Ms }, ratio: ratioOf(o.latency.p50Ms, c.latency.p50Ms), target: 'reported', holds: null });
  ctx.add({ scenario: SCENARIO, figure: 'p99 latency', unit: 'ms', value: o.latency.p99Ms, baseline: { name: 'ceiling', value: c.latency.p99Ms }, ratio: ratioOf(o.latency.p99Ms, c.latency.p99Ms), target: 'reported', holds: null });

  // The same GETs over HTTP/2: the request count in flight as streams, H2_STREAMS per connection.
  const h2Url = await ctx.ceiling.http2Url();
  const h2Job = { ...job, streamsPerConnection: H2_STREAMS };
  const [ours2, ceiling2] = await ctx.alternate(plan.rounds, [
    (r: number) => ctx.measure(`get over HTTP/2: clusterd, ${roundLabel(r)}`, ctx.serverJob(ctx.timing(r, h2Job)), ctx.server.pid, { split: true }),
    (r: number) => ctx.measure(`get over HTTP/2: ceiling, ${roundLabel(r)}`, { kind: 'http', baseUrl: h2Url, tls: ctx.tls, ...ctx.timing(r, h2Job) }, ctx.ceiling.pid, { split: true }),
  ]);
  const o2 = ours2!.result;
  const c2 = ceiling2!.result;
  const note2 = `${job.connections} requests in flight as HTTP/2 streams, ${H2_STREAMS} per connection, from two generator processes; the ceiling is a bare node:http2 server with the same certificate check and bytes; ${plan.rounds} alternating rounds; ${cpuNote('clusterd', ours2!)}; ${cpuNote('ceiling', ceiling2!)}; over HTTP/1.1 above: ${Math.round(o.okPerSecond)}/s`;
  ctx.add({ scenario: H2_SCENARIO, figure: 'requests/s', unit: '/s', value: o2.okPerSecond, baseline: { name: 'ceiling (HTTP/2)', value: c2.okPerSecond }, ratio: ratioOf(o2.okPerSecond, c2.okPerSecond), target: 'reported', holds: null, note: note2 });
  ctx.add({ scenario: H2_SCENARIO, figure: 'p99 latency', unit: 'ms', value: o2.latency.p99Ms, baseline: { name: 'ceiling (HTTP/2)', value: c2.latency.p99Ms }, ratio: ratioOf(o2.latency.p99Ms, c2.latency.p99Ms), target: 'reported', holds: null });

  // The same GETs, same connections, authenticated two ways in alternating rounds.
  const reader = await serviceAccountReader(ctx, path);
  const { cert: _cert, key: _key, ...caOnly } = ctx.tls;
  const byCert = { ...job, request: { method: 'GET', path: reader.path, headers } };
  const byToken = { ...byCert, request: { method: 'GET', path: reader.path, headers: { ...headers, authorization: `Bearer ${reader.token}` } } };
  const [cert, token] = await ctx.alternate(plan.rounds, [
    (r) => ctx.measure(`get: client certificate, round ${r + 1}`, ctx.serverJob(byCert), ctx.server.pid, { split: true }),
    (r) => ctx.measure(`get: service-account token, round ${r + 1}`, { kind: 'http', baseUrl: ctx.server.url, tls: caOnly, ...byToken }, ctx.server.pid, { split: true }),
  ]);
  const k = cert!.result;
  const t = token!.result;
  const what = reader.path === path ? `GET of the ${real.body.length}-byte pod` : 'GET /version (the account may not read the pod: no authorization grants it yet)';
  const authNote = `${what}, ${plan.rounds} alternating rounds; ${cpuNote('clusterd (certificate)', cert!)}; ${cpuNote('clusterd (token)', token!)}`;
  const ratio = ratioOf(t.okPerSecond, k.okPerSecond);
  ctx.add({ scenario: AUTHN_SCENARIO, figure: 'requests/s (token, cache hit)', unit: '/s', value: t.okPerSecond, baseline: { name: 'client certificate', value: k.okPerSecond }, ratio, target: '≥ 0.9 × client certificate', holds: ratio === null ? null : ratio >= 0.9, note: authNote });
  // Per CPU-second of the server: less at the mercy of other processes on a shared machine.
  const perCpu = (m: typeof cert): number | null => {
    const used = m!.targetCpu;
    return used !== undefined && used > 0 ? m!.result.okPerSecond / used : null;
  };
  const tc = perCpu(token);
  const kc = perCpu(cert);
  ctx.add({ scenario: AUTHN_SCENARIO, figure: 'requests per server CPU-second (token)', unit: '/s', value: tc, baseline: { name: 'client certificate', value: kc }, ratio: tc === null || kc === null ? null : ratioOf(tc, kc), target: 'reported', holds: null, ...(tc === null || kc === null ? { note: 'n/a: the server\'s CPU could not be read' } : {}) });
  ctx.add({ scenario: AUTHN_SCENARIO, figure: 'p50 latency (token)', unit: 'ms', value: t.latency.p50Ms, baseline: { name: 'client certificate', value: k.latency.p50Ms }, ratio: ratioOf(t.latency.p50Ms, k.latency.p50Ms), target: 'reported', holds: null });
}
