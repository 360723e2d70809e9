// MutatingAdmissionPolicy against a real server (gate and v1alpha1 on; the default cluster
// naming): reinvocation across policies and mutating webhooks (policies first, one round: a
// webhook whose object a policy's reinvocation changed is called again), upstream's paramKind
// authorization of policy and binding writes, and the policy metrics.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { FeatureGates } from '../config/feature-gates.js';
import { parseRuntimeConfig } from '../config/runtime-config.js';
import { parseExposition, valueOf } from '../testserver/prometheus-text.js';
import { startHttpsWebhookServer, type HttpsWebhookServer } from '../testserver/https-webhook-server.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON bodies

const AR = 'admissionregistration.cluster.io';
const POLICIES = `/apis/${AR}/v1alpha1/mutatingadmissionpolicies`;
const BINDINGS = `/apis/${AR}/v1alpha1/mutatingadmissionpolicybindings`;
const configMaps = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

let t: TestServer;
let hook: HttpsWebhookServer;
beforeAll(async () => {
  t = await startTestServer({ featureGates: new FeatureGates({ MutatingAdmissionPolicy: true }), runtimeConfig: parseRuntimeConfig(`${AR}/v1alpha1=true`) });
  hook = await startHttpsWebhookServer({ handler: () => ({}) });
});
afterAll(async () => {
  await hook.close();
  await t.stop();
});

async function created(path: string, body: Obj, client = t.admin): Promise<Obj> {
  const r = await client.post(path, body);
  expect([200, 201], r.text()).toContain(r.status);
  return r.json<Obj>();
}
const policy = (name: string, spec: Obj): Obj => ({ apiVersion: `${AR}/v1alpha1`, kind: 'MutatingAdmissionPolicy', metadata: { name }, spec });
const binding = (name: string, spec: Obj): Obj => ({ apiVersion: `${AR}/v1alpha1`, kind: 'MutatingAdmissionPolicyBinding', metadata: { name }, spec });
/** ConfigMaps in namespaces labelled `map: <suite>`: each test's policies see only its own namespaces. */
const configMapsIn = (suite: string): Obj => ({
  resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
  namespaceSelector: { matchLabels: { map: suite } },
});
const namespace = (name: string, suite: string) => created('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { map: suite } } });

/** Creates ConfigMaps named `<prefix>-<n>` until `done` holds for the answer (policies reach each replica's cache asynchronously). */
async function createUntil(ns: string, prefix: string, done: (cm: Obj) => boolean): Promise<Obj> {
  let last: Obj = {};
  for (let i = 0; i < 100; i++) {
    last = await created(configMaps(ns), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-${i}` } });
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  return last;
}

describe('MutatingAdmissionPolicy against a real server', () => {
  it('reinvokes a mutating webhook after a policy reinvocation changed the object (policies first, one round)', async () => {
    await namespace('map-reinvoke', 'reinvoke');
    // The policy records whether the webhook has run; the webhook records what the policy said.
    await created(POLICIES, policy('saw-webhook.example.com', {
      matchConstraints: configMapsIn('reinvoke'),
      reinvocationPolicy: 'IfNeeded',
      failurePolicy: 'Fail',
      mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{annotations: {"policy-saw-webhook": string(has(object.metadata.labels) && "webhook" in object.metadata.labels)}}}' } }],
    }));
    await created(BINDINGS, binding('saw-webhook', { policyName: 'saw-webhook.example.com' }));
    hook.handle((r) => {
      const review = JSON.parse(r.body) as { apiVersion: string; request: { uid: string; object: Obj } };
      const annotations = (review.request.object.metadata.annotations ?? {}) as Record<string, string>;
      const ops = [
        ...(review.request.object.metadata.labels ? [] : [{ op: 'add', path: '/metadata/labels', value: {} }]),
        { op: 'add', path: '/metadata/labels/webhook', value: 'yes' },
        { op: 'add', path: '/metadata/labels/webhook-saw-policy', value: annotations['policy-saw-webhook'] ?? 'none' },
      ];
      return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') } };
    });
    await created(`/apis/${AR}/v1/mutatingwebhookconfigurations`, {
      apiVersion: `${AR}/v1`, kind: 'MutatingWebhookConfiguration', metadata: { name: 'reinvoke' },
      webhooks: [{
        name: 'labels.reinvoke.example.com', clientConfig: { url: `${hook.url}/mutate`, caBundle: hook.caBundle },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        namespaceSelector: { matchLabels: { map: 'reinvoke' } }, sideEffects: 'None', admissionReviewVersions: ['v1'], reinvocationPolicy: 'IfNeeded',
      }],
    });
    const cm = await createUntil('map-reinvoke', 'cm', (o) => o.metadata.labels?.webhook === 'yes' && o.metadata.annotations?.['policy-saw-webhook'] !== undefined);
    // Round 0: policy (false), webhook (saw false); round 1: policy (true: changed), so the webhook again (saw true).
    expect(cm.metadata.annotations['policy-saw-webhook']).toBe('true');
    expect(cm.metadata.labels).toEqual({ webhook: 'yes', 'webhook-saw-policy': 'true' });
    const calls = hook.received.filter((r) => JSON.parse(r.body).request.name === cm.metadata.name);
    expect(calls).toHaveLength(2);
  });

  it('the author of a paramKind or paramRef must be allowed to get the params', async () => {
    const rbac = 'rbac.authorization.cluster.io';
    await created(`/apis/${rbac}/v1/clusterroles`, { apiVersion: `${rbac}/v1`, kind: 'ClusterRole', metadata: { name: 'map-author' }, rules: [{ apiGroups: [AR], resources: ['mutatingadmissionpolicies', 'mutatingadmissionpolicybindings'], verbs: ['create', 'get', 'update'] }] });
    await created(`/apis/${rbac}/v1/clusterrolebindings`, { apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', metadata: { name: 'map-author' }, roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'map-author' }, subjects: [{ kind: 'User', name: 'map-author', apiGroup: rbac }] });
    const author = await t.clientFor('map-author');
    const mutations = [{ patchType: 'JSONPatch', jsonPatch: { expression: '[]' } }];
    // Without a paramKind nothing is asked (retried until the author's binding reaches the authorizer).
    let plain = 0;
    for (let i = 0; i < 50 && plain !== 200 && plain !== 201; i++) {
      plain = (await author.post(POLICIES, policy('authored-plain', { matchConstraints: configMapsIn('authored'), mutations }))).status;
      if (plain !== 200 && plain !== 201) await new Promise((r) => setTimeout(r, 50));
    }
    expect([200, 201]).toContain(plain);
    const withParams = policy('authored', { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, matchConstraints: configMapsIn('authored'), mutations });
    const refused = await author.post(POLICIES, withParams);
    expect(refused.status).toBe(422);
    expect(refused.json<Obj>().message).toBe(`MutatingAdmissionPolicy.${AR} "authored" is invalid: spec.paramKind: Forbidden: user map-author must have "get" permission on all objects of the referenced paramKind (kind=ConfigMap, apiVersion=v1)`);
    await created(POLICIES, withParams);
    const bindingRefused = await author.post(BINDINGS, binding('authored', { policyName: 'authored', paramRef: { name: 'limits', namespace: 'default', parameterNotFoundAction: 'Allow' } }));
    expect(bindingRefused.status).toBe(422);
    expect(bindingRefused.json<Obj>().message).toContain('spec.paramRef: Forbidden: user map-author must have "get" permission on all objects of the referenced paramKind (kind=ConfigMap, apiVersion=v1)');
    // Once allowed to read ConfigMaps, the same writes pass.
    await created(`/apis/${rbac}/v1/clusterroles`, { apiVersion: `${rbac}/v1`, kind: 'ClusterRole', metadata: { name: 'map-author-params' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] });
    await created(`/apis/${rbac}/v1/clusterrolebindings`, { apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', metadata: { name: 'map-author-params' }, roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'map-author-params' }, subjects: [{ kind: 'User', name: 'map-author', apiGroup: rbac }] });
    let status = 0;
    for (let i = 0; i < 50 && status !== 200 && status !== 201; i++) {
      status = (await author.post(BINDINGS, binding('authored', { policyName: 'authored', paramRef: { name: 'limits', namespace: 'default', parameterNotFoundAction: 'Allow' } }))).status;
      if (status !== 200 && status !== 201) await new Promise((r) => setTimeout(r, 50));
    }
    expect([200, 201]).toContain(status);
  });

  it('Object{…} field names: a policy write warns of fields the named schema lacks; evaluation refuses them under Fail', async () => {
    await namespace('map-typed', 'typed');
    const r = await t.admin.post(POLICIES, policy('typo.example.com', {
      matchConstraints: configMapsIn('typed'),
      failurePolicy: 'Fail',
      mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{dta: {"k": "v"}}' } }],
    }));
    expect([200, 201]).toContain(r.status);
    expect(r.headers.warning).toBe(`299 - "spec.mutations[0].applyConfiguration.expression: v1, Kind=ConfigMap: undefined field 'dta' in Object"`);
    // A correct policy draws no warning.
    const ok = await t.admin.post(POLICIES, policy('no-typo.example.com', { matchConstraints: configMapsIn('typed'), mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{data: {"k": "v"}}' } }] }));
    expect([200, 201]).toContain(ok.status);
    expect(ok.headers.warning).toBeUndefined();
    await created(BINDINGS, binding('typo', { policyName: 'typo.example.com' }));
    let refused: { status: number; json<T>(): T } | undefined;
    for (let i = 0; i < 100; i++) {
      refused = await t.admin.post(configMaps('map-typed'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` } });
      if (refused.status !== 200 && refused.status !== 201) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(refused!.status).toBe(422);
    expect(refused!.json<Obj>().message).toBe(
      `configmaps "cm-${/cm-(\d+)/.exec(refused!.json<Obj>().message)![1]}" is forbidden: MutatingAdmissionPolicy 'typo.example.com' with binding 'typo' denied request: failed to convert patch object to typed object: .dta: field not declared in schema`,
    );
  });

  it('matchPolicy Equivalent: a policy naming autoscaling/v1 mutates a v2 write as v1, converted back', async () => {
    await namespace('map-equivalent', 'equivalent');
    await created(POLICIES, policy('hpa-v1.example.com', {
      matchConstraints: { resourceRules: [{ apiGroups: ['autoscaling'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['horizontalpodautoscalers'] }], namespaceSelector: { matchLabels: { map: 'equivalent' } } },
      failurePolicy: 'Fail',
      // v1's field (v2 has metrics instead): the typed check would refuse it on the v2 object.
      mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'object.apiVersion == "autoscaling/v1" && request.kind.version == "v1" && request.requestKind.version == "v2" ? Object{spec: Object.spec{targetCPUUtilizationPercentage: 50}} : Object{metadata: Object.metadata{labels: {"seen-as": "v2"}}}' } }],
    }));
    await created(BINDINGS, binding('hpa-v1', { policyName: 'hpa-v1.example.com' }));
    const hpas = '/apis/autoscaling/v2/namespaces/map-equivalent/horizontalpodautoscalers';
    let made: Obj = {};
    for (let i = 0; i < 100; i++) {
      made = await created(hpas, { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: `web-${i}` }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3 } });
      if (made.spec.metrics) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(made.apiVersion).toBe('autoscaling/v2');
    expect(made.metadata.labels).toBeUndefined();
    expect(made.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);
  });

  it('counts each binding run in apiserver_mutating_admission_policy_check_total and _duration_seconds', async () => {
    await namespace('map-metrics', 'metrics');
    await created(POLICIES, policy('metrics-ok.example.com', {
      matchConstraints: configMapsIn('metrics'),
      mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{data: {"mutated": "yes"}}' } }],
    }));
    await created(BINDINGS, binding('metrics-ok', { policyName: 'metrics-ok.example.com' }));
    // A runtime error under Ignore: the write passes, the metric says invalid_error.
    await created(POLICIES, policy('metrics-broken.example.com', {
      matchConstraints: configMapsIn('metrics'),
      failurePolicy: 'Ignore',
      mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: '[JSONPatch{op: "add", path: "/data/x", value: object.data.missing}]' } }],
    }));
    await created(BINDINGS, binding('metrics-broken', { policyName: 'metrics-broken.example.com' }));
    const cm = await createUntil('map-metrics', 'cm', (o) => o.data?.mutated === 'yes');
    expect(cm.data).toEqual({ mutated: 'yes' });
    const metrics = parseExposition((await t.admin.get('/metrics')).text());
    const ok = { policy: 'metrics-ok.example.com', policy_binding: 'metrics-ok', error_type: 'no_error' };
    const broken = { policy: 'metrics-broken.example.com', policy_binding: 'metrics-broken', error_type: 'invalid_error' };
    expect(valueOf(metrics, 'apiserver_mutating_admission_policy_check_total', ok)).toBeGreaterThanOrEqual(1);
    expect(valueOf(metrics, 'apiserver_mutating_admission_policy_check_duration_seconds_count', ok)).toBe(valueOf(metrics, 'apiserver_mutating_admission_policy_check_total', ok));
    expect(valueOf(metrics, 'apiserver_mutating_admission_policy_check_total', broken)).toBeGreaterThanOrEqual(1);
  });
});
