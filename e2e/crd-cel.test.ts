// kubectl with CRD validation rules, under both namings: apply a definition with
// x-kubernetes-validations (x-cluster-validations under --naming=cluster), apply an object that
// fails a rule and read the rule's message in kubectl's error, update with a transition rule,
// and see an over-budget rule refused when the definition is applied.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crdYaml } from './support/crd-yaml.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

const celCrdYaml = (group: string, x: string, name = 'widgets', kind = 'Widget', extraRule = '') => crdYaml({
  apiextensions: group,
  group: 'cel.example.com',
  plural: name,
  kind,
  properties: `spec:
  type: object
  ${x}validations:
  - rule: self.minReplicas <= self.maxReplicas
    message: minReplicas must not exceed maxReplicas
  - rule: self.mode == oldSelf.mode
    message: mode is immutable
  - rule: "self.host.endsWith('.example.com')"
    messageExpression: "'host ' + self.host + ' is not under example.com'"
    fieldPath: .host
    reason: FieldValueForbidden${extraRule}
  properties:
    minReplicas: {type: integer}
    maxReplicas: {type: integer}
    mode: {type: string, maxLength: 16}
    host: {type: string, maxLength: 253}
    names: {type: array, items: {type: string}}`,
});

const widget = (name: string, spec: string) => `apiVersion: cel.example.com/v1
kind: Widget
metadata:
  name: ${name}
spec: ${spec}
`;

describe.skipIf(!kubectlAvailable()).each([
  ['kubernetes', 'apiextensions.k8s.io', 'x-kubernetes-'],
  ['cluster', 'apiextensions.cluster.io', 'x-cluster-'],
] as const)('kubectl with CRD validation rules (--naming=%s)', (naming, group, x) => {
  let server: ServerProcess;
  const k = (args: string[], input?: string) => kubectl(server.kubeconfig, args, input);
  beforeAll(async () => {
    server = await startServerProcess([`--naming=${naming}`]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('applies the definition and a valid object', async () => {
    expect((await k(['apply', '-f', '-'], celCrdYaml(group, x))).stdout).toBe(`customresourcedefinition.${group}/widgets.cel.example.com created\n`);
    const waited = await k(['wait', '--for=condition=Established', `customresourcedefinitions.${group}/widgets.cel.example.com`, '--timeout=20s']);
    expect(waited.stdout).toContain('condition met');
    const ok = await k(['apply', '-f', '-'], widget('w1', '{minReplicas: 1, maxReplicas: 3, mode: fast, host: a.example.com}'));
    expect(ok.stdout).toBe('widget.cel.example.com/w1 created\n');
  });

  it('shows the rule message when an object fails a rule', async () => {
    const r = await k(['apply', '-f', '-'], widget('w2', '{minReplicas: 5, maxReplicas: 3, mode: fast, host: evil.test}'));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('The Widget "w2" is invalid');
    expect(r.stderr).toContain('spec: Invalid value: "object": minReplicas must not exceed maxReplicas');
    expect(r.stderr).toContain('spec.host: Forbidden: host evil.test is not under example.com');
  });

  it('runs the transition rule on update', async () => {
    const r = await k(['apply', '-f', '-'], widget('w1', '{minReplicas: 1, maxReplicas: 3, mode: slow, host: a.example.com}'));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('spec: Invalid value: "object": mode is immutable');
    const ok = await k(['apply', '-f', '-'], widget('w1', '{minReplicas: 2, maxReplicas: 3, mode: fast, host: a.example.com}'));
    expect(ok.stdout).toBe('widget.cel.example.com/w1 configured\n');
  });

  it('refuses a definition whose rule is over the estimated cost budget', async () => {
    const expensive = `\n  - rule: "self.names.all(n, n.matches('^[a-z]+$'))"`;
    const r = await k(['apply', '-f', '-'], celCrdYaml(group, x, 'gizmos', 'Gizmo', expensive));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('is invalid');
    expect(r.stderr).toMatch(/x-(kubernetes|cluster)-validations\[3\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of (more than 100x|[\d.]+x) \(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared\)/);
  });
});
