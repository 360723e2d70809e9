// Two clusterd processes on one real etcd (--storage=etcd): kubectl through each, a watch
// resumed on the other server with its last resourceVersion (exactly once), kill -9 of one
// server under load (nothing acknowledged lost), etcd restarted under load (errors, then
// recovery without restarting clusterd; the watch goes on without a relist), the etcd readyz
// check, and leadership moving when the leading server dies. Without etcd or kubectl the file
// is skipped, except under CI=true where it fails.

import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdCluster, EtcdProcess, etcdVersion } from '../bench/targets/etcd-process.js';
import { makeClusterPki } from '../bench/targets/clusterd-cluster.js';
import { ensurePki } from '../internal/pki/pki.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import type { ApiClient } from '../internal/testserver/api-client.js';

const ready = etcdVersion() !== undefined && kubectlAvailable();
if (!ready && process.env.CI === 'true') throw new Error('etcd or kubectl is missing (tools/ensure-test-deps.sh installs etcd-server)');

/** What the server answers a successful create with. */
const created = (status: number) => status === 200 || status === 201;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Creates ConfigMaps named <prefix><n> in default through `client` one after another until
 * stopped (on a failure: pause and go on, or end); the names whose create was acknowledged.
 */
function createUnderLoad(client: ApiClient, prefix: string, onError: 'retry' | 'stop', statuses?: Map<number, number>) {
  const acknowledged: string[] = [];
  let stopped = false;
  let n = 0;
  const done = (async () => {
    while (!stopped) {
      const name = `${prefix}${n++}`;
      const res = await client.post('/api/v1/namespaces/default/configmaps', { metadata: { name } }).catch(() => ({ status: 0 }));
      statuses?.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (created(res.status)) acknowledged.push(name);
      else if (onError === 'stop') return;
      else await sleep(50);
    }
  })();
  return {
    acknowledged,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

describe.runIf(ready)('clusterd --storage=etcd: two servers on one etcd', () => {
  let root: string;
  let etcd: EtcdProcess;
  let member: Parameters<typeof EtcdProcess.spawnMember>[0];
  let agent: Agent;
  let a: ServerProcess;
  let b: ServerProcess;
  let etcdArgs: string[];

  const startEtcd = async () => {
    etcd = EtcdProcess.spawnMember(member);
    await etcd.waitHealthy(agent, 30_000);
  };
  const startServer = (name: string) => startServerProcess([...etcdArgs, `--name=${name}`], join(root, name));

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'etcd-backend-'));
    // One PKI for both servers (as replicas share one): made first, so etcd serves with it too.
    const pki = await ensurePki(join(root, 'a'), '127.0.0.1');
    mkdirSync(join(root, 'b'));
    cpSync(join(root, 'a', 'pki'), join(root, 'b', 'pki'), { recursive: true });
    agent = new Agent({ ca: readFileSync(pki.caCert), cert: readFileSync(pki.adminCert), key: readFileSync(pki.adminKey) });
    // Fresh ports when one is taken before etcd binds it; restarts later reuse the member's ports.
    ({ etcd, member } = await EtcdProcess.startOnFreePorts(
      (ports, attempt) => ({ name: 'e2e', dataDir: join(root, attempt === 1 ? 'etcd' : `etcd-${attempt}`), ...ports, certFile: pki.serverCert, keyFile: pki.serverKey, initialCluster: `e2e=http://127.0.0.1:${ports.peerPort}` }),
      agent,
      30_000,
    ));
    etcdArgs = ['--storage=etcd', `--etcd-servers=${etcd.url}`, `--etcd-cafile=${pki.caCert}`, `--etcd-certfile=${pki.adminCert}`, `--etcd-keyfile=${pki.adminKey}`];
    [a, b] = await Promise.all([startServer('a'), startServer('b')]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()].filter(Boolean));
    if (etcd?.running) await etcd.stop();
    agent?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('kubectl writes through one server and reads through the other', async () => {
    const created = await kubectl(a.kubeconfig, ['create', 'configmap', 'shared', '--from-literal=k=v']);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const got = await kubectl(b.kubeconfig, ['get', 'configmap', 'shared', '-o', 'jsonpath={.data.k}']);
    expect(got).toMatchObject({ code: 0, stdout: 'v' });
    const patched = await kubectl(b.kubeconfig, ['patch', 'configmap', 'shared', '-p', '{"data":{"k":"w"}}']);
    expect(patched.code).toBe(0);
    expect((await kubectl(a.kubeconfig, ['get', 'configmap', 'shared', '-o', 'jsonpath={.data.k}'])).stdout).toBe('w');
    expect((await a.admin.get('/readyz?verbose')).text()).toContain('[+]etcd ok');
  }, 60_000);

  it('a watch on one server sees writes through the other, and resumes on it with its last resourceVersion exactly once', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    const list = (await b.admin.get(path)).json<{ metadata: { resourceVersion: string } }>();
    const seenB: string[] = [];
    const w = b.admin.watch(`${path}?watch=1&resourceVersion=${list.metadata.resourceVersion}`, (line) => {
      const ev = JSON.parse(line) as { type: string; object: { metadata: { name: string; resourceVersion: string } } };
      seenB.push(`${ev.type} ${ev.object.metadata.name} ${ev.object.metadata.resourceVersion}`);
    });
    for (let i = 0; i < 5; i++) expect(created((await a.admin.post(path, { metadata: { name: `w${i}` }, data: { i: String(i) } })).status)).toBe(true);
    for (let t = 0; t < 100 && seenB.length < 5; t++) await sleep(50);
    w.stop();
    expect(seenB.map((s) => s.split(' ').slice(0, 2).join(' '))).toEqual([0, 1, 2, 3, 4].map((i) => `ADDED w${i}`));
    const lastRv = seenB[2]!.split(' ')[2]!;
    // Resumed on the other server from the third event: the fourth and fifth, once each.
    for (let i = 5; i < 7; i++) expect(created((await b.admin.post(path, { metadata: { name: `w${i}` } })).status)).toBe(true);
    const seenA: string[] = [];
    const w2 = a.admin.watch(`${path}?watch=1&resourceVersion=${lastRv}`, (line) => {
      const ev = JSON.parse(line) as { type: string; object: { metadata: { name: string } } };
      seenA.push(`${ev.type} ${ev.object.metadata.name}`);
    });
    for (let t = 0; t < 100 && seenA.length < 4; t++) await sleep(50);
    await sleep(300);
    w2.stop();
    expect(seenA).toEqual(['ADDED w3', 'ADDED w4', 'ADDED w5', 'ADDED w6']);
  }, 60_000);

  it('etcd restarted under load: clients see errors, then recovery without restarting clusterd; the watch goes on without a relist', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    const rv = (await a.admin.get(path)).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const events: string[] = [];
    let errorEvents = 0;
    const w = a.admin.watch(`${path}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=false`, (line) => {
      const ev = JSON.parse(line) as { type: string; object: { metadata?: { name?: string } } };
      if (ev.type === 'ERROR') errorEvents++;
      else events.push(`${ev.type} ${ev.object.metadata?.name}`);
    });
    const statuses = new Map<number, number>();
    const load = createUnderLoad(b.admin, 'r', 'retry', statuses);
    const acknowledged = load.acknowledged;
    await sleep(500);
    await etcd.kill();
    await sleep(1500);
    const down = await a.admin.get(`${path}/shared`);
    expect([503, 504]).toContain(down.status);
    expect((await a.admin.get('/readyz')).status).toBe(500);
    await startEtcd();
    // Recovery: a write through each server succeeds again.
    for (const s of [a, b]) {
      let ok = false;
      for (let t = 0; t < 100 && !ok; t++) {
        ok = created((await s.admin.post(path, { metadata: { generateName: 'after-' } })).status);
        if (!ok) await sleep(200);
      }
      expect(ok).toBe(true);
    }
    await sleep(500);
    await load.stop();
    expect([...statuses.keys()].some((s) => !created(s))).toBe(true);
    // Nothing acknowledged is lost.
    const names = new Set((await a.admin.get(path)).json<{ items: Array<{ metadata: { name: string } }> }>().items.map((i) => i.metadata.name));
    for (const name of acknowledged) expect(names.has(name)).toBe(true);
    for (let t = 0; t < 100 && !acknowledged.every((x) => events.includes(`ADDED ${x}`)); t++) await sleep(50);
    w.stop();
    // The watch delivered every acknowledged create once, in order, with no error and no relist.
    expect(errorEvents).toBe(0);
    const added = events.filter((e) => e.startsWith('ADDED r')).map((e) => e.slice(6));
    expect(added.filter((x) => acknowledged.includes(x))).toEqual(acknowledged);
    expect(new Set(events).size).toBe(events.length);
    expect(events.some((e) => e === 'ADDED shared' || e === 'ADDED w0')).toBe(false);
    expect((await a.admin.get('/readyz')).status).toBe(200);
  }, 120_000);

  it('kill -9 of the leading server under load loses nothing acknowledged; leadership moves to the other', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    // Who leads: the value of the oldest key of the election (what `etcdctl get --prefix election/` shows).
    const client = new Etcd3({ hosts: etcd.url, credentials: { rootCertificate: readFileSync(join(root, 'a', 'pki', 'ca.crt')), certChain: readFileSync(join(root, 'a', 'pki', 'admin.crt')), privateKey: readFileSync(join(root, 'a', 'pki', 'admin.key')) } });
    let leaderName: string | undefined;
    for (let t = 0; t < 100 && !leaderName; t++) {
      leaderName = await client.election('/registry#leader').leader();
      if (!leaderName) await sleep(100);
    }
    client.close();
    expect(['a', 'b']).toContain(leaderName);
    const [leader, survivor] = leaderName === 'a' ? [a, b] : [b, a];
    const load = createUnderLoad(leader.admin, 'k', 'stop');
    const acknowledged = load.acknowledged;
    await sleep(1000);
    await leader.kill();
    await load.stop();
    expect(acknowledged.length).toBeGreaterThan(0);
    const names = new Set((await survivor.admin.get(path)).json<{ items: Array<{ metadata: { name: string } }> }>().items.map((i) => i.metadata.name));
    for (const name of acknowledged) expect(names.has(name)).toBe(true);
    // The leader-only namespace controller runs on the survivor once the dead leader's lease
    // expires: a new namespace gets its default ServiceAccount there.
    expect(created((await survivor.admin.post('/api/v1/namespaces', { metadata: { name: 'after-kill' } })).status)).toBe(true);
    let sa = 0;
    for (let t = 0; t < 150 && sa !== 200; t++) {
      sa = (await survivor.admin.get('/api/v1/namespaces/after-kill/serviceaccounts/default')).status;
      if (sa !== 200) await sleep(200);
    }
    expect(sa).toBe(200);
    const restarted = await startServer(leaderName!);
    if (leaderName === 'a') a = restarted;
    else b = restarted;
    expect((await kubectl(restarted.kubeconfig, ['get', 'configmap', acknowledged[acknowledged.length - 1]!, '-o', 'name'])).code).toBe(0);
  }, 120_000);
});

describe.runIf(ready)('clusterd --storage=etcd on a three-member etcd', () => {
  let root: string;
  let cluster: EtcdCluster;
  let server: ServerProcess;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'etcd-three-'));
    const pkiDir = join(root, 'etcd-pki');
    await makeClusterPki(pkiDir, ['e1', 'e2', 'e3']);
    const file = (f: string) => join(pkiDir, f);
    cluster = await EtcdCluster.start(join(root, 'etcd'), pkiDir, ['e1', 'e2', 'e3'], { ca: readFileSync(file('ca.crt'), 'utf8'), clientCert: readFileSync(file('admin.crt'), 'utf8'), clientKey: readFileSync(file('admin.key'), 'utf8') });
    server = await startServerProcess([
      '--storage=etcd',
      `--etcd-servers=${cluster.names.map((n) => cluster.url(n)).join(',')}`,
      `--etcd-cafile=${file('ca.crt')}`,
      `--etcd-certfile=${file('admin.crt')}`,
      `--etcd-keyfile=${file('admin.key')}`,
    ], join(root, 'server'));
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await cluster?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('the etcd leader killed under load: errors at most briefly, nothing acknowledged lost, the watch goes on', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    const rv = (await server.admin.get(path)).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const events: string[] = [];
    let errorEvents = 0;
    const w = server.admin.watch(`${path}?watch=1&resourceVersion=${rv}`, (line) => {
      const ev = JSON.parse(line) as { type: string; object: { metadata?: { name?: string } } };
      if (ev.type === 'ERROR') errorEvents++;
      else if (ev.type !== 'BOOKMARK') events.push(`${ev.type} ${ev.object.metadata?.name}`);
    });
    const load = createUnderLoad(server.admin, 'l', 'retry');
    const acknowledged = load.acknowledged;
    await sleep(1000);
    const leader = await cluster.leader();
    await cluster.kill(leader);
    const before = acknowledged.length;
    // Writes go on through the two remaining members once they elect a leader.
    for (let t = 0; t < 200 && acknowledged.length < before + 20; t++) await sleep(100);
    await load.stop();
    expect(acknowledged.length).toBeGreaterThanOrEqual(before + 20);
    const names = new Set((await server.admin.get(path)).json<{ items: Array<{ metadata: { name: string } }> }>().items.map((i) => i.metadata.name));
    for (const name of acknowledged) expect(names.has(name)).toBe(true);
    for (let t = 0; t < 100 && !acknowledged.every((x) => events.includes(`ADDED ${x}`)); t++) await sleep(50);
    w.stop();
    expect(errorEvents).toBe(0);
    expect(events.filter((e) => e.startsWith('ADDED l')).map((e) => e.slice(6)).filter((x) => acknowledged.includes(x))).toEqual(acknowledged);
    expect(new Set(events).size).toBe(events.length);
    await cluster.restart(leader);
  }, 120_000);
});
