// kubectl with a ValidatingAdmissionPolicy, under both namings, against a server process:
// apply the policy and a Deny binding, a denied create shows upstream's message; a Warn
// binding makes kubectl print the warning and the create succeeds; a policy that does not
// compile, or whose cost is over budget on every request, is refused at apply time; upstream's
// documented replica-limit example with a custom-resource param. Then three replicas: a policy applied through one is
// enforced by every replica (each reads its own watch cache), and the leader's status
// controller type checks it for all.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { ClusterProcess, sleep } from './support/cluster-process.js';
import { crdYaml } from './support/crd-yaml.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

if (!kubectlAvailable() && process.env.CI === 'true') throw new Error('kubectl is required under CI=true');

for (const naming of ['kubernetes', 'cluster'] as const) {
  const group = naming === 'kubernetes' ? 'admissionregistration.k8s.io' : 'admissionregistration.cluster.io';
  const POLICY = `apiVersion: ${group}/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: demo-policy.example.com
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
`;
  const binding = (name: string, action: string, env: string) => `apiVersion: ${group}/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}
spec:
  policyName: demo-policy.example.com
  validationActions: [${action}]
  matchResources:
    namespaceSelector:
      matchLabels:
        environment: ${env}
`;

  describe.skipIf(!kubectlAvailable())(`kubectl with a ValidatingAdmissionPolicy (--naming=${naming})`, () => {
    let server: ServerProcess;
    const k = (args: string[], input?: string) => kubectl(server.kubeconfig, args, input);
    beforeAll(async () => {
      server = await startServerProcess([`--naming=${naming}`]);
    });
    afterAll(async () => {
      await server.stop();
    });

    it('applies a policy and a Deny binding; a denied create shows the policy\'s message', async () => {
      expect((await k(['apply', '-f', '-'], POLICY)).stdout).toBe(`validatingadmissionpolicy.${group}/demo-policy.example.com created\n`);
      expect((await k(['apply', '-f', '-'], binding('demo-binding-test.example.com', 'Deny', 'test'))).stdout).toBe(`validatingadmissionpolicybinding.${group}/demo-binding-test.example.com created\n`);
      expect((await k(['create', 'namespace', 'vap-test'])).code).toBe(0);
      expect((await k(['label', 'namespace', 'vap-test', 'environment=test'])).code).toBe(0);
      const denied = await k(['-n', 'vap-test', 'create', 'deployment', 'nginx', '--image=nginx', '--replicas=6']);
      expect(denied.code).not.toBe(0);
      expect(denied.stderr).toContain(`ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5`);
      const ok = await k(['-n', 'vap-test', 'create', 'deployment', 'nginx', '--image=nginx', '--replicas=5']);
      expect(ok.stdout).toBe('deployment.apps/nginx created\n');
      const listed = await k(['get', 'validatingadmissionpolicies', '-o', 'name']);
      expect(listed.stdout).toBe(`validatingadmissionpolicy.${group}/demo-policy.example.com\n`);
    });

    it('a Warn binding: kubectl prints the warning and the create succeeds', async () => {
      expect((await k(['apply', '-f', '-'], binding('demo-binding-warn.example.com', 'Warn', 'staging'))).code).toBe(0);
      expect((await k(['create', 'namespace', 'vap-staging'])).code).toBe(0);
      expect((await k(['label', 'namespace', 'vap-staging', 'environment=staging'])).code).toBe(0);
      const warned = await k(['-n', 'vap-staging', 'create', 'deployment', 'nginx', '--image=nginx', '--replicas=6']);
      expect(warned.stdout).toBe('deployment.apps/nginx created\n');
      expect(warned.stderr).toContain(`Warning: Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-warn.example.com': failed expression: object.spec.replicas <= 5`);
    });

    it('refuses a policy whose expression does not compile', async () => {
      const r = await k(['apply', '-f', '-'], POLICY.replace('demo-policy.example.com', 'broken.example.com').replace('object.spec.replicas <= 5', 'object.spec.replicas <='));
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('spec.validations[0].expression: Invalid value: "object.spec.replicas <=": compilation failed');
    });

    it('refuses a policy whose expression is over the cost budget whatever the request', async () => {
      const range = `[${Array.from({ length: 100 }, (_, i) => i).join(',')}]`;
      const expensive = `${range}.all(i, ${range}.all(j, ${range}.all(k, i + j + k >= 0)))`;
      const r = await k(['apply', '-f', '-'], POLICY.replace('demo-policy.example.com', 'costly.example.com').replace('"object.spec.replicas <= 5"', JSON.stringify(expensive)));
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('spec.validations[0].expression: Forbidden: estimated rule cost exceeds budget by factor of');
      expect((await k(['get', 'validatingadmissionpolicies', 'costly.example.com'])).code).not.toBe(0);
    });

    it('upstream\'s documented example: a replica limit from a custom resource named by paramRef', async () => {
      const crd = crdYaml({ apiextensions: naming === 'cluster' ? 'apiextensions.cluster.io' : 'apiextensions.k8s.io', group: 'rules.example.com', plural: 'replicalimits', kind: 'ReplicaLimit', properties: 'maxReplicas: {type: integer}' });
      expect((await k(['apply', '-f', '-'], crd)).code).toBe(0);
      expect((await k(['wait', '--for=condition=Established', 'crd/replicalimits.rules.example.com', '--timeout=30s'])).code).toBe(0);
      const limit = `apiVersion: rules.example.com/v1
kind: ReplicaLimit
metadata:
  name: replica-limit-test.example.com
  namespace: default
maxReplicas: 3
`;
      // The CRD's resource reaches discovery a moment after Established: retry the first create.
      let made = await k(['apply', '-f', '-'], limit);
      for (let i = 0; i < 50 && made.code !== 0; i++) {
        await new Promise((r) => setTimeout(r, 200));
        made = await k(['apply', '-f', '-'], limit);
      }
      expect(made.stdout).toBe('replicalimit.rules.example.com/replica-limit-test.example.com created\n');
      const policy = POLICY.replace('demo-policy.example.com', 'replicalimit-policy.example.com')
        .replace('spec:\n', 'spec:\n  paramKind:\n    apiVersion: rules.example.com/v1\n    kind: ReplicaLimit\n')
        .replace('"object.spec.replicas <= 5"', '"object.spec.replicas <= params.maxReplicas"\n    reason: Invalid');
      expect((await k(['apply', '-f', '-'], policy)).code).toBe(0);
      const bound = `apiVersion: ${group}/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replicalimit-binding-test.example.com
spec:
  policyName: replicalimit-policy.example.com
  validationActions: [Deny]
  paramRef:
    name: replica-limit-test.example.com
    namespace: default
    parameterNotFoundAction: Deny
  matchResources:
    namespaceSelector:
      matchLabels:
        environment: params
`;
      expect((await k(['apply', '-f', '-'], bound)).code).toBe(0);
      expect((await k(['create', 'namespace', 'vap-params'])).code).toBe(0);
      expect((await k(['label', 'namespace', 'vap-params', 'environment=params'])).code).toBe(0);
      const denied = await k(['-n', 'vap-params', 'create', 'deployment', 'web', '--image=nginx', '--replicas=4']);
      expect(denied.code).not.toBe(0);
      expect(denied.stderr).toContain("ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-test.example.com' denied request: failed expression: object.spec.replicas <= params.maxReplicas");
      expect((await k(['-n', 'vap-params', 'create', 'deployment', 'web', '--image=nginx', '--replicas=3'])).stdout).toBe('deployment.apps/web created\n');
    });
  });
}

describe.skipIf(!kubectlAvailable())('a ValidatingAdmissionPolicy on three replicas', () => {
  let cluster: ClusterProcess;
  const k = (replica: string, args: string[], input?: string) => kubectl(cluster.kubeconfig(replica), args, input);
  beforeAll(async () => {
    cluster = await ClusterProcess.started();
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  it('applied through one replica, enforced by all; every replica shows the leader\'s type-checking status', async () => {
    const [a, b, c] = cluster.names as [string, string, string];
    const group = 'admissionregistration.cluster.io';
    const policy = `apiVersion: ${group}/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
  - {expression: "object.spec.replicas <= 2", message: at most two replicas}
  - {expression: "object.spec.replicass <= 2"}
`;
    const binding = `apiVersion: ${group}/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec: {policyName: max-replicas, validationActions: [Deny]}
`;
    expect((await k(a, ['apply', '-f', '-'], policy)).code).toBe(0);
    expect((await k(a, ['apply', '-f', '-'], binding)).code).toBe(0);
    for (const [i, via] of [a, b, c].entries()) {
      // A follower sees the binding once its cache has the write: retry briefly until denied.
      let denied: Awaited<ReturnType<typeof k>> | undefined;
      for (let tries = 0; tries < 50; tries++) {
        const r = await k(via, ['create', 'deployment', `big-${i}`, '--image=nginx', '--replicas=3']);
        if (r.code !== 0) {
          denied = r;
          break;
        }
        await k(via, ['delete', 'deployment', `big-${i}`, '--wait=false']);
        await sleep(100);
      }
      expect(denied?.stderr, via).toContain("ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas' denied request: at most two replicas");
    }
    // The leader's status controller type checks the policy; every replica shows the one status.
    for (const via of [a, b, c]) {
      let warnings = '';
      for (let tries = 0; tries < 100 && !warnings; tries++) {
        warnings = (await k(via, ['get', 'validatingadmissionpolicy', 'max-replicas', '-o', 'jsonpath={.status.typeChecking.expressionWarnings[*].fieldRef}'])).stdout;
        if (!warnings) await sleep(100);
      }
      expect(warnings, via).toBe('spec.validations[1].expression');
    }
  });
});
