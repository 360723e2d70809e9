// Stock kubectl against a server process under both namings (issue 17 §4, §6): deprecation
// Warnings as kubectl prints them (spec §9.2 item 6), the OpenAPI documents kubectl reads
// (explain from v3, explain --output=plaintext-openapiv2 from the v2 protobuf form, apply's
// validation), server-side Tables (`g=meta.k8s.io`, hard-coded in kubectl) and, under
// --naming=cluster, the 404 that names --naming=kubernetes for an upstream group.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

// Under CI a missing kubectl fails the run rather than skipping it.
const run = kubectlAvailable() || process.env.CI === 'true';

describe.skipIf(!run).each([
  ['cluster', 'cluster.io'],
  ['kubernetes', 'k8s.io'],
] as const)('stock kubectl, deprecation and OpenAPI (--naming=%s)', (naming, domain) => {
  let server: ServerProcess;
  const k = (...args: string[]) => kubectl(server.kubeconfig, args);
  const k8sIn = (input: string, ...args: string[]) => kubectl(server.kubeconfig, args, input);

  beforeAll(async () => {
    server = await startServerProcess([`--naming=${naming}`, `--runtime-config=networking.${domain}/v1beta1=true`]);
    expect((await k('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2')).code).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('prints the Warning of a deprecated GA kind with its replacement, and of a beta version with its removal', async () => {
    const endpoints = await k('get', 'endpoints', '-A');
    expect(endpoints.code).toBe(0);
    // (kubectl adds `No resources found` on stderr while a fresh cluster has no Endpoints.)
    expect(endpoints.stderr.split('\n')[0]).toBe(`Warning: v1 Endpoints is deprecated in v1.33+; use discovery.${domain}/v1 EndpointSlice`);
    expect(endpoints.stderr.match(/Warning:/g)).toHaveLength(1);
    const beta = await k('get', `ipaddresses.v1beta1.networking.${domain}`);
    expect(beta.code).toBe(0);
    expect(beta.stderr).toBe(`Warning: networking.${domain}/v1beta1 IPAddress is deprecated in v1.34+, unavailable in v1.37+; use networking.${domain}/v1 IPAddress\nNo resources found\n`);
    const cs = await k('get', 'componentstatuses');
    expect(cs.stderr).toMatch(/^Warning: v1 ComponentStatus is deprecated in v1\.19\+\n/);
    // The GA replacement carries no Warning.
    const ga = await k('get', `ipaddresses.v1.networking.${domain}`);
    expect(ga.stderr).not.toContain('Warning');
    const metrics = (await k('get', '--raw', '/metrics')).stdout;
    expect(metrics).toMatch(/^apiserver_requested_deprecated_apis\{group="",version="v1",resource="endpoints",subresource="",removed_release=""\} 1$/m);
    expect(metrics).toContain(`apiserver_requested_deprecated_apis{group="networking.${domain}",version="v1beta1",resource="ipaddresses",subresource="",removed_release="1.37"} 1`);
  });

  it('shows full Table columns for kubectl get', async () => {
    const deploy = await k('get', 'deploy');
    expect(deploy.stderr).toBe('');
    expect(deploy.stdout.split('\n')[0]!.split(/\s{2,}/)).toEqual(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE']);
    expect(deploy.stdout).toMatch(/\nweb\s+0\/2\s+0\s+0\s+\d+s\n/);
    const ns = await k('get', 'ns', 'default');
    expect(ns.stdout).toMatch(/^NAME\s+STATUS\s+AGE\ndefault\s+Active\s+\d+s\n$/);
  });

  it('explains from OpenAPI v3 and, with --output=plaintext-openapiv2, from the v2 protobuf document', async () => {
    const v3 = await k('explain', 'deployments.spec.strategy');
    expect(v3.stderr).toBe('');
    expect(v3.stdout).toMatch(/^GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1\n\nFIELD: strategy <DeploymentStrategy>\n/);
    const v2 = await k('explain', 'pods.spec.containers', '--output=plaintext-openapiv2');
    expect(v2.stderr).toBe('');
    expect(v2.stdout).toMatch(/^KIND:\s+Pod\nVERSION:\s+v1\n\nRESOURCE: containers <\[\]Object>\n/);
    expect(v2.stdout).toMatch(/\n {3}image\t<string>\n/);
  });

  it('refuses to apply a kind that does not exist with upstream\'s message, after validating known kinds', async () => {
    const unknown = await k8sIn('apiVersion: example.com/v1\nkind: Nope\nmetadata:\n  name: x\n', 'apply', '-f', '-');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toBe('error: resource mapping not found for name: "x" namespace: "" from "STDIN": no matches for kind "Nope" in version "example.com/v1"\nensure CRDs are installed first\n');
    const known = await k8sIn('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: b\n', 'apply', '-f', '-');
    expect(known.stderr).toBe('');
    expect(known.stdout).toBe('configmap/applied created\n');
  });

  it(naming === 'cluster' ? 'answers kubectl auth can-i with a 404 that names --naming=kubernetes' : 'answers kubectl auth can-i', async () => {
    const r = await k('auth', 'can-i', 'get', 'pods');
    if (naming === 'kubernetes') {
      expect(r.stdout).toBe('yes\n');
      return;
    }
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Error from server (NotFound): the server could not find the requested resource; this server runs with --naming=cluster and serves authorization.k8s.io as authorization.cluster.io; --naming=kubernetes serves authorization.k8s.io');
  });
});
