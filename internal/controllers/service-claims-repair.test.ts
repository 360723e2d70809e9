// The Service address claims repair (service-claims-repair.ts): against a real LevelDB store
// holding Services and claims as the registry writes them, and against a real server, where a
// forced delete of an unreadable Service leaves its claims behind until the repair releases
// them, and the server's own leader controller backfills a Service stored without claims and
// records the Warning event.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../log/logger.js';
import { LevelRevisionStore } from '../store/revision-store.js';
import { encodeStored } from '../storedobject/stored-object.js';
import { CLAIMS_ROOT } from '../registry/claims.js';
import { FeatureGates } from '../config/feature-gates.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import { ServiceClaimsRepair, type RepairEvent } from './service-claims-repair.js';

const IP = `${CLAIMS_ROOT}serviceips/`;
const PORT = `${CLAIMS_ROOT}servicenodeports/`;
const keyOf = (ns: string, name: string) => `/registry/core/services/${ns}/${name}`;

const service = (ns: string, name: string, ip: string, nodePort?: number) => ({
  kind: 'Service',
  apiVersion: 'v1',
  metadata: { name, namespace: ns, uid: `uid-${name}`, creationTimestamp: '2026-11-28T10:00:00Z' },
  spec: { type: nodePort ? 'NodePort' : 'ClusterIP', clusterIP: ip, clusterIPs: [ip], ports: [{ port: 80, protocol: 'TCP', ...(nodePort ? { nodePort } : {}) }] },
});

describe('ServiceClaimsRepair on a real store', () => {
  let dir: string;
  let store: LevelRevisionStore;
  let events: RepairEvent[];
  let repair: ServiceClaimsRepair;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-claims-repair-'));
    store = await LevelRevisionStore.open({ storage: 'leveldb', path: dir });
    events = [];
    repair = new ServiceClaimsRepair(store, async (e) => void events.push(e), silentLogger);
  });
  afterEach(async () => {
    repair.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const put = async (key: string, value: Uint8Array | string) => {
    const r = await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key, value: typeof value === 'string' ? Buffer.from(value) : value }] });
    expect(r.succeeded).toBe(true);
  };
  const putService = (s: ReturnType<typeof service>) => put(keyOf(s.metadata.namespace, s.metadata.name), encodeStored(s));
  const claims = async () => Object.fromEntries((await store.range(CLAIMS_ROOT)).kvs.map((kv) => [kv.key, Buffer.from(kv.value).toString()]));

  it('backfills the claims of Services stored without them, with a Warning event per value, and is idempotent', async () => {
    await putService(service('default', 'old', '10.96.0.20', 30080));
    await putService(service('team', 'v6', 'fd00::20'));
    const report = await repair.repairOnce();
    expect(report.backfilled.sort()).toEqual([`${IP}10.96.0.20`, `${IP}fd00::20`, `${PORT}30080`]);
    expect(report.released).toEqual([]);
    expect(await claims()).toEqual({ [`${IP}10.96.0.20`]: keyOf('default', 'old'), [`${PORT}30080`]: keyOf('default', 'old'), [`${IP}fd00::20`]: keyOf('team', 'v6') });
    expect(events.map((e) => [e.service.name, e.reason, e.message, e.component]).sort()).toEqual([
      ['old', 'ClusterIPNotAllocated', 'Cluster IP [IPv4]:10.96.0.20 is not allocated; repairing', 'ipallocator-repair-controller'],
      ['old', 'PortNotAllocated', 'Port 30080 is not allocated; repairing', 'portallocator-repair-controller'],
      ['v6', 'ClusterIPNotAllocated', 'Cluster IP [IPv6]:fd00::20 is not allocated; repairing', 'ipallocator-repair-controller'],
    ]);
    expect(events.find((e) => e.service.name === 'v6')!.service).toEqual({ namespace: 'team', name: 'v6', uid: 'uid-v6' });
    const revision = store.currentRevision();
    expect(await repair.repairOnce()).toEqual({ backfilled: [], released: [], conflicts: [] });
    expect(store.currentRevision()).toBe(revision);
  });

  it('releases claims whose Service is gone or no longer holds the value; keeps those of an unreadable Service', async () => {
    await putService(service('default', 'moved', '10.96.0.31', 30031));
    await put(`${IP}10.96.0.31`, keyOf('default', 'moved'));
    await put(`${PORT}30031`, keyOf('default', 'moved'));
    await put(`${PORT}30099`, keyOf('default', 'moved')); // its old node port
    await put(`${IP}10.96.0.40`, keyOf('default', 'gone')); // a deleted Service's
    await put(keyOf('default', 'broken'), '\u0000not json{');
    await put(`${IP}10.96.0.50`, keyOf('default', 'broken'));
    const report = await repair.repairOnce();
    expect(report.released.sort()).toEqual([`${IP}10.96.0.40`, `${PORT}30099`]);
    expect(report.backfilled).toEqual([]);
    expect(Object.keys(await claims()).sort()).toEqual([`${IP}10.96.0.31`, `${IP}10.96.0.50`, `${PORT}30031`]);
    expect(events).toEqual([]);
  });

  it('hands a leaked claim to the Service that holds the value', async () => {
    await putService(service('default', 'holder', '10.96.0.60'));
    await put(`${IP}10.96.0.60`, keyOf('default', 'gone'));
    const report = await repair.repairOnce();
    expect(report.backfilled).toEqual([`${IP}10.96.0.60`]);
    expect(report.released).toEqual([]);
    expect(await claims()).toEqual({ [`${IP}10.96.0.60`]: keyOf('default', 'holder') });
  });

  it('reports a value two Services hold, once, on the one without the claim, and changes neither', async () => {
    await putService(service('default', 'first', '10.96.0.70', 30070));
    await put(`${IP}10.96.0.70`, keyOf('default', 'first'));
    await put(`${PORT}30070`, keyOf('default', 'first'));
    await putService(service('default', 'second', '10.96.0.70', 30070));
    const report = await repair.repairOnce();
    expect(report.conflicts.sort()).toEqual([`${IP}10.96.0.70 ${keyOf('default', 'second')}`, `${PORT}30070 ${keyOf('default', 'second')}`]);
    expect(report.backfilled).toEqual([]);
    expect(events.map((e) => [e.service.name, e.reason, e.message]).sort()).toEqual([
      ['second', 'ClusterIPAlreadyAllocated', 'Cluster IP [IPv4]:10.96.0.70 was assigned to multiple services; please recreate service'],
      ['second', 'PortAlreadyAllocated', 'Port 30070 was assigned to multiple services; please recreate service'],
    ]);
    expect(await claims()).toEqual({ [`${IP}10.96.0.70`]: keyOf('default', 'first'), [`${PORT}30070`]: keyOf('default', 'first') });
    // Reported once per leadership, though every run still finds it.
    expect((await repair.repairOnce()).conflicts).toHaveLength(2);
    expect(events).toHaveLength(2);
  });

  it('two Services stored without claims that share a value: one gets the claim, the other is reported', async () => {
    await putService(service('default', 'a', '10.96.0.80'));
    await putService(service('default', 'b', '10.96.0.80'));
    const report = await repair.repairOnce();
    expect(report.backfilled).toEqual([`${IP}10.96.0.80`]);
    expect(report.conflicts).toEqual([`${IP}10.96.0.80 ${keyOf('default', 'b')}`]);
    expect(events.map((e) => `${e.service.name} ${e.reason}`)).toEqual(['a ClusterIPNotAllocated', 'b ClusterIPAlreadyAllocated']);
  });

  it('never overrules a write made after its read: the preconditions are the revisions it read', async () => {
    await putService(service('default', 'racing', '10.96.0.90'));
    // A store whose first range answers, then a write lands before the repair's transaction
    // (another replica's update moving the Service to another IP, with its claim).
    let raced = false;
    const racing: typeof store = Object.create(store) as typeof store;
    racing.execute = async (command, decoded) => {
      if (!raced) {
        raced = true;
        const moved = service('default', 'racing', '10.96.0.91');
        await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: keyOf('default', 'racing'), value: encodeStored(moved) }, { type: 'put', key: `${IP}10.96.0.91`, value: Buffer.from(keyOf('default', 'racing')) }] });
      }
      return store.execute(command, decoded);
    };
    const r = new ServiceClaimsRepair(racing, async (e) => void events.push(e), silentLogger);
    expect((await r.repairOnce()).backfilled).toEqual([]);
    expect(await claims()).toEqual({ [`${IP}10.96.0.91`]: keyOf('default', 'racing') });
    expect(events).toEqual([]);
  });
});

describe('claims repair on a real server', () => {
  let t: TestServer;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'clusterd-claims-repair-server-'));
    t = await startTestServer({ dataDir, storage: 'leveldb', featureGates: FeatureGates.parse('AllowUnsafeMalformedObjectDeletion=true') }, { claimsRepairIntervalMs: 100 });
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const path = '/api/v1/namespaces/default/services';
  const claims = async () => Object.fromEntries((await t.server.store.range(CLAIMS_ROOT)).kvs.map((kv) => [kv.key, Buffer.from(kv.value).toString()]));
  const until = async (what: string, ok: () => Promise<boolean>) => {
    for (let i = 0; i < 400; i++) {
      if (await ok()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`not reached: ${what}`);
  };

  it('the claims of a force-deleted unreadable Service are released, and its address can be given out again', async () => {
    const created = await t.admin.post(path, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'doomed' }, spec: { type: 'NodePort', ports: [{ port: 80, nodePort: 30123 }] } });
    expect([200, 201], created.text()).toContain(created.status);
    const ip = created.json<{ spec: { clusterIP: string } }>().spec.clusterIP;
    const key = keyOf('default', 'doomed');
    expect(await claims()).toMatchObject({ [`${IP}${ip}`]: key, [`${PORT}30123`]: key });
    // Its stored bytes become unreadable; the repair keeps the claims of a Service it cannot read.
    await t.server.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key, value: Buffer.from('\u0000not json{') }] });
    const own = new ServiceClaimsRepair(t.server.store, async () => {}, silentLogger);
    expect((await own.repairOnce()).released).toEqual([]);
    expect(await claims()).toMatchObject({ [`${IP}${ip}`]: key, [`${PORT}30123`]: key });

    const del = await t.admin.delete(`${path}/doomed`, { ignoreStoreReadErrorWithClusterBreakingPotential: true });
    expect(del.status, del.text()).toBe(200);
    // The server's own repair (every 100 ms here) releases what the forced delete could not.
    await until('claims released', async () => !Object.values(await claims()).includes(key));
    expect(Object.keys(await claims())).not.toContain(`${IP}${ip}`);
    expect(Object.keys(await claims())).not.toContain(`${PORT}30123`);
    // Another replica (here: the next process on this data; this one still holds its own
    // one-minute reservation of what it handed out) gives the address out again.
    await t.stop();
    t = await startTestServer({ dataDir, storage: 'leveldb', featureGates: FeatureGates.parse('AllowUnsafeMalformedObjectDeletion=true') }, { claimsRepairIntervalMs: 100 });
    const again = await t.admin.post(path, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'reuse' }, spec: { type: 'NodePort', clusterIP: ip, ports: [{ port: 80, nodePort: 30123 }] } });
    expect([200, 201], again.text()).toContain(again.status);
    expect(await claims()).toMatchObject({ [`${IP}${ip}`]: keyOf('default', 'reuse'), [`${PORT}30123`]: keyOf('default', 'reuse') });
  });

  it('a Service stored without claims (by an earlier version) gets them, with a Warning event on it', async () => {
    const old = service('default', 'from-before', '10.96.200.123');
    const key = keyOf('default', 'from-before');
    await t.server.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key, value: encodeStored(old) }] });
    await until('claim backfilled', async () => (await claims())[`${IP}10.96.200.123`] === key);
    await until('event recorded', async () => {
      const list = (await t.admin.get('/api/v1/namespaces/default/events')).json<{ items: Array<{ reason: string; involvedObject: { name: string } }> }>();
      return list.items.some((e) => e.reason === 'ClusterIPNotAllocated' && e.involvedObject.name === 'from-before');
    });
    const events = (await t.admin.get('/api/v1/namespaces/default/events')).json<{ items: Array<Record<string, unknown>> }>().items;
    expect(events.find((e) => e.reason === 'ClusterIPNotAllocated')).toMatchObject({
      type: 'Warning', message: 'Cluster IP [IPv4]:10.96.200.123 is not allocated; repairing',
      involvedObject: { kind: 'Service', name: 'from-before', namespace: 'default', uid: 'uid-from-before' },
      source: { component: 'ipallocator-repair-controller' },
    });
    // Asked for now, its address is refused as allocated.
    const clash = await t.admin.post(path, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'clash' }, spec: { clusterIP: '10.96.200.123', ports: [{ port: 80 }] } });
    expect(clash.status).toBe(422);
    expect(clash.text()).toContain('provided IP is already allocated');
  });
});
