// What a fresh cluster holds, through the real kubectl against real server processes, under
// both namings: the kubernetes Service, its Endpoints and EndpointSlice, the system
// PriorityClasses, the default FlowSchemas and PriorityLevelConfigurations; an eviction a
// PodDisruptionBudget blocks (429 through `kubectl create --raw`) and one it allows; the CSR
// flow end to end (openssl key and request, kubectl create, approval — `kubectl certificate
// approve` where kubectl knows the group —, the issued certificate in a kubeconfig of its own
// authenticating as the request's subject). Then three replicas: the kubernetes Endpoints list
// all three, a replica stopped gracefully leaves at once, a replica killed leaves after its
// lease's TTL, and a restarted one comes back.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming } from '../internal/naming/naming.js';
import { ClusterProcess, sleep } from './support/cluster-process.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- kubectl output is free-form JSON

const available = kubectlAvailable();
if (process.env.CI === 'true' && !available) throw new Error('kubectl is required under CI=true');

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

for (const mode of ['cluster', 'kubernetes'] as const) {
  describe.skipIf(!available)(`a fresh server through kubectl (--naming=${mode})`, () => {
    const naming = createNaming(mode);
    let server: ServerProcess;
    const dir = mkdtempSync(join(tmpdir(), 'fresh-e2e-'));
    const k = (args: string[], input?: string, kubeconfig = server.kubeconfig) => kubectl(kubeconfig, args, input);
    const ok = async (args: string[], input?: string): Promise<string> => {
      const r = await k(args, input);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${String(r.code)}: ${r.stderr}`);
      return r.stdout;
    };
    const json = async (args: string[]): Promise<Obj> => JSON.parse(await ok([...args, '-o', 'json'])) as Obj;

    beforeAll(async () => {
      server = await startServerProcess([`--naming=${mode}`]);
    });
    afterAll(async () => {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
      if (server) rmSync(server.dataDir, { recursive: true, force: true });
    });

    it('holds the kubernetes Service, Endpoints and EndpointSlice listing this server', async () => {
      const svc = await json(['get', 'service', 'kubernetes', '-n', 'default']);
      expect(svc.spec.clusterIP).toBe('10.96.0.1');
      expect(svc.spec.ports).toEqual([{ name: 'https', port: 443, protocol: 'TCP', targetPort: server.port }]);
      const subsets = await until('the endpoints', async () => {
        const r = await k(['get', 'endpoints', 'kubernetes', '-n', 'default', '-o', 'json']);
        return r.code === 0 && (JSON.parse(r.stdout) as Obj).subsets?.length ? ((JSON.parse(r.stdout) as Obj).subsets as Obj[]) : undefined;
      });
      expect(subsets).toEqual([{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: server.port, protocol: 'TCP' }] }]);
      const slices = await json(['get', 'endpointslices', '-n', 'default', '-l', `${naming.label('service-name')}=kubernetes`]);
      expect(slices.items).toHaveLength(1);
      expect(slices.items[0].metadata.name).toBe('kubernetes');
      expect(slices.items[0].metadata.labels[`${naming.labelPrefix('endpointslice')}managed-by`]).toBe(`endpointslice-controller.${naming.groupDomain}`);
      expect(slices.items[0].endpoints).toEqual([{ addresses: ['127.0.0.1'], conditions: { ready: true } }]);
    });

    it('holds the system PriorityClasses and the default flow control objects', async () => {
      const pcs = await ok(['get', 'priorityclasses', '-o', 'custom-columns=NAME:.metadata.name,VALUE:.value', '--no-headers']);
      expect(pcs.trim().split('\n').map((l) => l.trim().split(/\s+/))).toEqual([
        ['system-cluster-critical', '2000000000'],
        ['system-node-critical', '2000001000'],
      ]);
      const schemas = (await ok(['get', 'flowschemas', '-o', 'name'])).trim().split('\n');
      expect(schemas).toContain('flowschema.flowcontrol.apiserver.' + naming.groupDomain + '/catch-all');
      expect(schemas).toHaveLength(13);
      const levels = (await ok(['get', 'prioritylevelconfigurations', '-o', 'name'])).trim().split('\n');
      expect(levels).toHaveLength(8);
      const exempt = await json(['get', 'flowschema', 'exempt']);
      expect(exempt.metadata.annotations[`apf.${naming.labelDomain}/autoupdate-spec`]).toBe('true');
      expect(exempt.spec.priorityLevelConfiguration.name).toBe('exempt');
    });

    it('refuses an eviction the disruption budget blocks with 429, and evicts once it allows one', async () => {
      const manifest = (name: string) => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  labels: {app: web}\nspec:\n  containers: [{name: c, image: busybox}]\n`;
      await ok(['apply', '-f', '-'], manifest('web-0') + '---\n' + manifest('web-1'));
      for (const name of ['web-0', 'web-1']) {
        await ok(['patch', 'pod', name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } })]);
      }
      const pod = await json(['get', 'pod', 'web-0']);
      expect(pod.spec.priority).toBe(0);
      expect(pod.spec.tolerations.map((t: Obj) => `${t.key}:${t.tolerationSeconds}`)).toEqual([`node.${naming.labelDomain}/not-ready:300`, `node.${naming.labelDomain}/unreachable:300`]);
      await ok(['apply', '-f', '-'], 'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\nspec:\n  minAvailable: 2\n  selector:\n    matchLabels: {app: web}\n');
      await until('the budget status', async () => ((await json(['get', 'pdb', 'web'])).status?.currentHealthy === 2 ? true : undefined));
      const evictionFile = join(dir, 'eviction.json');
      writeFileSync(evictionFile, JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-0', namespace: 'default' } }));
      const blocked = await k(['create', '--raw', '/api/v1/namespaces/default/pods/web-0/eviction', '-f', evictionFile]);
      expect(blocked.code).not.toBe(0);
      expect(blocked.stderr).toContain("Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's disruption budget.");
      await ok(['patch', 'pdb', 'web', '--type=merge', '-p', '{"spec":{"minAvailable":1}}']);
      await until('one disruption allowed', async () => ((await json(['get', 'pdb', 'web'])).status?.disruptionsAllowed === 1 ? true : undefined));
      await ok(['create', '--raw', '/api/v1/namespaces/default/pods/web-0/eviction', '-f', evictionFile]);
      await until('the evicted pod to go', async () => ((await k(['get', 'pod', 'web-0'])).code !== 0 ? true : undefined));
      expect((await k(['get', 'pod', 'web-1'])).code).toBe(0);
    });

    it('issues a working client certificate for an approved kube-apiserver-client request', async () => {
      const key = join(dir, 'dana.key');
      const csrFile = join(dir, 'dana.csr');
      execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', csrFile, '-subj', '/CN=dana/O=qa'], { stdio: 'ignore' });
      const group = naming.group('certificates.k8s.io');
      const csr = {
        apiVersion: `${group}/v1`,
        kind: 'CertificateSigningRequest',
        metadata: { name: 'dana' },
        spec: { request: readFileSync(csrFile).toString('base64'), signerName: `${naming.labelDomain}/kube-apiserver-client`, usages: ['client auth'], expirationSeconds: 86400 },
      };
      await ok(['create', '-f', '-'], JSON.stringify(csr));
      if (mode === 'kubernetes') {
        await ok(['certificate', 'approve', 'dana']);
      } else {
        // kubectl's certificate command is built for certificates.k8s.io: under the spec's
        // naming the approval is the same write through the approval sub-resource.
        const current = await json(['get', 'csr', 'dana']);
        current.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'approved by the test' }] };
        const file = join(dir, 'approval.json');
        writeFileSync(file, JSON.stringify(current));
        await ok(['replace', '--raw', `/apis/${group}/v1/certificatesigningrequests/dana/approval`, '-f', file]);
      }
      const cert = await until('the certificate', async () => (await ok(['get', 'csr', 'dana', '-o', 'jsonpath={.status.certificate}'])) || undefined);
      const userKubeconfig = join(dir, 'dana.kubeconfig');
      writeFileSync(
        userKubeconfig,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'c', cluster: { server: server.url, 'certificate-authority-data': readFileSync(join(server.dataDir, 'pki', 'ca.crt')).toString('base64') } }],
          users: [{ name: 'dana', user: { 'client-certificate-data': cert, 'client-key-data': readFileSync(key).toString('base64') } }],
          contexts: [{ name: 'c', context: { cluster: 'c', user: 'dana' } }],
          'current-context': 'c',
        }),
      );
      const reviewFile = join(dir, 'review.json');
      writeFileSync(reviewFile, JSON.stringify({ apiVersion: `${naming.group('authentication.k8s.io')}/v1`, kind: 'SelfSubjectReview' }));
      const who = await k(['create', '--raw', `/apis/${naming.group('authentication.k8s.io')}/v1/selfsubjectreviews`, '-f', reviewFile], undefined, userKubeconfig);
      expect(who.code, who.stderr).toBe(0);
      expect((JSON.parse(who.stdout) as Obj).status.userInfo).toEqual({ username: 'dana', groups: ['qa', 'system:authenticated'] });
      // Not an administrator: RBAC refuses what it was not granted.
      const denied = await k(['get', 'secrets', '-n', 'kube-system'], undefined, userKubeconfig);
      expect(denied.code).not.toBe(0);
      expect(denied.stderr).toContain('User "dana" cannot list resource "secrets"');
    });
  });
}

describe.skipIf(!available)('the kubernetes endpoints of three replicas', () => {
  let cluster: ClusterProcess;
  const ports = async (via: string): Promise<number[]> => {
    const r = await kubectl(cluster.kubeconfig(via), ['get', 'endpoints', 'kubernetes', '-n', 'default', '-o', 'json']);
    if (r.code !== 0) return [];
    return (((JSON.parse(r.stdout) as Obj).subsets ?? []) as Obj[]).flatMap((s) => (s.ports as Obj[]).map((p) => p.port as number)).sort((a, b) => a - b);
  };
  const portOf = (name: string) => Number(new URL(cluster.url(name)).port);
  const expected = (names: string[]) => names.map(portOf).sort((a, b) => a - b);
  const waitFor = (names: string[], via: string, timeoutMs = 30_000) =>
    until(`endpoints of ${names.join(',')}`, async () => (JSON.stringify(await ports(via)) === JSON.stringify(expected(names)) ? true : undefined), timeoutMs);

  beforeAll(async () => {
    cluster = await ClusterProcess.started();
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  it('lists every replica, drops a stopped one at once and a killed one after its TTL, and takes a restarted one back', async () => {
    await waitFor(['a', 'b', 'c'], 'a');
    // Every replica serves the same list.
    expect(await ports('b')).toEqual(expected(['a', 'b', 'c']));
    // Graceful stop: the replica deletes its lease on the way out.
    const stoppedAt = Date.now();
    await cluster.stop('c');
    await waitFor(['a', 'b'], 'a', 10_000);
    expect(Date.now() - stoppedAt).toBeLessThan(15_000);
    await cluster.start('c');
    await waitFor(['a', 'b', 'c'], 'a');
    // kill -9: no goodbye; the lease expires after 15 s and the leader drops the address.
    await cluster.kill('c');
    await waitFor(['a', 'b'], 'a', 40_000);
    await cluster.start('c');
    await waitFor(['a', 'b', 'c'], 'b');
  });
});
