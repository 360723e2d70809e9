// kubectl's write paths (spec §2.7, §4.7–§4.9): client-side apply (strategic merge patches),
// server-side apply by two managers with a conflict and --force-conflicts, the three patch
// types, server dry run, and strict validation of unknown fields.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

const deployment = (replicas: number, image = 'nginx:1.27') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: ${image}
`;

for (const naming of ['cluster', 'kubernetes'] as const) {
  describe.skipIf(!kubectlAvailable())(`kubectl writes (--naming=${naming})`, () => {
    let server: ServerProcess;
    const k = (args: string[], input?: string) => kubectl(server.kubeconfig, args, input);
    const jsonpath = async (path: string) => (await k(['get', 'deploy', 'web', '-o', `jsonpath=${path}`])).stdout;
    beforeAll(async () => {
      server = await startServerProcess([`--naming=${naming}`]);
    });
    afterAll(async () => {
      await server.stop();
    });

    it('apply (client-side) creates, then configures with a strategic merge patch', async () => {
      expect((await k(['apply', '-f', '-'], deployment(2))).stdout).toBe('deployment.apps/web created\n');
      const second = await k(['apply', '-f', '-', '-v=6'], deployment(3, 'nginx:1.28'));
      expect(second.stdout).toBe('deployment.apps/web configured\n');
      expect(second.stderr).toMatch(/PATCH https:\/\/\S+\/apis\/apps\/v1\/namespaces\/default\/deployments\/web/);
      expect(await jsonpath('{.spec.replicas} {.spec.template.spec.containers[0].image}')).toBe('3 nginx:1.28');
      expect((await k(['apply', '-f', '-'], deployment(3, 'nginx:1.28'))).stdout).toBe('deployment.apps/web unchanged\n');
    });

    it('patch --type=json|merge|strategic', async () => {
      expect((await k(['patch', 'deploy', 'web', '--type=merge', '-p', '{"spec":{"replicas":4}}'])).stdout).toBe('deployment.apps/web patched\n');
      expect(await jsonpath('{.spec.replicas}')).toBe('4');
      expect((await k(['patch', 'deploy', 'web', '--type=json', '-p', '[{"op":"replace","path":"/spec/replicas","value":5}]'])).stdout).toBe('deployment.apps/web patched\n');
      expect(await jsonpath('{.spec.replicas}')).toBe('5');
      await k(['patch', 'deploy', 'web', '--type=strategic', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox"}]}}}}']);
      expect(await jsonpath('{.spec.template.spec.containers[*].name}')).toBe('sidecar nginx');
      const failed = await k(['patch', 'deploy', 'web', '--type=json', '-p', '[{"op":"test","path":"/spec/replicas","value":99}]']);
      expect(failed.code).not.toBe(0);
      expect(await jsonpath('{.spec.replicas}')).toBe('5');
    });

    it('apply --server-side by two managers conflicts, --force-conflicts takes over', async () => {
      const cm = (value: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  key: ${value}\n`;
      expect((await k(['apply', '--server-side', '--field-manager=first', '-f', '-'], cm('one'))).stdout).toBe('configmap/shared serverside-applied\n');
      const conflict = await k(['apply', '--server-side', '--field-manager=second', '-f', '-'], cm('two'));
      expect(conflict.code).not.toBe(0);
      expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "first": .data.key');
      const forced = await k(['apply', '--server-side', '--field-manager=second', '--force-conflicts', '-f', '-'], cm('two'));
      expect(forced.stdout).toBe('configmap/shared serverside-applied\n');
      const managed = JSON.parse((await k(['get', 'cm', 'shared', '-o', 'json', '--show-managed-fields'])).stdout) as { data: { key: string }; metadata: { managedFields: Array<{ manager: string; operation: string }> } };
      expect(managed.data.key).toBe('two');
      expect(managed.metadata.managedFields.map((m) => `${m.manager}:${m.operation}`)).toContain('second:Apply');
    });

    it('a typed create (protobuf body) owns only what it set: a later apply of paused and hostNetwork does not conflict', async () => {
      // kubectl create deployment sends protobuf, in which Go writes paused, hostNetwork, stdin... as false.
      expect((await k(['create', 'deployment', 'typed', '--image=nginx'])).code).toBe(0);
      const created = JSON.parse((await k(['get', 'deploy', 'typed', '-o', 'json', '--show-managed-fields'])).stdout) as {
        spec: Record<string, unknown> & { template: { metadata: Record<string, unknown>; spec: Record<string, unknown> & { containers: Record<string, unknown>[] } } };
        metadata: { managedFields: { manager: string; fieldsV1: unknown }[] };
      };
      expect(created.spec).not.toHaveProperty('paused');
      expect(created.spec.template.metadata).not.toHaveProperty('generation');
      expect(created.spec.template.spec).not.toHaveProperty('hostNetwork');
      expect(created.spec.template.spec.containers[0]).not.toHaveProperty('stdin');
      expect(created.spec.replicas).toBe(1);
      const owned = JSON.stringify(created.metadata.managedFields.find((m) => m.manager === 'kubectl-create')?.fieldsV1);
      expect(owned).toContain('"f:replicas"');
      expect(owned).not.toContain('"f:paused"');
      const apply = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: typed
spec:
  paused: true
  selector:
    matchLabels: {app: typed}
  template:
    metadata:
      labels: {app: typed}
    spec:
      hostNetwork: true
      containers:
      - name: nginx
        image: nginx
`;
      const r = await k(['apply', '--server-side', '--field-manager=other', '-f', '-'], apply);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe('deployment.apps/typed serverside-applied\n');
      expect(await k(['get', 'deploy', 'typed', '-o', 'jsonpath={.spec.paused} {.spec.template.spec.hostNetwork}']).then((x) => x.stdout)).toBe('true true');
    });

    it('replace of the pod manifest it created succeeds (the account defaulted by admission and its alias are not a change)', async () => {
      const pod = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: same\nspec:\n  serviceAccountName: default\n  automountServiceAccountToken: false\n  containers:\n  - name: app\n    image: nginx:1.27\n';
      expect((await k(['create', '-f', '-'], pod)).stdout).toBe('pod/same created\n');
      expect(await k(['get', 'pod', 'same', '-o', 'jsonpath={.spec.serviceAccount} {.spec.serviceAccountName}']).then((x) => x.stdout)).toBe('default default');
      const replaced = await k(['replace', '-f', '-'], pod.replace('image: nginx:1.27', 'image: nginx:1.28'));
      expect(replaced.stderr).toBe('');
      expect(replaced.stdout).toBe('pod/same replaced\n');
    });

    // kubectl diff dry-runs its client-side apply patch, which carries "annotations": {}; Go's
    // encoder omits an empty map, so an object nobody changed diffs clean (exit 0).
    it('diff of an object as kubectl create made it reports nothing; a real change exits 1', async () => {
      expect((await k(['create', 'configmap', 'diffed', '--from-literal=a=b'])).code).toBe(0);
      const live = (await k(['get', 'configmap', 'diffed', '-o', 'yaml'])).stdout;
      const same = await k(['diff', '-f', '-'], live);
      expect(same.code, same.stdout + same.stderr).toBe(0);
      expect(same.stdout).toBe('');
      const changed = await k(['diff', '-f', '-'], live.replace('a: b', 'a: c'));
      expect(changed.code, changed.stderr).toBe(1);
      expect(changed.stdout).toMatch(/^-\s+a: b$/m);
      expect(changed.stdout).toMatch(/^\+\s+a: c$/m);
      expect(changed.stdout).not.toMatch(/annotations/);
    });

    // kubectl debug patches pods/ephemeralcontainers; the pod-update rule that freezes the spec
    // does not apply there, only that existing ephemeral containers stay as they are.
    it('debug adds an ephemeral container through the sub-resource; an existing one cannot be changed', async () => {
      expect((await k(['run', 'dbg', '--image=nginx:1.27'])).code).toBe(0);
      const debug = await k(['debug', 'dbg', '--image=busybox', '--target=dbg', '--container=probe', '--attach=false', '--profile=general', '-q']);
      expect(debug.code, debug.stderr).toBe(0);
      expect((await k(['get', 'pod', 'dbg', '-o', 'jsonpath={.spec.ephemeralContainers[0].name} {.spec.ephemeralContainers[0].targetContainerName}'])).stdout).toBe('probe dbg');
      const change = await k(['patch', 'pod', 'dbg', '--subresource=ephemeralcontainers', '--type=json', '-p', '[{"op":"replace","path":"/spec/ephemeralContainers/0/image","value":"alpine"}]']);
      expect(change.code).toBe(1);
      expect(change.stderr).toContain('existing ephemeral containers "probe" may not be changed');
    });

    it('create --dry-run=server -o yaml shows the defaulted object and stores nothing', async () => {
      const r = await k(['create', 'deployment', 'dry', '--image=nginx', '--dry-run=server', '-o', 'yaml']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^  progressDeadlineSeconds: 600$/m);
      expect(r.stdout).toMatch(/^  uid: [0-9a-f-]{36}$/m);
      expect(r.stdout).not.toMatch(/resourceVersion/);
      const get = await k(['get', 'deploy', 'dry']);
      expect(get.stderr).toContain('"dry" not found');
    });

    it('create --validate=strict rejects an unknown field, --validate=warn warns', async () => {
      const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: odd\nbogus: field\n';
      const strict = await k(['create', '--validate=strict', '-f', '-'], manifest);
      expect(strict.code).not.toBe(0);
      expect(strict.stderr).toContain('unknown field "bogus"');
      const warn = await k(['create', '--validate=warn', '-f', '-'], manifest);
      expect(warn.stdout).toBe('configmap/odd created\n');
      expect(warn.stderr).toContain('Warning: unknown field "bogus"');
    });
  });
}
