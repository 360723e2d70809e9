// Claims (claims.ts): which keys a Service holds, how a write moves them, and, against a real
// server with a real store, that every write keeps them in step with the stored Services and
// that a value another replica claimed first (its claim committed before this replica's watch
// cache saw its Service) is never given out twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import { CLAIMS_ROOT, claimChanges, claimKeys } from './claims.js';

const SERVICES = { group: '', resource: 'services' };
const IP = `${CLAIMS_ROOT}serviceips/`;
const PORT = `${CLAIMS_ROOT}servicenodeports/`;

describe('claimKeys', () => {
  it.each([
    ['cluster IP', { spec: { clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'] } }, [`${IP}10.96.0.10`]],
    ['headless', { spec: { clusterIP: 'None', clusterIPs: ['None'] } }, []],
    ['ExternalName (no IP)', { spec: { type: 'ExternalName', externalName: 'x.example' } }, []],
    ['only clusterIP set', { spec: { clusterIP: '10.96.0.11' } }, [`${IP}10.96.0.11`]],
    [
      'NodePort, one port for TCP and UDP',
      { spec: { clusterIPs: ['10.96.0.12'], ports: [{ nodePort: 30001, protocol: 'TCP' }, { nodePort: 30001, protocol: 'UDP' }, { port: 80 }] } },
      [`${IP}10.96.0.12`, `${PORT}30001`],
    ],
  ])('%s', (_name, obj, keys) => {
    expect(claimKeys(SERVICES, obj)).toEqual(keys);
  });

  it('other resources hold none', () => {
    expect(claimKeys({ group: '', resource: 'configmaps' }, { spec: { clusterIP: '10.96.0.10' } })).toEqual([]);
    expect(claimKeys({ group: 'apps', resource: 'services' }, { spec: { clusterIP: '10.96.0.10' } })).toEqual([]);
  });
});

describe('claimChanges', () => {
  it('creates new claims with a must-not-exist precondition, keeps held ones, deletes given-up ones', () => {
    const { compares, ops } = claimChanges('/registry/core/services/default/s', ['a', 'b'], ['b', 'c']);
    expect(compares).toEqual([{ key: 'c', modRevision: 0 }]);
    expect(ops.map((o) => [o.type, o.key])).toEqual([
      ['put', 'c'],
      ['delete', 'a'],
    ]);
    const put = ops[0] as { value: Uint8Array };
    expect(new TextDecoder().decode(put.value)).toBe('/registry/core/services/default/s');
  });
});

describe('service claims on a real server', () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer();
  });
  afterAll(async () => {
    await ts?.stop();
  });

  const claims = async (): Promise<Map<string, string>> => {
    const r = await ts.server.store.range(CLAIMS_ROOT);
    return new Map(r.kvs.map((kv) => [kv.key, new TextDecoder().decode(kv.value)]));
  };
  const svc = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...spec } });
  const path = '/api/v1/namespaces/default/services';

  it('a create claims its IP and node port, an update moves the port, a delete gives both back', async () => {
    const created = await ts.admin.post(path, svc('moves', { type: 'NodePort' }));
    expect([200, 201], created.text()).toContain(created.status);
    const s = created.json<{ spec: { clusterIP: string; ports: { nodePort: number }[] } }>();
    const key = '/registry/core/services/default/moves';
    let held = await claims();
    expect(held.get(`${IP}${s.spec.clusterIP}`)).toBe(key);
    expect(held.get(`${PORT}${s.spec.ports[0]!.nodePort}`)).toBe(key);

    // The allocator starts at a random place in the range: the port moved to is never the one given.
    const target = s.spec.ports[0]!.nodePort === 31999 ? 31998 : 31999;
    const moved = { ...s, spec: { ...s.spec, ports: [{ ...s.spec.ports[0], nodePort: target }] } };
    const updated = await ts.admin.put(`${path}/moves`, moved);
    expect(updated.status, updated.text()).toBe(200);
    held = await claims();
    expect(held.get(`${PORT}${target}`)).toBe(key);
    expect(held.has(`${PORT}${s.spec.ports[0]!.nodePort}`)).toBe(false);

    expect((await ts.admin.delete(`${path}/moves`)).status).toBe(200);
    held = await claims();
    expect([...held.values()].filter((v) => v === key)).toEqual([]);
  });

  it('an address claimed by a write this replica has not seen yet is not given out again', async () => {
    // Another replica's committed create whose Service this replica's cache has not shown yet:
    // only its claims are in the store (written here directly, as that replica's txn did).
    // The allocator hands out addresses in order: after the probe, the next ones are taken.
    const probe = await ts.admin.post(`${path}?dryRun=All`, svc('probe', { type: 'NodePort' }));
    const seen = probe.json<{ spec: { clusterIP: string; ports: { nodePort: number }[] } }>().spec;
    const ipAfter = (ip: string, n: number): string => {
      const v = ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0) + n;
      return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
    };
    const takenIPs = [1, 2, 3].map((n) => ipAfter(seen.clusterIP, n));
    // The node-port range 30000-32767 wraps around.
    const takenPorts = [1, 2, 3].map((n) => 30000 + ((seen.ports[0]!.nodePort - 30000 + n) % 2768));
    const other = new TextEncoder().encode('/registry/core/services/other/elsewhere');
    const r = await ts.server.store.execute({
      type: 'txn',
      compares: [],
      ops: [...takenIPs.map((ip) => `${IP}${ip}`), ...takenPorts.map((port) => `${PORT}${port}`)].map((key) => ({ type: 'put' as const, key, value: other })),
    });
    expect(r.succeeded).toBe(true);

    const created = await ts.admin.post(path, svc('second', { type: 'NodePort' }));
    expect([200, 201], created.text()).toContain(created.status);
    const got = created.json<{ spec: { clusterIP: string; ports: { nodePort: number }[] } }>().spec;
    expect(takenIPs).not.toContain(got.clusterIP);
    expect(takenPorts).not.toContain(got.ports[0]!.nodePort);
    const held = await claims();
    expect(held.get(`${IP}${got.clusterIP}`)).toBe('/registry/core/services/default/second');
    const next = { clusterIP: takenIPs[0]! };

    // Asked for by name, the taken address is refused as upstream's allocator refuses it.
    const asked = await ts.admin.post(path, svc('third', { clusterIP: next.clusterIP }));
    expect(asked.status, asked.text()).toBe(422);
    expect(asked.json<{ message: string }>().message).toContain('provided IP is already allocated');
    expect((await ts.admin.get(`${path}/third`)).status).toBe(404);
  });
});
