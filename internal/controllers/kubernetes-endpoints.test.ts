// The kubernetes Service and its endpoints in a real in-process server: what a fresh server
// holds (Service, Endpoints, EndpointSlice with the naming's labels, this replica's lease), a
// second replica's lease joining the lists and dropping out once it is not renewed within its
// TTL (the lease is then deleted), and the pure grouping of addresses by port.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import { endpointsFor, LEASE_PREFIX, parseAddress, sliceLabels } from './kubernetes-endpoints.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies are free-form JSON
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('endpointsFor', () => {
  it('groups addresses by port: one subset per port, the most common port is the kubernetes slice', () => {
    const out = endpointsFor([
      { ip: '10.0.0.2', port: 6443 },
      { ip: '10.0.0.1', port: 6443 },
      { ip: '10.0.0.3', port: 7443 },
      { ip: '10.0.0.1', port: 6443 },
    ]);
    expect(out.primaryPort).toBe(6443);
    expect(out.subsets).toEqual([
      { addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] },
      { addresses: [{ ip: '10.0.0.3' }], ports: [{ name: 'https', port: 7443, protocol: 'TCP' }] },
    ]);
    expect(out.slices.map((s) => [s.name, s.port, s.endpoints.length])).toEqual([
      ['kubernetes', 6443, 2],
      ['kubernetes-7443', 7443, 1],
    ]);
  });
  it('has nothing for no addresses', () => {
    expect(endpointsFor([])).toEqual({ subsets: [], slices: [], primaryPort: undefined });
  });
  it('parses ip:port and [ip6]:port, and nothing else', () => {
    expect(parseAddress('10.1.2.3:443')).toEqual({ ip: '10.1.2.3', port: 443 });
    expect(parseAddress('[::1]:6443')).toEqual({ ip: '::1', port: 6443 });
    expect(parseAddress('example.com:443')).toBeUndefined();
    expect(parseAddress(undefined)).toBeUndefined();
  });
  it('labels slices per naming', () => {
    expect(sliceLabels(createNaming('kubernetes'))).toEqual({ 'kubernetes.io/service-name': 'kubernetes', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' });
    expect(sliceLabels(createNaming('cluster'))).toEqual({ 'cluster.io/service-name': 'kubernetes', 'endpointslice.cluster.io/managed-by': 'endpointslice-controller.cluster.io' });
  });
});

for (const mode of ['cluster', 'kubernetes'] as const) {
  describe(`the kubernetes service on a fresh server (--naming=${mode})`, () => {
    let t: TestServer;
    const naming = createNaming(mode);
    const get = async (path: string) => (await t.admin.get(path)).json<Obj>();
    const until = async <T>(what: string, probe: () => Promise<T | undefined>, tries = 400): Promise<T> => {
      for (let i = 0; i < tries; i++) {
        const v = await probe();
        if (v !== undefined) return v;
        await sleep(25);
      }
      throw new Error(`timed out waiting for ${what}`);
    };
    const slicesPath = `/apis/${naming.group('discovery.k8s.io')}/v1/namespaces/default/endpointslices`;
    const leasesPath = `/apis/${naming.group('coordination.k8s.io')}/v1/namespaces/kube-system/leases`;
    const subsetsOf = async () => ((await get('/api/v1/namespaces/default/endpoints/kubernetes')).subsets ?? []) as Obj[];

    beforeAll(async () => {
      t = await startTestServer({ naming: mode });
    });
    afterAll(async () => {
      await t?.stop();
    });

    it('holds the Service, its Endpoints and EndpointSlice with this replica, and its lease', async () => {
      const svc = await get('/api/v1/namespaces/default/services/kubernetes');
      expect(svc.spec.clusterIP).toBe('10.96.0.1');
      expect(svc.spec.ports).toEqual([{ name: 'https', port: 443, protocol: 'TCP', targetPort: t.server.port }]);
      expect(svc.metadata.labels).toEqual({ component: 'apiserver', provider: 'kubernetes' });
      const subsets = await until('endpoints', async () => {
        const s = await subsetsOf();
        return s.length ? s : undefined;
      });
      expect(subsets).toEqual([{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: t.server.port, protocol: 'TCP' }] }]);
      const slice = await until('the slice', async () => {
        const r = await t.admin.get(`${slicesPath}/kubernetes`);
        return r.status === 200 ? r.json<Obj>() : undefined;
      });
      expect(slice.metadata.labels).toEqual(sliceLabels(naming));
      expect(slice.addressType).toBe('IPv4');
      expect(slice.endpoints).toEqual([{ addresses: ['127.0.0.1'], conditions: { ready: true } }]);
      expect(slice.ports).toEqual([{ name: 'https', port: t.server.port, protocol: 'TCP' }]);
      const lease = await get(`${leasesPath}/${LEASE_PREFIX}default`);
      expect(lease.spec.holderIdentity).toBe('default');
      expect(lease.spec.leaseDurationSeconds).toBe(15);
      expect(lease.metadata.annotations[`apiserver.${naming.labelDomain}/advertise-address`]).toBe(`127.0.0.1:${t.server.port}`);
    });

    it('lists another replica while its lease is renewed and drops it after its TTL', async () => {
      const other = {
        metadata: { name: `${LEASE_PREFIX}other`, annotations: { [`apiserver.${naming.labelDomain}/advertise-address`]: `127.0.0.2:${t.server.port}` } },
        spec: { holderIdentity: 'other', leaseDurationSeconds: 2, renewTime: new Date().toISOString().replace('Z', '000Z') },
      };
      const created = await t.admin.post(leasesPath, other);
      expect(created.status, created.text()).toBeLessThan(300);
      const both = await until('two addresses', async () => {
        const s = await subsetsOf();
        return s[0]?.addresses?.length === 2 ? s : undefined;
      });
      expect(both[0]!.addresses).toEqual([{ ip: '127.0.0.1' }, { ip: '127.0.0.2' }]);
      expect((await get(`${slicesPath}/kubernetes`)).endpoints.map((e: Obj) => e.addresses[0])).toEqual(['127.0.0.1', '127.0.0.2']);
      // Not renewed: gone after its 2 s, and so is its lease.
      const one = await until('the expired replica to drop out', async () => {
        const s = await subsetsOf();
        return s[0]?.addresses?.length === 1 ? s : undefined;
      });
      expect(one[0]!.addresses).toEqual([{ ip: '127.0.0.1' }]);
      await until('the expired lease to be deleted', async () => ((await t.admin.get(`${leasesPath}/${LEASE_PREFIX}other`)).status === 404 ? true : undefined));
      expect((await get(`${slicesPath}/kubernetes`)).endpoints).toEqual([{ addresses: ['127.0.0.1'], conditions: { ready: true } }]);
    });
  });
}

describe('the kubernetes service on a data directory where its address is taken', () => {
  it('gets another address instead of failing the start', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dataDir = mkdtempSync(join(tmpdir(), 'clusterd-kube-svc-'));
    try {
      let t = await startTestServer({ dataDir, storage: 'leveldb' });
      // As a data directory from before: no kubernetes service, another one on its address.
      // (One create first: the allocator forgets a reservation only once it sees the stored service.)
      expect((await t.admin.post('/api/v1/namespaces/default/services', { metadata: { name: 'other' }, spec: { ports: [{ port: 80 }] } })).status).toBe(200);
      expect((await t.admin.delete('/api/v1/namespaces/default/services/kubernetes')).status).toBe(200);
      const taken = await t.admin.post('/api/v1/namespaces/default/services', { metadata: { name: 'first' }, spec: { clusterIP: '10.96.0.1', ports: [{ port: 80 }] } });
      expect(taken.status, taken.text()).toBe(200);
      await t.stop();
      t = await startTestServer({ dataDir, storage: 'leveldb' });
      try {
        const svc = (await t.admin.get('/api/v1/namespaces/default/services/kubernetes')).json<Obj>();
        expect(svc.spec.clusterIP).toMatch(/^10\.(9[6-9]|10[0-9]|11[01])\./);
        expect(svc.spec.clusterIP).not.toBe('10.96.0.1');
      } finally {
        await t.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
