// bench/scenarios/authz owns the row "authorized reads among 10,000 RBAC objects": GET of one
// pod and LIST of a small collection by a user whose only right is a RoleBinding, next to the
// same requests by a system:masters user (who bypasses every authorizer), alternating on the
// same server, paths and connections. The RBAC objects of other users (roles, cluster roles
// and their bindings, a quarter in the namespace that is read) are what upstream's authorizer
// pays for on every request; the target is ≥ 0.9 × the masters figure.
// Imports: context, report/rows.

import { cpuNote, CREATED, type BenchContext } from '../context.js';
import { ratioOf } from '../report/rows.js';
import { ApiClient } from '../../internal/testserver/api-client.js';

const NAMESPACE = 'bench-rbac';
const SCENARIO = 'authorized reads: RoleBinding user among RBAC objects vs system:masters';
const READER = 'bench-rbac-reader';
const LIST_PODS = 10;

function ok(what: string, r: { status: number; text(): string }): void {
  if (r.status >= 300 && r.status !== 409) throw new Error(`${what}: ${r.status} ${r.text()}`);
}

/** `count` objects from one template (`{n}` numbers them), created as fast as the server takes them. */
async function fill(ctx: BenchContext, what: string, path: string, template: object, count: number): Promise<void> {
  const { result } = await ctx.measure(`fill ${what}`, ctx.serverJob({ connections: 32, warmupMs: 0, requests: count, request: { method: 'POST', path, body: { template: JSON.stringify(template) } }, okStatus: CREATED }), ctx.server.pid);
  if (result.ok !== count) throw new Error(`creating ${what}: ${result.ok} of ${count} created (${result.firstError})`);
}

/** The RBAC objects of `total` / 4 other users: a role, a cluster role and a binding of each. */
async function otherUsersPolicy(ctx: BenchContext, rbac: string, total: number): Promise<void> {
  const each = Math.max(1, Math.floor(total / 4));
  const rule = { apiGroups: ['', 'apps'], resources: ['pods', 'deployments', 'configmaps'], verbs: ['get', 'list', 'watch'], resourceNames: ['thing-{n}'] };
  const user = { kind: 'User', apiGroup: rbac, name: 'other-{n}' };
  const ns = `/apis/${rbac}/v1/namespaces/${NAMESPACE}`;
  await fill(ctx, `${each} roles`, `${ns}/roles`, { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name: 'other-{n}' }, rules: [rule] }, each);
  await fill(ctx, `${each} role bindings`, `${ns}/rolebindings`, { apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: { name: 'other-{n}' }, roleRef: { apiGroup: rbac, kind: 'Role', name: 'other-{n}' }, subjects: [user] }, each);
  await fill(ctx, `${each} cluster roles`, `/apis/${rbac}/v1/clusterroles`, { apiVersion: `${rbac}/v1`, kind: 'ClusterRole', metadata: { name: 'bench-other-{n}' }, rules: [rule] }, each);
  await fill(ctx, `${each} cluster role bindings`, `/apis/${rbac}/v1/clusterrolebindings`, { apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', metadata: { name: 'bench-other-{n}' }, roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'bench-other-{n}' }, subjects: [user] }, each);
}

export async function authzScenario(ctx: BenchContext): Promise<void> {
  const { plan } = ctx;
  const groups = ((await ctx.admin.get('/apis')).json<{ groups: { name: string }[] }>().groups ?? []).map((g) => g.name);
  const rbac = groups.find((g) => g.startsWith('rbac.authorization.'));
  if (!rbac) throw new Error('the server serves no RBAC group');
  await ctx.ensureNamespace(NAMESPACE);
  ctx.progress.step(`creating ${plan.rbacObjects} RBAC objects of other users`);
  await otherUsersPolicy(ctx, rbac, plan.rbacObjects);
  const base = `/apis/${rbac}/v1/namespaces/${NAMESPACE}`;
  ok('creating the reader role', await ctx.admin.post(`${base}/roles`, { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name: READER }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] }));
  ok('creating the reader binding', await ctx.admin.post(`${base}/rolebindings`, { apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: { name: READER }, roleRef: { apiGroup: rbac, kind: 'Role', name: READER }, subjects: [{ kind: 'User', apiGroup: rbac, name: READER }] }));
  for (let i = 0; i < LIST_PODS; i++) {
    const r = await ctx.admin.post(`/api/v1/namespaces/${NAMESPACE}/pods`, JSON.parse(ctx.pod({ namespace: NAMESPACE, name: `rbac-${i}` })));
    ok('creating a pod', r);
    if (r.status !== 409) ctx.storedPods++;
  }
  const readerTls = await ctx.server.userTls(READER, []);
  const getPath = `/api/v1/namespaces/${NAMESPACE}/pods/rbac-0`;
  const listPath = `/api/v1/namespaces/${NAMESPACE}/pods`;
  // The binding reaches the authorizer through the watch cache: wait until it answers.
  const probe = new ApiClient(ctx.server.url, { caPem: readerTls.ca, certPem: readerTls.cert, keyPem: readerTls.key });
  try {
    for (let tries = 0; ; tries++) {
      const r = await probe.get(getPath);
      if (r.status === 200) break;
      if (tries > 100) throw new Error(`the reader is still refused: ${r.status} ${r.text().slice(0, 300)}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  } finally {
    probe.close();
  }

  const headers = { accept: 'application/json' };
  for (const [figure, path] of [['GET one pod', getPath], [`LIST of ${LIST_PODS} pods`, listPath]] as const) {
    const job = { connections: plan.getConnections, warmupMs: plan.warmupMs, durationMs: plan.durationMs / plan.rounds, request: { method: 'GET', path, headers }, okStatus: [200] };
    const [masters, reader] = await ctx.alternate(plan.rounds, [
      (r) => ctx.measure(`${figure}: system:masters, round ${r + 1}`, ctx.serverJob(job), ctx.server.pid, { split: true }),
      (r) => ctx.measure(`${figure}: RoleBinding user, round ${r + 1}`, { kind: 'http', baseUrl: ctx.server.url, tls: readerTls, ...job }, ctx.server.pid, { split: true }),
    ]);
    const m = masters!.result;
    const u = reader!.result;
    const ratio = ratioOf(u.okPerSecond, m.okPerSecond);
    const note = `${plan.rbacObjects} RBAC objects of other users; ${plan.rounds} alternating rounds; ${cpuNote('clusterd (masters)', masters!)}; ${cpuNote('clusterd (RBAC user)', reader!)}`;
    ctx.add({ scenario: SCENARIO, figure: `${figure}: requests/s (RBAC user)`, unit: '/s', value: u.okPerSecond, baseline: { name: 'system:masters', value: m.okPerSecond }, ratio, target: '≥ 0.9 × system:masters', holds: ratio === null ? null : ratio >= 0.9, note });
    ctx.add({ scenario: SCENARIO, figure: `${figure}: p99 latency (RBAC user)`, unit: 'ms', value: u.latency.p99Ms, baseline: { name: 'system:masters', value: m.latency.p99Ms }, ratio: ratioOf(u.latency.p99Ms, m.latency.p99Ms), target: 'reported', holds: null });
  }
}
