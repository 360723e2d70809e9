// ValidatingAdmissionPolicy against a real server (issue 18 §3; the default cluster naming):
// upstream's documented examples — replica limit with params (ConfigMap and CRD paramKind,
// binding paramRef), required labels, namespace-scoped params by selector,
// parameterNotFoundAction — and Warn/Audit actions, messageExpression and reason, variables,
// matchConditions, the authorizer, failurePolicy, and the write-time checks of policies and
// bindings. Audited at Metadata level so annotations can be read back from the log.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { defaultConfig } from '../config/flags.js';
import { parseExposition, valueOf } from '../testserver/prometheus-text.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON bodies

let t: TestServer;
let auditLog: string;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vap-audit-'));
  writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.cluster.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
  auditLog = join(dir, 'audit.log');
  t = await startTestServer({ audit: { ...defaultConfig().audit, policyFile: join(dir, 'policy.yaml'), logPath: auditLog } });
});
afterAll(() => t.stop());

const AR = 'admissionregistration.cluster.io/v1';
const POLICIES = `/apis/${AR}/validatingadmissionpolicies`;
const BINDINGS = `/apis/${AR}/validatingadmissionpolicybindings`;
const deployments = (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments`;
const configMaps = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

const deployment = (name: string, replicas: number, labels: Record<string, string> = {}): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx:1' }] } },
  },
});
const configMap = (name: string, data: Record<string, string>, labels: Record<string, string> = {}): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data });
const policy = (name: string, spec: Obj): Obj => ({ apiVersion: AR, kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec });
const binding = (name: string, spec: Obj): Obj => ({ apiVersion: AR, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name }, spec });
/** Deployments in namespaces labelled `vap: <suite>`: each test's policies see only its own namespaces. */
const deploymentsIn = (suite: string, operations = ['CREATE', 'UPDATE']): Obj => ({
  resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations, resources: ['deployments'] }],
  namespaceSelector: { matchLabels: { vap: suite } },
});

async function created(path: string, body: Obj, client = t.admin): Promise<Obj> {
  const r = await client.post(path, body);
  expect([200, 201], r.text()).toContain(r.status);
  return r.json<Obj>();
}
const namespace = (name: string, labels: Record<string, string>) => created('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const denialOf = (r: { json<T>(): T }) => r.json<Obj>();

describe('ValidatingAdmissionPolicy against a real server', () => {
  it('replica limit: denies with upstream\'s message, reason and code; binding namespaceSelector narrows', async () => {
    await namespace('vap-basic', { vap: 'basic', environment: 'test' });
    await namespace('vap-basic-prod', { vap: 'basic', environment: 'prod' });
    await created(POLICIES, policy('demo-policy.example.com', { failurePolicy: 'Fail', matchConstraints: deploymentsIn('basic'), validations: [{ expression: 'object.spec.replicas <= 5' }] }));
    await created(BINDINGS, binding('demo-binding-test.example.com', { policyName: 'demo-policy.example.com', validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { environment: 'test' } } } }));
    const denied = await t.admin.post(deployments('vap-basic'), deployment('big', 6));
    expect(denied.status).toBe(422);
    const status = denialOf(denied);
    expect(status.reason).toBe('Invalid');
    expect(status.message).toBe(
      `deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5`,
    );
    expect(status.details).toMatchObject({ name: 'big', group: 'apps', kind: 'deployments' });
    expect(status.details.causes[0].message).toBe(`ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5`);
    expect((await t.admin.post(deployments('vap-basic'), deployment('small', 5))).status).toBe(200);
    // Updates are checked too; the binding's selector leaves the prod namespace alone.
    const update = await t.admin.request('PATCH', `${deployments('vap-basic')}/small`, { body: JSON.stringify({ spec: { replicas: 7 } }), raw: true, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(update.status).toBe(422);
    expect((await t.admin.post(deployments('vap-basic-prod'), deployment('big', 6))).status).toBe(200);
    // Dry run is admitted as a write is.
    expect((await t.admin.post(`${deployments('vap-basic')}?dryRun=All`, deployment('dry', 9))).status).toBe(422);
    // Upstream's metrics: three denials and one admission through this binding so far.
    const metrics = parseExposition((await t.admin.get('/metrics')).text());
    const labels = (error_type: string, enforcement_action: string) => ({ policy: 'demo-policy.example.com', policy_binding: 'demo-binding-test.example.com', error_type, enforcement_action });
    expect(valueOf(metrics, 'apiserver_validating_admission_policy_check_total', labels('no_error', 'deny'))).toBe(3);
    expect(valueOf(metrics, 'apiserver_validating_admission_policy_check_total', labels('no_error', 'allow'))).toBe(1);
    expect(valueOf(metrics, 'apiserver_validating_admission_policy_check_duration_seconds_count', labels('no_error', 'deny'))).toBe(3);
  });

  it('params from a ConfigMap named by paramRef; parameterNotFoundAction Deny and Allow', async () => {
    await namespace('vap-params', { vap: 'params' });
    await created(POLICIES, policy('cm-limit', {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: deploymentsIn('params'),
      validations: [{ expression: 'object.spec.replicas <= int(params.data.maxReplicas)', messageExpression: "'replicas must be no greater than ' + params.data.maxReplicas" }],
    }));
    await created(BINDINGS, binding('cm-limit-binding', { policyName: 'cm-limit', validationActions: ['Deny'], paramRef: { name: 'limits', namespace: 'vap-params', parameterNotFoundAction: 'Deny' } }));
    const missing = await t.admin.post(deployments('vap-params'), deployment('a', 1));
    expect(missing.status).toBe(422);
    expect(denialOf(missing).message).toContain("ValidatingAdmissionPolicy 'cm-limit' with binding 'cm-limit-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction");
    await created(configMaps('vap-params'), configMap('limits', { maxReplicas: '3' }));
    const over = await t.admin.post(deployments('vap-params'), deployment('b', 4));
    expect(over.status).toBe(422);
    expect(denialOf(over).message).toContain('denied request: replicas must be no greater than 3');
    expect((await t.admin.post(deployments('vap-params'), deployment('c', 3))).status).toBe(200);
    // Allow: no param, no opinion.
    await created(BINDINGS, binding('cm-limit-allow', { policyName: 'cm-limit', validationActions: ['Deny'], paramRef: { name: 'absent', namespace: 'vap-params', parameterNotFoundAction: 'Allow' } }));
    expect((await t.admin.post(deployments('vap-params'), deployment('d', 2))).status).toBe(200);
  });

  it('params from a custom resource (upstream\'s ReplicaLimit example)', async () => {
    await namespace('vap-crd', { vap: 'crd' });
    const crd = {
      apiVersion: 'apiextensions.cluster.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'replicalimits.rules.example.com' },
      spec: {
        group: 'rules.example.com',
        scope: 'Namespaced',
        names: { plural: 'replicalimits', singular: 'replicalimit', kind: 'ReplicaLimit' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { maxReplicas: { type: 'integer' } } } } }],
      },
    };
    await created('/apis/apiextensions.cluster.io/v1/customresourcedefinitions', crd);
    let ready = false;
    for (let i = 0; i < 100 && !ready; i++) {
      ready = (await t.admin.get('/apis/rules.example.com/v1/namespaces/default/replicalimits')).status === 200;
      if (!ready) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ready).toBe(true);
    await created('/apis/rules.example.com/v1/namespaces/default/replicalimits', { apiVersion: 'rules.example.com/v1', kind: 'ReplicaLimit', metadata: { name: 'replica-limit-test.example.com' }, maxReplicas: 3 });
    await created(POLICIES, policy('replicalimit-policy.example.com', {
      failurePolicy: 'Fail',
      paramKind: { apiVersion: 'rules.example.com/v1', kind: 'ReplicaLimit' },
      matchConstraints: deploymentsIn('crd'),
      validations: [{ expression: 'object.spec.replicas <= params.maxReplicas', reason: 'Invalid' }],
    }));
    await created(BINDINGS, binding('replicalimit-binding-test.example.com', {
      policyName: 'replicalimit-policy.example.com',
      validationActions: ['Deny'],
      paramRef: { name: 'replica-limit-test.example.com', namespace: 'default', parameterNotFoundAction: 'Deny' },
    }));
    const over = await t.admin.post(deployments('vap-crd'), deployment('four', 4));
    expect(over.status).toBe(422);
    expect(denialOf(over).message).toContain('denied request: failed expression: object.spec.replicas <= params.maxReplicas');
    expect((await t.admin.post(deployments('vap-crd'), deployment('three', 3))).status).toBe(200);
  });

  it('namespace-scoped params by selector: every matching param must pass; none and Allow admits', async () => {
    await namespace('vap-sel-a', { vap: 'selector' });
    await namespace('vap-sel-b', { vap: 'selector' });
    await created(configMaps('vap-sel-a'), configMap('loose', { max: '5' }, { tier: 'limits' }));
    await created(configMaps('vap-sel-a'), configMap('strict', { max: '3' }, { tier: 'limits' }));
    await created(configMaps('vap-sel-a'), configMap('unrelated', { max: '1' }));
    await created(POLICIES, policy('ns-params', {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: deploymentsIn('selector'),
      validations: [{ expression: 'object.spec.replicas <= int(params.data.max)', messageExpression: "'limit ' + params.metadata.name + ' is ' + params.data.max" }],
    }));
    await created(BINDINGS, binding('ns-params', { policyName: 'ns-params', validationActions: ['Deny'], paramRef: { selector: { matchLabels: { tier: 'limits' } }, parameterNotFoundAction: 'Allow' } }));
    const four = await t.admin.post(deployments('vap-sel-a'), deployment('four', 4));
    expect(four.status).toBe(422);
    expect(denialOf(four).message).toContain('denied request: limit strict is 3');
    expect((await t.admin.post(deployments('vap-sel-a'), deployment('two', 2))).status).toBe(200);
    // No params in vap-sel-b (the other namespace's are not looked at).
    expect((await t.admin.post(deployments('vap-sel-b'), deployment('many', 50))).status).toBe(200);
  });

  it('required labels with variables, messageExpression and reason Forbidden (403); matchConditions skip', async () => {
    await namespace('vap-labels', { vap: 'labels' });
    await created(POLICIES, policy('require-owner', {
      matchConstraints: deploymentsIn('labels', ['CREATE']),
      matchConditions: [{ name: 'not-exempt', expression: "!('exempt' in object.metadata.labels)" }],
      variables: [
        { name: 'labels', expression: "has(object.metadata.labels) ? object.metadata.labels : {}" },
        { name: 'owner', expression: "'owner' in variables.labels ? variables.labels['owner'] : ''" },
      ],
      validations: [
        { expression: "variables.owner != ''", messageExpression: "'deployment ' + object.metadata.name + ' has no owner label'", reason: 'Forbidden' },
        { expression: "variables.owner == '' || variables.owner.endsWith('.example.com')", message: 'owner must end in .example.com' },
      ],
    }));
    await created(BINDINGS, binding('require-owner', { policyName: 'require-owner', validationActions: ['Deny'] }));
    const none = await t.admin.post(deployments('vap-labels'), deployment('nolabel', 1, { app: 'x' }));
    expect(none.status).toBe(403);
    expect(denialOf(none).reason).toBe('Forbidden');
    expect(denialOf(none).message).toContain('denied request: deployment nolabel has no owner label');
    const bad = await t.admin.post(deployments('vap-labels'), deployment('badowner', 1, { owner: 'me' }));
    expect(bad.status).toBe(422);
    expect(denialOf(bad).message).toContain('denied request: owner must end in .example.com');
    expect((await t.admin.post(deployments('vap-labels'), deployment('owned', 1, { owner: 'me.example.com' }))).status).toBe(200);
    expect((await t.admin.post(deployments('vap-labels'), deployment('exempt', 1, { exempt: 'yes' }))).status).toBe(200);
  });

  it('Warn sends a Warning header, Audit the validation_failure annotation; auditAnnotations are recorded', async () => {
    await namespace('vap-warn', { vap: 'warn' });
    await created(POLICIES, policy('warn-policy', {
      matchConstraints: deploymentsIn('warn'),
      validations: [{ expression: 'object.spec.replicas <= 2', message: 'too many replicas' }],
      auditAnnotations: [{ key: 'replicas', valueExpression: "'replicas: ' + string(object.spec.replicas)" }],
    }));
    await created(BINDINGS, binding('warn-binding', { policyName: 'warn-policy', validationActions: ['Warn', 'Audit'] }));
    const r = await t.admin.post(deployments('vap-warn'), deployment('warned', 3));
    expect(r.status).toBe(200);
    expect(String(r.headers.warning)).toContain(`299 - "Validation failed for ValidatingAdmissionPolicy 'warn-policy' with binding 'warn-binding': too many replicas"`);
    const quiet = await t.admin.post(deployments('vap-warn'), deployment('quiet', 1));
    expect(quiet.headers.warning).toBeUndefined();
    // The audit event of the create carries both annotations.
    let event: Obj | undefined;
    for (let i = 0; i < 100 && !event; i++) {
      event = readFileSync(auditLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Obj)
        .find((e) => e.stage === 'ResponseComplete' && e.verb === 'create' && e.objectRef?.name === 'warned');
      if (!event) await new Promise((res) => setTimeout(res, 50));
    }
    expect(event?.annotations?.['warn-policy/replicas']).toBe('replicas: 3');
    const failures = JSON.parse(event?.annotations?.['validation.policy.admission.cluster.io/validation_failure'] ?? '[]') as Obj[];
    expect(failures).toEqual([{ message: 'too many replicas', policy: 'warn-policy', binding: 'warn-binding', expressionIndex: 0, validationActions: ['Warn', 'Audit'] }]);
  });

  it('authorizer and authorizer.requestResource ask the authorizer chain for the requesting user', async () => {
    await namespace('vap-authz', { vap: 'authz' });
    await created(`/apis/rbac.authorization.cluster.io/v1/namespaces/vap-authz/roles`, {
      apiVersion: 'rbac.authorization.cluster.io/v1', kind: 'Role', metadata: { name: 'deployers' },
      rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['create', 'get', 'list'] }],
    });
    await created(`/apis/rbac.authorization.cluster.io/v1/namespaces/vap-authz/rolebindings`, {
      apiVersion: 'rbac.authorization.cluster.io/v1', kind: 'RoleBinding', metadata: { name: 'deployers' },
      roleRef: { apiGroup: 'rbac.authorization.cluster.io', kind: 'Role', name: 'deployers' },
      subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.cluster.io' }],
    });
    await created(POLICIES, policy('big-needs-delete', {
      matchConstraints: deploymentsIn('authz', ['CREATE']),
      validations: [
        { expression: "authorizer.requestResource.check('create').allowed()", message: 'request resource not allowed' },
        {
          expression: "object.spec.replicas <= 1 || authorizer.group('apps').resource('deployments').namespace(object.metadata.namespace).check('delete').allowed()",
          messageExpression: "'user ' + request.userInfo.username + ' may not create more than one replica'",
        },
      ],
    }));
    await created(BINDINGS, binding('big-needs-delete', { policyName: 'big-needs-delete', validationActions: ['Deny'] }));
    const alice = await t.clientFor('alice');
    const denied = await alice.post(deployments('vap-authz'), deployment('big', 2));
    expect(denied.status).toBe(422);
    expect(denialOf(denied).message).toContain('denied request: user alice may not create more than one replica');
    expect((await alice.post(deployments('vap-authz'), deployment('one', 1))).status).toBe(200);
    expect((await t.admin.post(deployments('vap-authz'), deployment('big', 2))).status).toBe(200);
  });

  it('failurePolicy: an evaluation error denies under Fail and is ignored under Ignore', async () => {
    await namespace('vap-fail', { vap: 'fail' });
    for (const fp of ['Fail', 'Ignore']) {
      await created(POLICIES, policy(`err-${fp.toLowerCase()}`, { failurePolicy: fp, matchConstraints: deploymentsIn('fail'), validations: [{ expression: "object.spec.template.metadata.labels['missing'] == 'x'" }] }));
      await created(BINDINGS, binding(`err-${fp.toLowerCase()}`, { policyName: `err-${fp.toLowerCase()}`, validationActions: ['Deny'] }));
    }
    const r = await t.admin.post(deployments('vap-fail'), deployment('e', 1));
    expect(r.status).toBe(422);
    const msg = denialOf(r).message as string;
    expect(msg).toContain(`ValidatingAdmissionPolicy 'err-fail' with binding 'err-fail' denied request: expression 'object.spec.template.metadata.labels['missing'] == 'x'' resulted in error:`);
    // Deleting the Fail policy's binding leaves only the Ignore one: the create goes through.
    expect((await t.admin.request('DELETE', `${BINDINGS}/err-fail`)).status).toBe(200);
    expect((await t.admin.post(deployments('vap-fail'), deployment('e', 1))).status).toBe(200);
  });

  it('the status controller type checks validations against the matched kinds and records observedGeneration', async () => {
    await created(POLICIES, policy('typed', {
      matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }], namespaceSelector: { matchLabels: { vap: 'typed' } } },
      validations: [{ expression: 'object.spec.replicas <= 5' }, { expression: 'object.spec.replicass <= 5' }],
    }));
    const statusOf = async (): Promise<Obj> => (await t.admin.get(`${POLICIES}/typed`)).json<Obj>();
    let p = await statusOf();
    for (let i = 0; i < 100 && p.status?.observedGeneration !== p.metadata.generation; i++) {
      await new Promise((r) => setTimeout(r, 50));
      p = await statusOf();
    }
    expect(p.status.observedGeneration).toBe(p.metadata.generation);
    expect(p.status.typeChecking.expressionWarnings).toHaveLength(1);
    expect(p.status.typeChecking.expressionWarnings[0].fieldRef).toBe('spec.validations[1].expression');
    expect(p.status.typeChecking.expressionWarnings[0].warning).toMatch(/^apps\/v1, Kind=Deployment: .*replicass/);
    // A spec change is a new generation: checked again, now clean.
    const fixed = await t.admin.request('PATCH', `${POLICIES}/typed`, { body: JSON.stringify({ spec: { validations: [{ expression: 'object.spec.replicas <= 5' }] } }), raw: true, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(fixed.status).toBe(200);
    const generation = fixed.json<Obj>().metadata.generation;
    expect(generation).toBeGreaterThan(p.metadata.generation);
    for (let i = 0; i < 100 && p.status?.observedGeneration !== generation; i++) {
      await new Promise((r) => setTimeout(r, 50));
      p = await statusOf();
    }
    expect(p.status.observedGeneration).toBe(generation);
    expect(p.status.typeChecking.expressionWarnings).toBeUndefined();
  });

  it('matchPolicy Equivalent: the policy sees the object, kind and resource of the version it matched', async () => {
    await namespace('vap-equivalent', { vap: 'equivalent' });
    // A rule naming autoscaling/v1 matches a v2 write; the object is converted to v1 (the CPU
    // target becomes targetCPUUtilizationPercentage); request.kind says v1, requestKind v2.
    await created(POLICIES, policy('hpa-v1', {
      matchConstraints: { resourceRules: [{ apiGroups: ['autoscaling'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['horizontalpodautoscalers'] }], namespaceSelector: { matchLabels: { vap: 'equivalent' } } },
      validations: [{
        expression: 'object.spec.targetCPUUtilizationPercentage <= 50',
        messageExpression: '"as " + object.apiVersion + " " + request.kind.version + "/" + request.resource.version + " from " + request.requestKind.version + "/" + request.requestResource.version + ": " + string(object.spec.targetCPUUtilizationPercentage)',
      }],
    }));
    await created(BINDINGS, binding('hpa-v1', { policyName: 'hpa-v1', validationActions: ['Deny'] }));
    const hpa = (name: string, cpu: number): Obj => ({
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: cpu } } }] },
    });
    const hpas = '/apis/autoscaling/v2/namespaces/vap-equivalent/horizontalpodautoscalers';
    let r = await t.admin.post(hpas, hpa('busy-0', 80));
    for (let i = 1; i < 100 && r.status !== 422; i++) {
      await new Promise((res) => setTimeout(res, 50));
      r = await t.admin.post(hpas, hpa(`busy-${i}`, 80));
    }
    expect(r.status).toBe(422);
    expect(denialOf(r).message).toMatch(/denied request: as autoscaling\/v1 v1\/v1 from v2\/v2: 80$/);
    await created(hpas, hpa('calm', 40));
    // Under Exact the v2 write is not matched at all.
    const exact = await t.admin.put(`${POLICIES}/hpa-v1`, { ...(await t.admin.get(`${POLICIES}/hpa-v1`)).json<Obj>(), spec: { ...(await t.admin.get(`${POLICIES}/hpa-v1`)).json<Obj>().spec, matchConstraints: { resourceRules: [{ apiGroups: ['autoscaling'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['horizontalpodautoscalers'] }], namespaceSelector: { matchLabels: { vap: 'equivalent' } }, matchPolicy: 'Exact' } } });
    expect(exact.status, exact.text()).toBe(200);
    let passed = false;
    for (let i = 0; i < 100 && !passed; i++) {
      const s = (await t.admin.post(hpas, hpa(`exact-${i}`, 80))).status;
      passed = s === 200 || s === 201;
      if (!passed) await new Promise((res) => setTimeout(res, 50));
    }
    expect(passed).toBe(true);
  });

  it('matchPolicy Equivalent on a custom resource with two versions (conversion None): the apiVersion the rule named', async () => {
    await namespace('vap-crd-versions', { vap: 'crd-versions' });
    const schema = { openAPIV3Schema: { type: 'object', properties: { size: { type: 'integer' } } } };
    await created('/apis/apiextensions.cluster.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.cluster.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.versions.example.com' },
      spec: { group: 'versions.example.com', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: true, schema }, { name: 'v2', served: true, storage: false, schema }] },
    });
    await created(POLICIES, policy('widgets-v1', {
      matchConstraints: { resourceRules: [{ apiGroups: ['versions.example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['widgets'] }], namespaceSelector: { matchLabels: { vap: 'crd-versions' } } },
      validations: [{ expression: 'object.size < 10', messageExpression: 'object.apiVersion + " as " + request.kind.version + " from " + request.requestKind.version' }],
    }));
    await created(BINDINGS, binding('widgets-v1', { policyName: 'widgets-v1', validationActions: ['Deny'] }));
    const widgets = '/apis/versions.example.com/v2/namespaces/vap-crd-versions/widgets';
    let r = { status: 0, text: () => '', json: <T>() => ({}) as T };
    for (let i = 0; i < 100 && r.status !== 422; i++) {
      r = await t.admin.post(widgets, { apiVersion: 'versions.example.com/v2', kind: 'Widget', metadata: { name: `big-${i}` }, size: 20 });
      if (r.status !== 422) await new Promise((res) => setTimeout(res, 100));
    }
    expect(r.status).toBe(422);
    expect(denialOf(r).message).toMatch(/denied request: versions\.example\.com\/v1 as v1 from v2$/);
  });

  it('the author of a paramKind or paramRef must be allowed to get the params', async () => {
    const rbac = 'rbac.authorization.cluster.io';
    const clusterRole = (name: string, rules: Obj[]) => created(`/apis/${rbac}/v1/clusterroles`, { apiVersion: `${rbac}/v1`, kind: 'ClusterRole', metadata: { name }, rules });
    const bindUser = (role: string) => created(`/apis/${rbac}/v1/clusterrolebindings`, {
      apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', metadata: { name: role },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: role }, subjects: [{ kind: 'User', name: 'policy-author', apiGroup: rbac }],
    });
    await clusterRole('policy-author', [{ apiGroups: ['admissionregistration.cluster.io'], resources: ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'], verbs: ['create', 'get', 'update'] }]);
    await bindUser('policy-author');
    const author = await t.clientFor('policy-author');
    // Without a paramKind nothing is asked (retried until the author's binding reaches the authorizer).
    let plain = 0;
    for (let i = 0; i < 50 && plain !== 200; i++) {
      plain = (await author.post(POLICIES, policy('authored-plain', { matchConstraints: deploymentsIn('authored'), validations: [{ expression: 'true' }] }))).status;
      if (plain !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(plain).toBe(200);
    const withParams = policy('authored', { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, matchConstraints: deploymentsIn('authored'), validations: [{ expression: 'params != null' }] });
    const refused = await author.post(POLICIES, withParams);
    expect(refused.status).toBe(422);
    expect(denialOf(refused).message).toBe('ValidatingAdmissionPolicy.admissionregistration.cluster.io "authored" is invalid: spec.paramKind: Forbidden: user policy-author must have "get" permission on all objects of the referenced paramKind (kind=ConfigMap, apiVersion=v1)');
    await created(POLICIES, withParams);
    const bindingRefused = await author.post(BINDINGS, binding('authored', { policyName: 'authored', validationActions: ['Deny'], paramRef: { name: 'limits', namespace: 'default', parameterNotFoundAction: 'Allow' } }));
    expect(bindingRefused.status).toBe(422);
    expect(denialOf(bindingRefused).message).toContain('spec.paramRef: Forbidden: user policy-author must have "get" permission on all objects of the referenced paramKind (kind=ConfigMap, apiVersion=v1)');
    await clusterRole('configmap-reader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]);
    await bindUser('configmap-reader');
    let allowed = 0;
    for (let i = 0; i < 50 && allowed !== 200; i++) {
      allowed = (await author.post(BINDINGS, binding('authored', { policyName: 'authored', validationActions: ['Deny'], paramRef: { name: 'limits', namespace: 'default', parameterNotFoundAction: 'Allow' } }))).status;
      if (allowed !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(allowed).toBe(200);
    expect((await author.post(POLICIES, { ...withParams, metadata: { name: 'authored-2' } })).status).toBe(200);
  });

  it('refuses invalid policies and bindings at write time, as upstream', async () => {
    const bad = await t.admin.post(POLICIES, policy('bad', {
      matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'PATCH'], resources: ['deployments'] }] },
      validations: [{ expression: 'object.spec.replicas <=', reason: 'Teapot' }],
      variables: [{ name: 'not valid', expression: '1' }],
    }));
    expect(bad.status).toBe(422);
    const causes = (denialOf(bad).details.causes as Obj[]).map((c) => `${c.field}: ${c.reason}`);
    expect(causes).toEqual(expect.arrayContaining([
      'spec.matchConstraints.resourceRules[0].operations[1]: FieldValueNotSupported',
      'spec.validations[0].reason: FieldValueNotSupported',
      'spec.variables[0].name: FieldValueInvalid',
      'spec.validations[0].expression: FieldValueInvalid',
    ]));
    expect(denialOf(bad).message).toContain('spec.validations[0].expression: Invalid value: "object.spec.replicas <=": compilation failed');
    const noValidations = await t.admin.post(POLICIES, policy('empty', { matchConstraints: deploymentsIn('none') }));
    expect(noValidations.status).toBe(422);
    expect(denialOf(noValidations).message).toContain('spec.validations: Required value: validations or auditAnnotations must contain at least one item');
    const wrongType = await t.admin.post(POLICIES, policy('wrong-type', { matchConstraints: deploymentsIn('none'), validations: [{ expression: "'a string'" }] }));
    expect(wrongType.status).toBe(422);
    const b = await t.admin.post(BINDINGS, binding('bad', { policyName: '', validationActions: ['Deny', 'Warn'], paramRef: { name: 'x', selector: {} } }));
    expect(b.status).toBe(422);
    const bcauses = (denialOf(b).details.causes as Obj[]).map((c) => `${c.field}: ${c.reason}`);
    expect(bcauses).toEqual(expect.arrayContaining([
      'spec.policyName: FieldValueRequired',
      'spec.validationActions: FieldValueInvalid',
      'spec.paramRef.name: FieldValueForbidden',
      'spec.paramRef.parameterNotFoundAction: FieldValueRequired',
    ]));
    expect((await t.admin.post(BINDINGS, binding('no-actions', { policyName: 'x' }))).status).toBe(422);
  });
});
