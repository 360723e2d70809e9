// e2e: the Node authorizer and NodeRestriction on a real server process, with real client
// certificates for system:node:node-a and system:node:node-b (O=system:nodes) over HTTPS and
// with kubectl: a node reads what its bound pods reference and nothing else, with upstream's
// 403 text; the graph follows a pod being deleted; tokens only for its pods' service accounts
// and bound to its own pods; its own lease only. (Node and pod writes need RBAC's system:node
// role, which is not in this chain yet: NodeRestriction's rules on them are unit-tested.)

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueCertificate, loadCertificateAuthority } from '../internal/pki/certificates.js';
import { kubeconfigText } from '../internal/pki/pki.js';
import { adminCredentials, HttpsClient } from './support/https-client.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

type Json = Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!kubectlAvailable() && process.env.CI !== 'true')('node authorization (Node authorizer + NodeRestriction)', () => {
  let server: ServerProcess;
  let admin: HttpsClient;
  const nodes: Record<string, HttpsClient> = {};
  let nodeAKubeconfig: string;

  const call = (who: HttpsClient, method: string, path: string, body?: unknown) => who.json<Json>(server.url, method, path, body);
  const created = async (path: string, body: Json): Promise<Json> => {
    const r = await call(admin, 'POST', path, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  /** The graph follows the cache asynchronously (as upstream's informers): wait for a status. */
  const eventually = async (who: HttpsClient, method: string, path: string, status: number, body?: unknown) => {
    let r = await call(who, method, path, body);
    for (let i = 0; i < 100 && r.status !== status; i++) {
      await sleep(50);
      r = await call(who, method, path, body);
    }
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    return r;
  };
  const pod = (name: string, nodeName: string, spec: Json): Json => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }], ...spec },
  });

  beforeAll(async () => {
    server = await startServerProcess(['--naming=kubernetes', '--storage=memory', '--enable-admission-plugins=NodeRestriction']);
    const pki = join(server.dataDir, 'pki');
    admin = new HttpsClient(adminCredentials(pki));
    const caPem = readFileSync(join(pki, 'ca.crt'), 'utf8');
    const ca = await loadCertificateAuthority(caPem, readFileSync(join(pki, 'ca.key'), 'utf8'));
    for (const n of ['node-a', 'node-b']) {
      const pair = await issueCertificate(ca, { commonName: `system:node:${n}`, organizations: ['system:nodes'], usage: 'client' });
      nodes[n] = new HttpsClient({ ca: caPem, cert: pair.certPem, key: pair.keyPem });
      if (n === 'node-a') {
        nodeAKubeconfig = join(mkdtempSync(join(tmpdir(), 'clusterd-node-')), 'node-a.kubeconfig');
        writeFileSync(nodeAKubeconfig, kubeconfigText({ server: server.url, caPem, certPem: pair.certPem, keyPem: pair.keyPem, user: 'node-a' }));
      }
      await created('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: n } });
    }
    await created('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } });
    for (const s of ['secret-a', 'secret-b']) await created('/api/v1/namespaces/apps/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: s }, stringData: { k: s } });
    await created('/api/v1/namespaces/apps/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'config-a' }, data: { k: 'v' } });
    for (const sa of ['sa-a', 'sa-b']) await created('/api/v1/namespaces/apps/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa } });
    await created(
      '/api/v1/namespaces/apps/pods',
      pod('pod-a', 'node-a', {
        serviceAccountName: 'sa-a',
        volumes: [
          { name: 'creds', secret: { secretName: 'secret-a' } },
          { name: 'cfg', projected: { sources: [{ configMap: { name: 'config-a' } }] } },
        ],
      }),
    );
    await created('/api/v1/namespaces/apps/pods', pod('pod-b', 'node-b', { serviceAccountName: 'sa-b', volumes: [{ name: 'creds', secret: { secretName: 'secret-b' } }] }));
  }, 60_000);

  afterAll(async () => {
    admin?.close();
    for (const c of Object.values(nodes)) c.close();
    await server?.stop();
  });

  it('node-a reads the secret and the projected configmap of its pod, and not node-b’s secret', async () => {
    const secret = await eventually(nodes['node-a']!, 'GET', '/api/v1/namespaces/apps/secrets/secret-a', 200);
    expect((secret.body.metadata as Json).name).toBe('secret-a');
    await eventually(nodes['node-a']!, 'GET', '/api/v1/namespaces/apps/configmaps/config-a', 200);
    const other = await call(nodes['node-a']!, 'GET', '/api/v1/namespaces/apps/secrets/secret-b');
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      message: `secrets "secret-b" is forbidden: User "system:node:node-a" cannot get resource "secrets" in API group "" in the namespace "apps": no relationship found between node 'node-a' and this object`,
    });
    // node-b is the mirror image.
    await eventually(nodes['node-b']!, 'GET', '/api/v1/namespaces/apps/secrets/secret-b', 200);
    expect((await call(nodes['node-b']!, 'GET', '/api/v1/namespaces/apps/secrets/secret-a')).status).toBe(403);
    // Listing is not the Node authorizer's to grant.
    expect((await call(nodes['node-a']!, 'GET', '/api/v1/namespaces/apps/secrets')).status).toBe(403);
  });

  it('kubectl with node-a’s certificate: its pod’s secret, not another’s', async () => {
    // Raw paths: discovery is RBAC's to grant (system:discovery), not the Node authorizer's.
    const mine = await kubectl(nodeAKubeconfig, ['get', '--raw', '/api/v1/namespaces/apps/secrets/secret-a']);
    expect(mine.code, mine.stderr).toBe(0);
    expect((JSON.parse(mine.stdout) as { metadata: { name: string } }).metadata.name).toBe('secret-a');
    const theirs = await kubectl(nodeAKubeconfig, ['get', '--raw', '/api/v1/namespaces/apps/secrets/secret-b']);
    expect(theirs.code).not.toBe(0);
    expect(theirs.stderr).toContain(`no relationship found between node 'node-a' and this object`);
  });

  it('its own Node and pods, not node-b’s; it cannot create a pod bound to node-b', async () => {
    expect((await call(nodes['node-a']!, 'GET', '/api/v1/nodes/node-a')).status).toBe(200);
    const other = await call(nodes['node-a']!, 'GET', '/api/v1/nodes/node-b');
    expect(other.status).toBe(403);
    expect(String(other.body.message)).toContain(`node 'node-a' cannot read 'node-b', only its own Node object`);
    await eventually(nodes['node-a']!, 'GET', '/api/v1/namespaces/apps/pods/pod-a', 200);
    expect((await call(nodes['node-a']!, 'GET', '/api/v1/namespaces/apps/pods/pod-b')).status).toBe(403);
    const create = await call(nodes['node-a']!, 'POST', '/api/v1/namespaces/apps/pods', pod('sneaky', 'node-b', {}));
    expect(create.status).toBe(403);
    expect((await call(admin, 'GET', '/api/v1/namespaces/apps/pods/sneaky')).status).toBe(404);
  });

  it('writes its own Node status and its pods’ status, watches its pods by spec.nodeName, and has the system:node rules (services, events)', async () => {
    const a = nodes['node-a']!;
    const statusPut = async (path: string) => {
      const current = (await call(admin, 'GET', path)).body;
      return call(a, 'PUT', `${path}/status`, { ...current, status: { ...((current.status as Json) ?? {}), conditions: [{ type: 'Ready', status: 'True' }] } });
    };
    expect((await statusPut('/api/v1/nodes/node-a')).status).toBe(200);
    const otherNode = await statusPut('/api/v1/nodes/node-b');
    expect(otherNode.status).toBe(403);
    expect(String(otherNode.body.message)).toContain('node "node-a" is not allowed to modify node "node-b"');
    expect((await statusPut('/api/v1/namespaces/apps/pods/pod-a')).status).toBe(200);
    expect((await statusPut('/api/v1/namespaces/apps/pods/pod-b')).status).toBe(403);
    expect((await call(a, 'GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a')).status).toBe(200);
    const others = await call(a, 'GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-b');
    expect(others.status).toBe(403);
    expect(String(others.body.message)).toContain('can only list/watch pods with spec.nodeName field selector');
    expect((await call(a, 'GET', '/api/v1/services')).status).toBe(200);
    const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'node-a.1', namespace: 'default' }, involvedObject: { kind: 'Node', name: 'node-a' }, reason: 'Starting', message: 'kubelet starting' };
    expect((await call(a, 'POST', '/api/v1/namespaces/default/events', event)).status).toBeLessThan(300);
    // Not in the rules: deleting a service.
    expect((await call(a, 'DELETE', '/api/v1/namespaces/default/services/kubernetes')).status).toBe(403);
  });

  it('tokens: for its pod’s service account bound to its pod; not for another account, nor bound to another node’s pod', async () => {
    const uidOf = async (name: string): Promise<string> => String(((await call(admin, 'GET', `/api/v1/namespaces/apps/pods/${name}`)).body.metadata as Json).uid);
    const request = (podName: string, uid: string) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: podName, uid } } });
    const ok = await eventually(nodes['node-a']!, 'POST', '/api/v1/namespaces/apps/serviceaccounts/sa-a/token', 201, request('pod-a', await uidOf('pod-a')));
    expect(typeof (ok.body.status as Json).token).toBe('string');

    const otherAccount = await call(nodes['node-a']!, 'POST', '/api/v1/namespaces/apps/serviceaccounts/sa-b/token', request('pod-b', await uidOf('pod-b')));
    expect(otherAccount.status).toBe(403);
    expect(String(otherAccount.body.message)).toContain(`no relationship found between node 'node-a' and this object`);

    // Authorized (sa-a runs on node-a) but bound to a pod on node-b: NodeRestriction refuses.
    const otherPod = await call(nodes['node-a']!, 'POST', '/api/v1/namespaces/apps/serviceaccounts/sa-a/token', request('pod-b', await uidOf('pod-b')));
    expect(otherPod.status).toBe(403);
    expect(otherPod.body.message).toBe('serviceaccounts "sa-a" is forbidden: node requested token bound to a pod scheduled on a different node');
    const unbound = await call(nodes['node-a']!, 'POST', '/api/v1/namespaces/apps/serviceaccounts/sa-a/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
    expect(unbound.status).toBe(403);
    expect(unbound.body.message).toBe('serviceaccounts "sa-a" is forbidden: node requested token not bound to a pod');
  });

  it('leases: its own in kube-node-lease only', async () => {
    const lease = (name: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name } });
    expect((await call(nodes['node-a']!, 'POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease('node-a'))).status).toBe(200);
    expect((await call(nodes['node-a']!, 'GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a')).status).toBe(200);
    const other = await call(nodes['node-a']!, 'POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease('node-b'));
    expect(other.status).toBe(403);
    expect(other.body.message).toBe('leases.coordination.k8s.io "node-b" is forbidden: can only access node lease with the same name as the requesting node');
    expect((await call(nodes['node-a']!, 'POST', '/apis/coordination.k8s.io/v1/namespaces/apps/leases', lease('node-a'))).status).toBe(403);
  });

  it('access goes away when the pod is deleted', async () => {
    await eventually(nodes['node-a']!, 'GET', '/api/v1/namespaces/apps/secrets/secret-a', 200);
    const del = await call(admin, 'DELETE', '/api/v1/namespaces/apps/pods/pod-a?gracePeriodSeconds=0');
    expect(del.status).toBe(200);
    const gone = await eventually(nodes['node-a']!, 'GET', '/api/v1/namespaces/apps/secrets/secret-a', 403);
    expect(String(gone.body.message)).toContain(`no relationship found between node 'node-a' and this object`);
    expect((await call(nodes['node-a']!, 'GET', '/api/v1/namespaces/apps/configmaps/config-a')).status).toBe(403);
    // node-b's pod is untouched.
    expect((await call(nodes['node-b']!, 'GET', '/api/v1/namespaces/apps/secrets/secret-b')).status).toBe(200);
  });
});
