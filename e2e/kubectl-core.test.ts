// kubectl (the one installed on the machine) against a real server process, under both
// namings: the commands a user runs first.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

const MANIFESTS = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  greeting: hello
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 80
`;

for (const naming of ['cluster', 'kubernetes'] as const) {
  describe.skipIf(!kubectlAvailable())(`kubectl with --naming=${naming}`, () => {
    let server: ServerProcess;
    const k = (...args: string[]) => kubectl(server.kubeconfig, args);
    beforeAll(async () => {
      server = await startServerProcess([`--naming=${naming}`]);
    });
    afterAll(async () => {
      expect(await server.stop()).toBe(0);
    });

    it('get ns lists the four namespaces', async () => {
      const r = await k('get', 'ns', '-o', 'name');
      expect(r.stderr).toBe('');
      expect(r.stdout.trim().split('\n').sort()).toEqual(['namespace/default', 'namespace/kube-node-lease', 'namespace/kube-public', 'namespace/kube-system']);
    });

    it('api-resources shows kinds, short names and served groups', async () => {
      const r = await k('api-resources', '--no-headers');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
      expect(r.stdout).toMatch(/^pods\s+po\s+v1\s+true\s+Pod$/m);
      const rbac = naming === 'cluster' ? 'rbac.authorization.cluster.io/v1' : 'rbac.authorization.k8s.io/v1';
      expect(r.stdout).toMatch(new RegExp(`^clusterroles\\s+${rbac.replaceAll('.', '\\.')}\\s+false\\s+ClusterRole$`, 'm'));
    });

    it('applies a Deployment, a ConfigMap and a Service, shows them as YAML, deletes them', async () => {
      const applied = await kubectl(server.kubeconfig, ['apply', '-f', '-'], MANIFESTS);
      expect(applied.stderr).toBe('');
      expect(applied.stdout).toBe('deployment.apps/web created\nconfigmap/web-config created\nservice/web created\n');
      const yaml = await k('get', 'deployment', 'web', '-o', 'yaml');
      expect(yaml.stdout).toMatch(/^kind: Deployment$/m);
      expect(yaml.stdout).toMatch(/^  replicas: 2$/m);
      expect(yaml.stdout).toMatch(/^  uid: [0-9a-f-]{36}$/m);
      expect(yaml.stdout).toMatch(/^  generation: 1$/m);
      const cm = await k('get', 'configmap', 'web-config', '-o', 'jsonpath={.data.greeting}');
      expect(cm.stdout).toBe('hello');
      const svc = await k('get', 'service', 'web', '-o', 'jsonpath={.spec.ports[0].port}');
      expect(svc.stdout).toBe('80');
      const deleted = await kubectl(server.kubeconfig, ['delete', '-f', '-'], MANIFESTS);
      expect(deleted.stdout).toBe('deployment.apps "web" deleted\nconfigmap "web-config" deleted\nservice "web" deleted\n');
      const gone = await k('get', 'deployment', 'web');
      expect(gone.code).not.toBe(0);
      expect(gone.stderr).toContain('deployments.apps "web" not found');
    });

    // kubectl's typed clients post reviews to authorization.k8s.io and authentication.k8s.io
    // whatever discovery says, so under --naming=cluster (authorization.cluster.io …) they
    // cannot reach them: the auth commands are checked against the upstream naming only.
    it.runIf(naming === 'kubernetes')('auth can-i, can-i --list and whoami answer from the review kinds', async () => {
      const canI = await k('auth', 'can-i', 'get', 'pods');
      expect(canI).toMatchObject({ code: 0, stdout: 'yes\n' });
      const asBob = await k('auth', 'can-i', 'get', 'pods', '--as', 'bob');
      expect(asBob).toMatchObject({ code: 1, stdout: 'no\n' });
      const list = await k('auth', 'can-i', '--list', '--namespace', 'default');
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/m);
      expect(list.stdout).toMatch(/^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
      expect(list.stdout).toMatch(/^selfsubjectreviews\.authentication\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
      const whoami = await k('auth', 'whoami');
      expect(whoami.code).toBe(0);
      expect(whoami.stdout).toMatch(/^Username\s+admin$/m);
      expect(whoami.stdout).toMatch(/^Groups\s+\[system:masters system:authenticated\]$/m);
      const impersonated = await k('auth', 'whoami', '--as', 'bob', '-o', 'jsonpath={.status.userInfo.username}');
      expect(impersonated).toMatchObject({ code: 0, stdout: 'bob' });
    });

    it.runIf(naming === 'kubernetes')('explain deployment.spec reads the served OpenAPI', async () => {
      const r = await k('explain', 'deployment.spec');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('KIND:       Deployment');
      expect(r.stdout).toMatch(/FIELD: spec <DeploymentSpec>/);
      expect(r.stdout).toMatch(/^\s+replicas\s+<integer>$/m);
    });
  });
}
