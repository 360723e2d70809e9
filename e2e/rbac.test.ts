// RBAC end to end: a real server process (upstream naming), the installed kubectl, and a user
// with a client certificate issued by the server's CA. No binding → 403 with upstream's text; a
// RoleBinding to a Role allows in its namespace only; an escalation is refused with upstream's
// 403 text; `auth can-i --list` shows the bound rules.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueCertificate, loadCertificateAuthority } from '../internal/pki/certificates.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

const haveKubectl = kubectlAvailable();
if (!haveKubectl && process.env['CI'] === 'true') throw new Error('kubectl is required under CI=true');

describe.skipIf(!haveKubectl)('RBAC with kubectl against a server process', () => {
  let server: ServerProcess;
  let dir: string;
  let dave: string;
  const admin = (args: string[], input?: string) => kubectl(server.kubeconfig, args, input);
  const asDave = (args: string[]) => kubectl(dave, args);
  async function until(args: string[], ok: (r: { code: number | null; stdout: string; stderr: string }) => boolean) {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const r = await asDave(args);
      if (ok(r) || Date.now() > deadline) return r;
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rbac-e2e-'));
    server = await startServerProcess(['--naming=kubernetes']);
    const pki = join(server.dataDir, 'pki');
    const caPem = readFileSync(join(pki, 'ca.crt'), 'utf8');
    const ca = await loadCertificateAuthority(caPem, readFileSync(join(pki, 'ca.key'), 'utf8'));
    const cert = await issueCertificate(ca, { commonName: 'dave', organizations: ['qa'], usage: 'client' });
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    dave = join(dir, 'dave.kubeconfig');
    writeFileSync(
      dave,
      [
        'apiVersion: v1', 'kind: Config',
        'clusters:', '- name: c', '  cluster:', `    server: ${server.url}`, `    certificate-authority-data: ${b64(caPem)}`,
        'users:', '- name: dave', '  user:', `    client-certificate-data: ${b64(cert.certPem)}`, `    client-key-data: ${b64(cert.keyPem)}`,
        'contexts:', '- name: x', '  context: { cluster: c, user: dave }', 'current-context: x', '',
      ].join('\n'),
    );
    for (const ns of ['team', 'other']) expect((await admin(['create', 'namespace', ns])).code).toBe(0);
    // kubectl needs discovery, which upstream's bootstrap role system:discovery grants every
    // authenticated user; granted here by name of our own, so the test does not depend on it.
    expect((await admin(['create', 'clusterrole', 'e2e-discovery', '--verb=get', '--non-resource-url=/api', '--non-resource-url=/api/*', '--non-resource-url=/apis', '--non-resource-url=/apis/*', '--non-resource-url=/version'])).code).toBe(0);
    expect((await admin(['create', 'clusterrolebinding', 'e2e-discovery', '--clusterrole=e2e-discovery', '--group=system:authenticated'])).code).toBe(0);
    await until(['api-versions'], (r) => r.code === 0);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('forbids without a binding, with upstream text', async () => {
    const r = await asDave(['get', 'configmaps', '-n', 'team']);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim()).toBe('Error from server (Forbidden): configmaps is forbidden: User "dave" cannot list resource "configmaps" in API group "" in the namespace "team"');
  });

  it('allows through a RoleBinding to a Role, in that namespace only, and lists the rules', async () => {
    expect((await admin(['create', 'role', 'cm-reader', '-n', 'team', '--verb=get,list', '--resource=configmaps'])).code).toBe(0);
    expect((await admin(['create', 'rolebinding', 'cm-reader', '-n', 'team', '--role=cm-reader', '--group=qa'])).code).toBe(0);
    const ok = await until(['get', 'configmaps', '-n', 'team'], (r) => r.code === 0);
    // The root CA publisher's ConfigMap is in every namespace.
    expect(ok.stdout).toMatch(/^kube-root-ca\.crt\s/m);
    const other = await asDave(['get', 'configmaps', '-n', 'other']);
    expect(other.stderr.trim()).toBe('Error from server (Forbidden): configmaps is forbidden: User "dave" cannot list resource "configmaps" in API group "" in the namespace "other"');
    expect((await asDave(['auth', 'can-i', 'list', 'configmaps', '-n', 'team'])).stdout.trim()).toBe('yes');
    expect((await asDave(['auth', 'can-i', 'delete', 'configmaps', '-n', 'team'])).stdout.trim()).toBe('no');
    const list = await asDave(['auth', 'can-i', '--list', '-n', 'team']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^configmaps\s+\[\]\s+\[\]\s+\[get list\]$/m);
  });

  it('refuses an escalation with upstream 403 text; escalate unblocks it', async () => {
    expect((await admin(['create', 'role', 'role-writer', '-n', 'team', '--verb=create', '--resource=roles.rbac.authorization.k8s.io'])).code).toBe(0);
    expect((await admin(['create', 'rolebinding', 'role-writer', '-n', 'team', '--role=role-writer', '--user=dave'])).code).toBe(0);
    // Granting what dave holds works (once the index has the binding)...
    const same = await until(['create', 'role', 'same', '-n', 'team', '--verb=get', '--resource=configmaps'], (r) => r.code === 0);
    expect(same.stdout.trim()).toBe('role.rbac.authorization.k8s.io/same created');
    // ...granting more does not.
    const more = await asDave(['create', 'role', 'more', '-n', 'team', '--verb=get,delete', '--resource=configmaps,secrets']);
    expect(more.code).not.toBe(0);
    expect(more.stderr).toContain(
      [
        'roles.rbac.authorization.k8s.io "more" is forbidden: user "dave" (groups=["qa" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:',
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}',
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}',
      ].join('\n'),
    );
    expect((await admin(['create', 'role', 'escalator', '-n', 'team', '--verb=escalate', '--resource=roles.rbac.authorization.k8s.io'])).code).toBe(0);
    expect((await admin(['create', 'rolebinding', 'escalator', '-n', 'team', '--role=escalator', '--user=dave'])).code).toBe(0);
    const now = await until(['create', 'role', 'more', '-n', 'team', '--verb=get,delete', '--resource=configmaps,secrets'], (r) => r.code === 0);
    expect(now.stdout.trim()).toBe('role.rbac.authorization.k8s.io/more created');
  });
});
