// Integration test of the storage, certificate and node admission plugins and their
// controllers on a real server (real TLS, real RBAC), under both namings.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { pkiPaths } from '../pki/pki.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import type { ApiClient } from '../testserver/api-client.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies are free-form JSON
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(join(tmpdir(), 'plugins-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function csrPem(subject: string): string {
  const out = join(dir, `r${++n}.csr`);
  execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, `k${n}.key`), '-out', out, '-subj', subject], { stdio: 'ignore' });
  return readFileSync(out, 'utf8');
}

/** Polls until `probe` returns a value (the controllers act asynchronously). */
async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}`);
}

for (const mode of ['kubernetes', 'cluster'] as const) {
  describe(`built-in storage, certificate and node plugins (--naming=${mode})`, () => {
    const naming = createNaming(mode);
    const d = naming.labelDomain;
    let t: TestServer;
    const pvcs = '/api/v1/namespaces/default/persistentvolumeclaims';
    const pvc = (name: string, spec: Obj = {}) => ({ metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec } });
    beforeAll(async () => {
      t = await startTestServer({ naming: mode });
    });
    afterAll(async () => {
      await t?.stop();
    });

    it('DefaultStorageClass: the newest default class, never over an explicit class or ""', async () => {
      const scs = `/apis/${naming.group('storage.k8s.io')}/v1/storageclasses`;
      const sc = (name: string, isDefault: boolean) => ({ metadata: { name, annotations: isDefault ? { [`storageclass.${d}/is-default-class`]: 'true' } : {} }, provisioner: 'example.com/p' });
      expect((await t.admin.post(pvcs, pvc('none'))).json<Obj>().spec.storageClassName).toBeUndefined();
      expect((await t.admin.post(scs, sc('older', true))).status).toBe(200);
      await sleep(1100); // creationTimestamp has one-second resolution: "newer" must be later.
      expect((await t.admin.post(scs, sc('newer', true))).status).toBe(200);
      expect((await t.admin.post(scs, sc('plain', false))).status).toBe(200);
      const claim = await until('the default class', async () => {
        await t.admin.delete(`${pvcs}/probe`);
        const r = (await t.admin.post(pvcs, pvc('probe'))).json<Obj>();
        return r.spec?.storageClassName === 'newer' ? r : undefined;
      });
      expect(claim.spec.storageClassName).toBe('newer');
      expect((await t.admin.post(pvcs, pvc('explicit', { storageClassName: 'plain' }))).json<Obj>().spec.storageClassName).toBe('plain');
      expect((await t.admin.post(pvcs, pvc('empty', { storageClassName: '' }))).json<Obj>().spec.storageClassName).toBe('');
    });

    it('StorageObjectInUseProtection: a claim in use by a running pod stays until the pod ends', async () => {
      const created = (await t.admin.post(pvcs, pvc('data'))).json<Obj>();
      expect(created.metadata.finalizers).toEqual([`${d}/pvc-protection`]);
      const pod = { metadata: { name: 'user' }, spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }] } };
      expect((await t.admin.post('/api/v1/namespaces/default/pods', pod)).status).toBe(200);
      expect((await t.admin.delete(`${pvcs}/data`)).status).toBe(200);
      await sleep(300);
      const held = (await t.admin.get(`${pvcs}/data`)).json<Obj>();
      expect(held.metadata.deletionTimestamp).toBeTruthy();
      expect(held.metadata.finalizers).toEqual([`${d}/pvc-protection`]);
      const current = (await t.admin.get('/api/v1/namespaces/default/pods/user')).json<Obj>();
      expect((await t.admin.put('/api/v1/namespaces/default/pods/user/status', { ...current, status: { phase: 'Succeeded' } })).status).toBe(200);
      await until('the claim to go', async () => ((await t.admin.get(`${pvcs}/data`)).status === 404 ? true : undefined));
    });

    it('StorageObjectInUseProtection: a volume stays while Bound', async () => {
      const pvs = '/api/v1/persistentvolumes';
      const pv = { metadata: { name: 'vol' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } } };
      const created = (await t.admin.post(pvs, pv)).json<Obj>();
      expect(created.metadata.finalizers).toEqual([`${d}/pv-protection`]);
      expect((await t.admin.put(`${pvs}/vol/status`, { ...created, status: { phase: 'Bound' } })).status).toBe(200);
      expect((await t.admin.delete(`${pvs}/vol`)).status).toBe(200);
      await sleep(300);
      const held = (await t.admin.get(`${pvs}/vol`)).json<Obj>();
      expect(held.metadata.finalizers).toEqual([`${d}/pv-protection`]);
      expect((await t.admin.put(`${pvs}/vol/status`, { ...held, status: { phase: 'Released' } })).status).toBe(200);
      await until('the volume to go', async () => ((await t.admin.get(`${pvs}/vol`)).status === 404 ? true : undefined));
    });

    it('TaintNodesByCondition: a new node is not-ready until its Ready condition is True', async () => {
      const taint = { key: `node.${d}/not-ready`, effect: 'NoSchedule' };
      const node = (await t.admin.post('/api/v1/nodes', { metadata: { name: 'n1' } })).json<Obj>();
      expect(node.spec.taints).toEqual([taint]);
      const ready = (status: string) => ({ ...node, status: { conditions: [{ type: 'Ready', status, reason: 'Test', lastHeartbeatTime: '2026-01-01T00:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z' }] } });
      expect((await t.admin.put('/api/v1/nodes/n1/status', ready('True'))).status).toBe(200);
      await until('the taint to go', async () => {
        const taints = (await t.admin.get('/api/v1/nodes/n1')).json<Obj>().spec.taints;
        return taints === undefined || taints.length === 0 ? true : undefined;
      });
      const current = (await t.admin.get('/api/v1/nodes/n1')).json<Obj>();
      expect((await t.admin.put('/api/v1/nodes/n1/status', { ...ready('Unknown'), metadata: current.metadata, spec: current.spec })).status).toBe(200);
      const tainted = await until('the unreachable taint', async () => {
        const taints = (await t.admin.get('/api/v1/nodes/n1')).json<Obj>().spec.taints as Obj[] | undefined;
        return taints?.length ? taints : undefined;
      });
      expect(tainted).toEqual([{ key: `node.${d}/unreachable`, effect: 'NoSchedule' }]);
    });

    describe('certificate plugins', () => {
      const group = naming.group('certificates.k8s.io');
      const csrs = `/apis/${group}/v1/certificatesigningrequests`;
      const signer = `${d}/kube-apiserver-client`;
      const request = (name: string, subject: string) => ({ metadata: { name }, spec: { request: Buffer.from(csrPem(subject)).toString('base64'), signerName: signer, usages: ['client auth'] } });
      const rbac = `/apis/${naming.group('rbac.authorization.k8s.io')}/v1`;
      const grant = async (user: string, rules: Obj[]) => {
        expect((await t.admin.post(`${rbac}/clusterroles`, { metadata: { name: user }, rules })).status).toBeLessThan(300);
        expect((await t.admin.post(`${rbac}/clusterrolebindings`, { metadata: { name: user }, roleRef: { apiGroup: naming.group('rbac.authorization.k8s.io'), kind: 'ClusterRole', name: user }, subjects: [{ kind: 'User', name: user, apiGroup: naming.group('rbac.authorization.k8s.io') }] })).status).toBeLessThan(300);
      };
      const csrRules = [{ apiGroups: [group], resources: ['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status'], verbs: ['get', 'update'] }];
      let bob: ApiClient;
      let carol: ApiClient;
      beforeAll(async () => {
        await grant('bob', csrRules);
        await grant('carol', [...csrRules, { apiGroups: [group], resources: ['signers'], resourceNames: [`${d}/*`], verbs: ['approve'] }]);
        bob = await t.clientFor('bob');
        carol = await t.clientFor('carol');
      });
      const approve = async (c: ApiClient, name: string) => {
        const current = (await t.admin.get(`${csrs}/${name}`)).json<Obj>();
        current.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok' }] };
        return c.put(`${csrs}/${name}/approval`, current);
      };

      it('CertificateSubjectRestriction refuses system:masters for the API server client signer', async () => {
        const r = await t.admin.post(csrs, request('masters', '/CN=eve/O=system:masters'));
        expect(r.status).toBe(403);
        expect(r.json<Obj>().message).toBe(`certificatesigningrequests.${group} "masters" is forbidden: use of ${signer} signer with system:masters group is not allowed`);
        expect((await t.admin.post(csrs, request('devs', '/CN=dave/O=devs'))).status).toBeLessThan(300);
      });

      it('CertificateApproval needs approve on the signer (by name or <domain>/*)', async () => {
        expect((await t.admin.post(csrs, request('devs2', '/CN=dora/O=devs'))).status).toBeLessThan(300);
        await until('RBAC to see the grants', async () => ((await approve(carol, 'devs')).status === 200 ? true : undefined));
        const denied = await approve(bob, 'devs2');
        expect(denied.status).toBe(403);
        expect(denied.json<Obj>().message).toBe(`certificatesigningrequests.${group} "devs2" is forbidden: user not permitted to approve requests with signerName "${signer}"`);
      });

      it('CertificateSigning needs sign on the signer to set a certificate', async () => {
        // A signer no controller here signs, so the certificate is the test's to set.
        const other = { metadata: { name: 'other' }, spec: { ...request('x', '/CN=olga').spec, signerName: 'example.com/signer' } };
        expect((await t.admin.post(csrs, other)).status).toBeLessThan(300);
        expect((await approve(t.admin, 'other')).status).toBe(200);
        const current = (await t.admin.get(`${csrs}/other`)).json<Obj>();
        const certificate = Buffer.from(readFileSync(pkiPaths(t.dataDir).caCert, 'utf8')).toString('base64');
        const r = await bob.put(`${csrs}/other/status`, { ...current, status: { ...current.status, certificate } });
        expect(r.status).toBe(403);
        expect(r.json<Obj>().message).toBe(`certificatesigningrequests.${group} "other" is forbidden: user not permitted to sign requests with signerName "example.com/signer"`);
        expect((await t.admin.put(`${csrs}/other/status`, { ...current, status: { ...current.status, certificate } })).status).toBe(200);
      });
    });
  });
}
