// The aggregation layer with stock kubectl, under both namings: the local APIServices, an
// extension API server (written for the tests: HTTPS with its own CA, one resource) registered
// through a Service, Endpoints and an APIService, its resource listed and watched through the
// server, its discovery merged (api-resources), and availability going False when it stops;
// and in a three-replica cluster, every replica proxying and listing the extension.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming, NAMING_MODES } from '../internal/naming/naming.js';
import { createCertificateAuthority, issueCertificate } from '../internal/pki/certificates.js';
import { startExtensionApiServer, type ExtensionApiServer } from '../internal/testserver/extension-apiserver.js';
import { ClusterProcess } from './support/cluster-process.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

const GROUP = 'widgets.example.com';
/** What kubectl apply may print besides its results: the v1 Endpoints deprecation warning (the resolver reads Endpoints). */
const onlyEndpointsWarning = (stderr: string): string[] => stderr.split('\n').filter((l) => l !== '' && !l.startsWith('Warning: v1 Endpoints is deprecated'));

describe.skipIf(!kubectlAvailable()).each(NAMING_MODES)('aggregation layer with kubectl (--naming=%s)', (mode) => {
  const naming = createNaming(mode);
  const registration = naming.group('apiregistration.k8s.io');
  let server: ServerProcess;
  let ext: ExtensionApiServer;
  let dir: string;
  const k = (args: string[], input?: string) => kubectl(server.kubeconfig, args, input);
  // Stock kubectl prints the server's Table columns only under the upstream naming (the
  // Table's meta group is the naming's: issue 17 §6); the jsonpath checks hold under both.
  const tables = mode === 'kubernetes';
  const availability = async (name: string) =>
    (await k(['get', 'apiservice', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Available")].status}/{.status.conditions[?(@.type=="Available")].reason}'])).stdout;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-e2e-aggr-'));
    const ca = await createCertificateAuthority('front-proxy-ca');
    const client = await issueCertificate(ca, { commonName: 'front-proxy-client', usage: 'client' });
    writeFileSync(join(dir, 'proxy.crt'), client.certPem);
    writeFileSync(join(dir, 'proxy.key'), client.keyPem);
    ext = await startExtensionApiServer({ group: GROUP, version: 'v1', dnsNames: ['widgets.default.svc'] });
    server = await startServerProcess([`--naming=${mode}`, `--proxy-client-cert-file=${join(dir, 'proxy.crt')}`, `--proxy-client-key-file=${join(dir, 'proxy.key')}`]);
  });
  afterAll(async () => {
    await server?.stop();
    await ext?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl get apiservices shows the local APIServices as available', async () => {
    for (let i = 0; i < 50 && (await availability('v1.apps')) !== 'True/Local'; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await availability('v1.apps')).toBe('True/Local');
    expect(await availability('v1.')).toBe('True/Local');
    const out = (await k(['get', 'apiservices'])).stdout;
    expect(out).toContain(`v1.${naming.group('rbac.authorization.k8s.io')} `);
    if (tables) {
      expect(out).toMatch(/^NAME\s+SERVICE\s+AVAILABLE\s+AGE\n/);
      expect(out).toMatch(/\nv1\.\s+Local\s+True\s/);
      expect(out).toMatch(/\nv1\.apps\s+Local\s+True\s/);
    }
  });

  it('registers the extension and serves its resource through kubectl', async () => {
    const manifests = `apiVersion: v1
kind: Service
metadata: {name: widgets, namespace: default}
spec:
  ports: [{port: 443, targetPort: ${ext.server.port}}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: widgets, namespace: default}
subsets:
- addresses: [{ip: 127.0.0.1}]
  ports: [{port: ${ext.server.port}}]
---
apiVersion: ${registration}/v1
kind: APIService
metadata: {name: v1.${GROUP}}
spec:
  group: ${GROUP}
  version: v1
  service: {namespace: default, name: widgets, port: 443}
  caBundle: ${ext.server.caBundle}
  groupPriorityMinimum: 1000
  versionPriority: 15
`;
    const applied = await k(['apply', '-f', '-'], manifests);
    expect(applied.code, applied.stderr).toBe(0);
    expect(onlyEndpointsWarning(applied.stderr)).toEqual([]);
    expect(applied.stdout).toContain(`apiservice.${registration}/v1.${GROUP} created`);
    const waited = await k(['wait', '--for=condition=Available', `apiservice/v1.${GROUP}`, '--timeout=20s']);
    expect(waited.stdout).toContain('condition met');
    ext.put('default', 'w1', { size: 3 });
    const got = await k(['get', 'widgets']);
    expect(got.stderr).toBe('');
    expect(got.stdout).toMatch(/\nw1\s/);
    const one = await k(['get', 'widget', 'w1', '-o', 'jsonpath={.spec.size}']);
    expect(one.stdout).toBe('3');
    const seen = ext.received.filter((r) => r.path.startsWith(`/apis/${GROUP}/v1/namespaces/default/widgets`)).at(-1)!;
    expect(seen.clientCn).toBe('front-proxy-client');
    expect(seen.headers['x-remote-user']).toBe('admin');
    expect(seen.headers['x-remote-group']).toContain('system:masters');
    const resources = await k(['api-resources', `--api-group=${GROUP}`]);
    expect(resources.stdout).toMatch(new RegExp(`\\nwidgets\\s+wd\\s+${GROUP.replace(/\./g, '\\.')}/v1\\s+true\\s+Widget\\n`));
    expect(await availability(`v1.${GROUP}`)).toBe('True/Passed');
    if (tables) {
      const listed = await k(['get', 'apiservices', `v1.${GROUP}`]);
      expect(listed.stdout).toMatch(new RegExp(`\\nv1\\.${GROUP.replace(/\./g, '\\.')}\\s+default/widgets\\s+True\\s`));
    }
  });

  it('streams kubectl get --watch through the proxy', async () => {
    const child = spawn('kubectl', [`--kubeconfig=${server.kubeconfig}`, 'get', 'widgets', '--watch', '--output-watch-events', '-o', 'custom-columns=EVENT:.type,NAME:.object.metadata.name'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KUBECACHEDIR: `${server.kubeconfig}.cache` },
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    try {
      for (let i = 0; i < 100 && ext.watchers() === 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(ext.watchers()).toBe(1);
      ext.put('default', 'w2');
      for (let i = 0; i < 100 && !/ADDED\s+w2/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out).toMatch(/ADDED\s+w2/);
    } finally {
      child.kill();
    }
  });

  it('marks the APIService unavailable when the extension stops', async () => {
    await ext.close();
    const failed = await k(['get', 'widgets']);
    expect(failed.code).not.toBe(0);
    const waited = await k(['wait', '--for=condition=Available=false', `apiservice/v1.${GROUP}`, '--timeout=20s']);
    expect(waited.stdout).toContain('condition met');
    expect(await availability(`v1.${GROUP}`)).toBe('False/FailedDiscoveryCheck');
    if (tables) expect((await k(['get', 'apiservices', `v1.${GROUP}`])).stdout).toMatch(/False \(FailedDiscoveryCheck\)/);
    const refused = await k(['get', 'widgets']);
    expect(refused.stderr).toContain('service unavailable');
  });
});

describe.skipIf(!kubectlAvailable())('aggregation layer in a three-replica cluster', () => {
  let cluster: ClusterProcess;
  let ext: ExtensionApiServer;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-e2e-aggr-cluster-'));
    const ca = await createCertificateAuthority('front-proxy-ca');
    const client = await issueCertificate(ca, { commonName: 'front-proxy-client', usage: 'client' });
    writeFileSync(join(dir, 'proxy.crt'), client.certPem);
    writeFileSync(join(dir, 'proxy.key'), client.keyPem);
    ext = await startExtensionApiServer({ group: GROUP, version: 'v1', dnsNames: ['widgets.default.svc'] });
    cluster = await ClusterProcess.started({ extraArgs: [`--proxy-client-cert-file=${join(dir, 'proxy.crt')}`, `--proxy-client-key-file=${join(dir, 'proxy.key')}`] });
  });
  afterAll(async () => {
    await cluster?.destroy();
    await ext?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every replica proxies to the extension and lists its resources', async () => {
    const leader = (await cluster.leader())!;
    const registration = createNaming('cluster').group('apiregistration.k8s.io');
    const applied = await kubectl(
      cluster.kubeconfig(leader),
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Service
metadata: {name: widgets, namespace: default}
spec: {ports: [{port: 443, targetPort: ${ext.server.port}}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: widgets, namespace: default}
subsets: [{addresses: [{ip: 127.0.0.1}], ports: [{port: ${ext.server.port}}]}]
---
apiVersion: ${registration}/v1
kind: APIService
metadata: {name: v1.${GROUP}}
spec: {group: ${GROUP}, version: v1, service: {namespace: default, name: widgets}, caBundle: ${ext.server.caBundle}, groupPriorityMinimum: 1000, versionPriority: 15}
`,
    );
    expect(applied.code, applied.stderr).toBe(0);
    expect(onlyEndpointsWarning(applied.stderr)).toEqual([]);
    expect((await kubectl(cluster.kubeconfig(leader), ['wait', '--for=condition=Available', `apiservice/v1.${GROUP}`, '--timeout=30s'])).stdout).toContain('condition met');
    ext.put('default', 'shared');
    for (const name of cluster.runningNames()) {
      const got = await kubectl(cluster.kubeconfig(name), ['get', 'widgets', '-o', 'name']);
      expect(got.stdout, `${name}: ${got.stderr}`).toBe(`widget.${GROUP}/shared\n`);
      let resources = '';
      for (let i = 0; i < 50 && !resources.includes('Widget'); i++) {
        resources = (await kubectl(cluster.kubeconfig(name), ['api-resources', `--api-group=${GROUP}`])).stdout;
        if (!resources.includes('Widget')) await new Promise((r) => setTimeout(r, 200));
      }
      expect(resources, name).toMatch(/\nwidgets\s+wd\s+widgets\.example\.com\/v1\s+true\s+Widget\n/);
    }
  });
});
