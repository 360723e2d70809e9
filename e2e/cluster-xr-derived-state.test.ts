// Three replicas: state a replica derives from objects and keeps in memory — the resources a
// CustomResourceDefinition serves, and the RBAC index — takes effect on a replica that was behind
// when the client wrote it elsewhere. A follower is cut off from its peers (its API still
// answers), a CRD (then a RoleBinding) is written through the leader and waited for there, and
// the follower is asked right away: it must not answer 404 (403) from its old state, but catch
// up once it hears from the leader again and answer as the leader would. Likewise a create into a
// namespace deleted through the leader, or over a quota created through the leader, is refused by
// the follower that did not have the change yet.
// A client gets the same answer from any replica, as from one kube-apiserver.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueCertificate, loadCertificateAuthority } from '../internal/pki/certificates.js';
import { ClusterProcess, sleep } from './support/cluster-process.js';
import { HttpsClient, adminCredentials } from './support/https-client.js';

const G = 'apiextensions.cluster.io';
const RBAC = 'rbac.authorization.cluster.io';

describe('derived state on a replica that was behind', () => {
  let cluster: ClusterProcess;
  let admin: HttpsClient;
  let alice: HttpsClient;
  let leader: string;
  let behind: string;

  beforeAll(async () => {
    cluster = await ClusterProcess.started();
    admin = new HttpsClient(adminCredentials(cluster.pkiDir));
    const ca = await loadCertificateAuthority(readFileSync(join(cluster.pkiDir, 'ca.crt'), 'utf8'), readFileSync(join(cluster.pkiDir, 'ca.key'), 'utf8'));
    const pair = await issueCertificate(ca, { commonName: 'alice', organizations: ['devs'], usage: 'client' });
    alice = new HttpsClient({ ca: readFileSync(join(cluster.pkiDir, 'ca.crt'), 'utf8'), cert: pair.certPem, key: pair.keyPem });
    leader = await cluster.waitForLeader();
    behind = cluster.names.find((n) => n !== leader)!;
  });
  afterAll(async () => {
    admin?.close();
    alice?.close();
    await cluster?.destroy();
  });

  /** Runs `use` against the replica while it is cut off, heals it a moment later, and returns what `use` answered. */
  async function whileBehind<T>(write: () => Promise<void>, use: () => Promise<T>): Promise<T> {
    cluster.isolate(behind);
    try {
      await write();
      const answer = use();
      // The follower cannot have heard of the write yet: whatever it answers now comes from
      // its old state, unless it waits for the leader.
      await sleep(300);
      cluster.heal(behind);
      return await answer;
    } finally {
      cluster.heal(behind);
    }
  }

  it('a custom resource is served (create, discovery) by a replica that had not applied its definition', async () => {
    const crd = {
      apiVersion: `${G}/v1`,
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gizmos.xr.example.com' },
      spec: {
        group: 'xr.example.com',
        scope: 'Namespaced',
        names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }],
      },
    };
    const created = await whileBehind(
      async () => {
        const r = await admin.request(cluster.url(leader), 'POST', `/apis/${G}/v1/customresourcedefinitions`, crd);
        expect(r.status, r.body).toBeLessThan(300);
        for (;;) {
          const got = await admin.json<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(cluster.url(leader), 'GET', `/apis/${G}/v1/customresourcedefinitions/gizmos.xr.example.com`);
          if (got.body.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
          await sleep(20);
        }
      },
      () => admin.request(cluster.url(behind), 'POST', '/apis/xr.example.com/v1/namespaces/default/gizmos', { apiVersion: 'xr.example.com/v1', kind: 'Gizmo', metadata: { name: 'g1' }, spec: { size: 1 } }),
    );
    expect(created.status, created.body).toBeLessThan(300);
    const discovered = await admin.json<{ resources: Array<{ name: string }> }>(cluster.url(behind), 'GET', '/apis/xr.example.com/v1');
    expect(discovered.status).toBe(200);
    expect(discovered.body.resources.map((r) => r.name)).toContain('gizmos');
  });

  it('discovery on a replica that had not applied a definition lists it', async () => {
    const crd = {
      apiVersion: `${G}/v1`,
      kind: 'CustomResourceDefinition',
      metadata: { name: 'doohickeys.xr.example.com' },
      spec: {
        group: 'xr.example.com',
        scope: 'Cluster',
        names: { plural: 'doohickeys', singular: 'doohickey', kind: 'Doohickey' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    const listed = await whileBehind(
      async () => {
        const r = await admin.request(cluster.url(leader), 'POST', `/apis/${G}/v1/customresourcedefinitions`, crd);
        expect(r.status, r.body).toBeLessThan(300);
      },
      () => admin.json<{ resources: Array<{ name: string }> }>(cluster.url(behind), 'GET', '/apis/xr.example.com/v1'),
    );
    expect(listed.status).toBe(200);
    expect(listed.body.resources.map((r) => r.name)).toContain('doohickeys');
  });

  it('a create into a namespace whose deletion a replica had not applied yet is refused there (403 Terminating)', async () => {
    // Three rounds: each is a chance for the follower to admit the create from a cache that
    // still shows the namespace active.
    for (const ns of ['xr-doomed-1', 'xr-doomed-2', 'xr-doomed-3']) {
      const created = await admin.request(cluster.url(leader), 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      expect(created.status, created.body).toBeLessThan(300);
      // A finalizer on an object in it keeps the namespace Terminating (not gone) meanwhile.
      const held = await admin.request(cluster.url(leader), 'POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/hold'] } });
      expect(held.status, held.body).toBeLessThan(300);
      for (let i = 0; i < 100 && (await admin.request(cluster.url(behind), 'GET', `/api/v1/namespaces/${ns}/configmaps/held`)).status !== 200; i++) await sleep(50);
      // The follower's write must reach the leader, so it is sent the moment the cut heals:
      // the follower's cache does not hold the deletion yet (the leader has to reconnect and
      // send it). A write the cut swallowed is answered 504 (outcome unknown): sent again, as
      // a client does.
      cluster.isolate(behind);
      try {
        const r = await admin.request(cluster.url(leader), 'DELETE', `/api/v1/namespaces/${ns}`);
        expect(r.status, r.body).toBe(200);
      } finally {
        cluster.heal(behind);
      }
      let late = await admin.request(cluster.url(behind), 'POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' } });
      for (let i = 0; i < 3 && late.status === 504; i++) late = await admin.request(cluster.url(behind), 'POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' } });
      expect(late.status, late.body).toBe(403);
      expect(JSON.parse(late.body).message).toContain(`unable to create new content in namespace ${ns} because it is being terminated`);
      for (const name of cluster.names) expect((await admin.request(cluster.url(name), 'GET', `/api/v1/namespaces/${ns}/configmaps/late`)).status, name).toBe(404);
      const got = await admin.json<{ metadata: Record<string, unknown> }>(cluster.url(leader), 'GET', `/api/v1/namespaces/${ns}/configmaps/held`);
      delete got.body.metadata.finalizers;
      expect((await admin.request(cluster.url(leader), 'PUT', `/api/v1/namespaces/${ns}/configmaps/held`, got.body)).status).toBe(200);
    }
  });

  it('a create over a ResourceQuota created through the leader is refused by a replica that had not applied the quota', async () => {
    // Three rounds, as for the namespace: each is a chance for the follower to admit the create
    // from a cache that has no quota in the namespace yet.
    for (const ns of ['xr-quota-1', 'xr-quota-2', 'xr-quota-3']) {
      expect((await admin.request(cluster.url(leader), 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status).toBeLessThan(300);
      for (let i = 0; i < 100 && (await admin.request(cluster.url(behind), 'GET', `/api/v1/namespaces/${ns}`)).status !== 200; i++) await sleep(50);
      const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
      cluster.isolate(behind);
      try {
        const q = await admin.request(cluster.url(leader), 'POST', `/api/v1/namespaces/${ns}/resourcequotas`, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'no-claims' }, spec: { hard: { persistentvolumeclaims: '0' } } });
        expect(q.status, q.body).toBeLessThan(300);
        // Enforced once the quota controller computed its status (as upstream).
        for (let i = 0; i < 200; i++) {
          const got = await admin.json<{ status?: { hard?: Record<string, string> } }>(cluster.url(leader), 'GET', `/api/v1/namespaces/${ns}/resourcequotas/no-claims`);
          if (got.body.status?.hard?.persistentvolumeclaims !== undefined) break;
          await sleep(50);
        }
      } finally {
        cluster.heal(behind);
      }
      let over = await admin.request(cluster.url(behind), 'POST', `/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim);
      for (let i = 0; i < 3 && over.status === 504; i++) over = await admin.request(cluster.url(behind), 'POST', `/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim);
      expect(over.status, over.body).toBe(403);
      expect(JSON.parse(over.body).message).toContain('exceeded quota: no-claims');
      for (const name of cluster.names) expect((await admin.request(cluster.url(name), 'GET', `/api/v1/namespaces/${ns}/persistentvolumeclaims/data`)).status, name).toBe(404);
    }
  });

  it('a RoleBinding granted through the leader allows the request on a replica that had not applied it; revoked, it is refused', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    for (const name of cluster.names) expect((await alice.request(cluster.url(name), 'GET', path)).status, name).toBe(403);
    const allowed = await whileBehind(
      async () => {
        for (const [kind, body] of [
          ['roles', { apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: { name: 'cm-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }] }],
          ['rolebindings', { apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: { name: 'alice-cm' }, roleRef: { apiGroup: RBAC, kind: 'Role', name: 'cm-reader' }, subjects: [{ apiGroup: RBAC, kind: 'User', name: 'alice' }] }],
        ] as const) {
          const r = await admin.request(cluster.url(leader), 'POST', `/apis/${RBAC}/v1/namespaces/default/${kind}`, body);
          expect(r.status, r.body).toBeLessThan(300);
        }
      },
      () => alice.request(cluster.url(behind), 'GET', path),
    );
    expect(allowed.status, allowed.body).toBe(200);
    for (const name of cluster.names) expect((await alice.request(cluster.url(name), 'GET', path)).status, name).toBe(200);
    // Revoked through that follower: refused there at once (it applied the delete before
    // answering); the others follow their caches as upstream's informers do (an allowed request
    // does not wait for the leader), so they are asked until they refuse.
    const revoke = await admin.request(cluster.url(behind), 'DELETE', `/apis/${RBAC}/v1/namespaces/default/rolebindings/alice-cm`);
    expect(revoke.status, revoke.body).toBe(200);
    expect((await alice.request(cluster.url(behind), 'GET', path)).status).toBe(403);
    for (const name of cluster.names) {
      let status = 0;
      for (let i = 0; i < 100 && status !== 403; i++) {
        status = (await alice.request(cluster.url(name), 'GET', path)).status;
        if (status !== 403) await sleep(50);
      }
      expect(status, name).toBe(403);
    }
  });
});
