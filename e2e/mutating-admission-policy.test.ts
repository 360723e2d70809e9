// kubectl with a MutatingAdmissionPolicy against a server process started with the
// MutatingAdmissionPolicy gate and admissionregistration v1alpha1 on: upstream's documented
// sidecar example (ApplyConfiguration adding an init container, the list merged by name), a
// JSONPatch policy adding a label, a binding whose paramRef names a ConfigMap the mutation reads,
// failurePolicy Fail on a runtime error, a policy refused at write (no patchType, bad CEL); and
// with the gate off the resources are not served even with the runtime-config on. Under both
// namings: the manifests below name upstream's group, rewritten for --naming=cluster.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

if (!kubectlAvailable() && process.env.CI === 'true') throw new Error('kubectl is required under CI=true');

const UPSTREAM_GROUP = 'admissionregistration.k8s.io';

// Upstream's documented example; its matchCondition guards the absent list with has(): objects
// here are untyped maps, where reading a missing field is an error rather than an empty list.
const SIDECAR_POLICY = `apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicy
metadata:
  name: sidecar-policy.example.com
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["pods"]
  matchConditions:
  - name: does-not-already-have-sidecar
    expression: '!has(object.spec.initContainers) || !object.spec.initContainers.exists(ic, ic.name == "mesh-proxy")'
  failurePolicy: Fail
  reinvocationPolicy: IfNeeded
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{
          spec: Object.spec{
            initContainers: [
              Object.spec.initContainers{
                name: "mesh-proxy",
                image: "mesh/proxy:v1.0.0",
                args: ["proxy", "sidecar"],
                restartPolicy: "Always"
              }
            ]
          }
        }
`;
const binding = (name: string, policy: string, extra = '') => `apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: ${name}
spec:
  policyName: ${policy}
${extra}`;

const LABEL_POLICY = `apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicy
metadata:
  name: label-policy.example.com
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  failurePolicy: Fail
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: >
        [
          JSONPatch{op: "add", path: "/metadata/labels", value: {}},
          JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/patched"), value: "yes"}
        ]
`;

const PARAM_POLICY = `apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicy
metadata:
  name: team-policy.example.com
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  variables:
  - name: team
    expression: params.data.team
  failurePolicy: Fail
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{annotations: {"example.com/team": variables.team}}, spec: Object.spec{replicas: int(params.data.replicas)}}'
`;

for (const naming of ['kubernetes', 'cluster'] as const) {
const group = naming === 'kubernetes' ? UPSTREAM_GROUP : 'admissionregistration.cluster.io';
const RUNTIME = `--runtime-config=${group}/v1alpha1=true`;

describe.skipIf(!kubectlAvailable())(`kubectl with a MutatingAdmissionPolicy (gate and v1alpha1 on, --naming=${naming})`, () => {
  let server: ServerProcess;
  const k = (args: string[], input?: string) => kubectl(server.kubeconfig, args, input?.replaceAll(UPSTREAM_GROUP, group));
  beforeAll(async () => {
    server = await startServerProcess([`--naming=${naming}`, '--feature-gates=MutatingAdmissionPolicy=true', RUNTIME]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it("upstream's sidecar example: ApplyConfiguration adds the init container to a new pod, once", async () => {
    expect((await k(['apply', '-f', '-'], SIDECAR_POLICY)).stdout).toBe(`mutatingadmissionpolicy.${group}/sidecar-policy.example.com created\n`);
    expect((await k(['apply', '-f', '-'], binding('sidecar-binding.example.com', 'sidecar-policy.example.com'))).code).toBe(0);
    expect((await k(['run', 'web', '--image=nginx'])).code).toBe(0);
    const pod = JSON.parse((await k(['get', 'pod', 'web', '-o', 'json'])).stdout) as { spec: { initContainers: Array<Record<string, unknown>>; containers: Array<{ name: string }> } };
    expect(pod.spec.initContainers.map((c) => [c.name, c.image, c.args, c.restartPolicy])).toEqual([['mesh-proxy', 'mesh/proxy:v1.0.0', ['proxy', 'sidecar'], 'Always']]);
    // The pod's own containers are kept: the map-list is merged, not replaced.
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['web']);
    // A pod that already has an init container keeps it, and gets the sidecar merged in by name.
    const withInit = `apiVersion: v1
kind: Pod
metadata: {name: with-init}
spec:
  initContainers: [{name: setup, image: busybox}]
  containers: [{name: app, image: nginx}]
`;
    expect((await k(['apply', '-f', '-'], withInit)).code).toBe(0);
    const got = JSON.parse((await k(['get', 'pod', 'with-init', '-o', 'json'])).stdout) as { spec: { initContainers: Array<{ name: string }> } };
    expect(got.spec.initContainers.map((c) => c.name).sort()).toEqual(['mesh-proxy', 'setup']);
  });

  it('a JSONPatch policy adds a label with an escaped key', async () => {
    expect((await k(['apply', '-f', '-'], LABEL_POLICY)).code).toBe(0);
    expect((await k(['apply', '-f', '-'], binding('label-binding.example.com', 'label-policy.example.com'))).code).toBe(0);
    expect((await k(['create', 'configmap', 'plain', '--from-literal=a=b'])).code).toBe(0);
    const cm = JSON.parse((await k(['get', 'configmap', 'plain', '-o', 'json'])).stdout) as { metadata: { labels: Record<string, string> } };
    expect(cm.metadata.labels).toEqual({ 'example.com/patched': 'yes' });
  });

  it('a binding with params: the mutation reads the ConfigMap its paramRef names', async () => {
    expect((await k(['create', 'configmap', 'team-params', '--from-literal=team=blue', '--from-literal=replicas=4'])).code).toBe(0);
    expect((await k(['apply', '-f', '-'], PARAM_POLICY)).code).toBe(0);
    const paramRef = '  paramRef:\n    name: team-params\n    namespace: default\n    parameterNotFoundAction: Deny\n';
    expect((await k(['apply', '-f', '-'], binding('team-binding.example.com', 'team-policy.example.com', paramRef))).code).toBe(0);
    expect((await k(['create', 'deployment', 'api', '--image=nginx', '--replicas=1'])).code).toBe(0);
    const d = JSON.parse((await k(['get', 'deployment', 'api', '-o', 'json'])).stdout) as { metadata: { annotations: Record<string, string> }; spec: { replicas: number } };
    expect(d.metadata.annotations['example.com/team']).toBe('blue');
    expect(d.spec.replicas).toBe(4);
  });

  it('failurePolicy Fail: a runtime error rejects the request and nothing is written', async () => {
    const failing = PARAM_POLICY.replaceAll('team-policy.example.com', 'failing.example.com').replace('params.data.team', 'params.data.missing').replace('"deployments"', '"statefulsets"');
    expect((await k(['apply', '-f', '-'], failing)).code).toBe(0);
    const paramRef = '  paramRef:\n    name: team-params\n    namespace: default\n    parameterNotFoundAction: Deny\n';
    expect((await k(['apply', '-f', '-'], binding('failing-binding.example.com', 'failing.example.com', paramRef))).code).toBe(0);
    const sts = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  selector: {matchLabels: {app: db}}
  serviceName: db
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres}]}
`;
    const r = await k(['apply', '-f', '-'], sts);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("MutatingAdmissionPolicy 'failing.example.com' with binding 'failing-binding.example.com' denied request");
    expect(r.stderr).toContain('variables.team');
    expect((await k(['get', 'statefulset', 'db'])).code).not.toBe(0);
  });

  it('refuses at write a mutation without patchType and one whose expression does not compile', async () => {
    const noType = LABEL_POLICY.replace('label-policy.example.com', 'no-type.example.com').replace('  - patchType: JSONPatch\n', '  - jsonPatch:\n').replace('    jsonPatch:\n      expression', '      expression');
    const r1 = await k(['apply', '-f', '-'], noType);
    expect(r1.code).not.toBe(0);
    expect(r1.stderr).toContain('spec.mutations[0].patchType: Required value');
    const broken = SIDECAR_POLICY.replace('sidecar-policy.example.com', 'broken.example.com').replace('restartPolicy: "Always"', 'restartPolicy: ');
    const r2 = await k(['apply', '-f', '-'], broken);
    expect(r2.code).not.toBe(0);
    expect(r2.stderr).toContain('spec.mutations[0].applyConfiguration.expression: Invalid value');
  });
});

describe.skipIf(!kubectlAvailable())(`kubectl with the MutatingAdmissionPolicy gate off (--naming=${naming})`, () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess([`--naming=${naming}`, RUNTIME]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('does not serve the resources, whatever --runtime-config says', async () => {
    const r = await kubectl(server.kubeconfig, ['api-resources', `--api-group=${group}`, '-o', 'name']);
    expect(r.stdout).toContain(`validatingadmissionpolicies.${group}`);
    expect(r.stdout).not.toContain('mutatingadmissionpolic');
    expect((await kubectl(server.kubeconfig, ['get', 'mutatingadmissionpolicies'])).code).not.toBe(0);
  });
});
}
