// ResourceQuota across three real replicas: concurrent creates of pods and ConfigMaps sent
// through all three at once never take a quota past its hard limit (each charge is a
// replicated compare-and-swap of the quota's status), every create beyond it is refused with
// upstream's 403, deleted objects give their usage back (the leader's resource-quota
// controller reclaims it), after which creates succeed again up to the limit, and creates
// that fail after their charge (AlreadyExists) give it back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess, sleep } from './support/cluster-process.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies are free-form JSON

// The quota logic is the same under both namings; what differs is the CA ConfigMap's name
// (the namespace's one object before the test's) and the groups the replicas serve.
describe.each([
  { naming: 'kubernetes', caConfigMap: 'kube-root-ca.crt' },
  { naming: 'cluster', caConfigMap: 'cluster-root-ca.crt' },
])('ResourceQuota on three replicas (--naming=$naming)', ({ naming, caConfigMap }) => {
  let cluster: ClusterProcess;
  const NS = '/api/v1/namespaces/quota';
  const call = (replica: string, method: string, path: string, body?: unknown) => cluster.http.json<Obj>(cluster.url(replica), method, path, body, 30_000);
  const until = async (what: string, probe: () => Promise<boolean>) => {
    for (let i = 0; i < 600; i++) {
      if (await probe()) return;
      await sleep(100);
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  const used = async (replica: string) => ((await call(replica, 'GET', `${NS}/resourcequotas/objects`)).body.status?.used ?? {}) as Record<string, string>;
  const count = async (replica: string, resource: string) => ((await call(replica, 'GET', `${NS}/${resource}`)).body.items as Obj[]).length;
  const pod = (name: string) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });

  /** `n` creates through each replica at once; the statuses by outcome. */
  async function burst(prefix: string, resource: 'pods' | 'configmaps', n: number): Promise<{ created: number; refused: Obj[]; other: Obj[] }> {
    const attempts = cluster.names.flatMap((replica) =>
      Array.from({ length: n }, (_, i) => {
        const name = `${prefix}-${replica}-${i}`;
        return call(replica, 'POST', `${NS}/${resource}`, resource === 'pods' ? pod(name) : { metadata: { name } });
      }),
    );
    const results = await Promise.all(attempts);
    return {
      created: results.filter((r) => r.status === 201 || r.status === 200).length,
      refused: results.filter((r) => r.status === 403).map((r) => r.body),
      other: results.filter((r) => r.status !== 403 && r.status >= 300).map((r) => r.body),
    };
  }

  beforeAll(async () => {
    cluster = await ClusterProcess.create({ extraArgs: [`--naming=${naming}`] });
    await cluster.startAll();
    await cluster.waitAllReady();
    const leader = await cluster.waitForLeader();
    expect((await call(leader, 'POST', '/api/v1/namespaces', { metadata: { name: 'quota' } })).status).toBeLessThan(300);
    // The namespace's default ServiceAccount and CA ConfigMap come from the leader's controllers.
    await until('the namespace objects', async () => (await call(leader, 'GET', `${NS}/serviceaccounts/default`)).status === 200 && (await call(leader, 'GET', `${NS}/configmaps/${caConfigMap}`)).status === 200);
    // Five slots each: the CA ConfigMap holds one of the six.
    expect((await call(leader, 'POST', `${NS}/resourcequotas`, { metadata: { name: 'objects' }, spec: { hard: { pods: '5', configmaps: '6' } } })).status).toBeLessThan(300);
    await until('the quota status', async () => (await used(leader)).configmaps === '1' && (await used(leader)).pods === '0');
  }, 120_000);
  afterAll(async () => {
    await cluster?.destroy();
  });

  it('never exceeds the quota under concurrent creates through every replica', async () => {
    for (const resource of ['pods', 'configmaps'] as const) {
      const r = await burst('first', resource, 5);
      expect(r.other).toEqual([]);
      expect(r.created).toBe(5);
      expect(r.refused).toHaveLength(10);
      expect(r.refused[0]!.message).toMatch(new RegExp(`^${resource} "first-[abc]-\\d" is forbidden: exceeded quota: objects, requested: ${resource}=1, used: ${resource}=${resource === 'pods' ? 5 : 6}, limited: ${resource}=${resource === 'pods' ? 5 : 6}$`));
      for (const replica of cluster.names) expect(await count(replica, resource)).toBe(resource === 'pods' ? 5 : 6);
    }
    expect(await used(cluster.names[0]!)).toEqual({ pods: '5', configmaps: '6' });
  }, 120_000);

  it('gives deleted objects’ usage back, and the freed slots are taken once each', async () => {
    const leader = await cluster.waitForLeader();
    const follower = cluster.names.find((n) => n !== leader)!;
    const pods = ((await call(follower, 'GET', `${NS}/pods`)).body.items as Obj[]).slice(0, 2);
    for (const p of pods) expect((await call(follower, 'DELETE', `${NS}/pods/${p.metadata.name}?gracePeriodSeconds=0`)).status).toBe(200);
    const cms = ((await call(follower, 'GET', `${NS}/configmaps`)).body.items as Obj[]).filter((c) => c.metadata.name !== caConfigMap).slice(0, 2);
    for (const c of cms) expect((await call(follower, 'DELETE', `${NS}/configmaps/${c.metadata.name}`)).status).toBe(200);
    await until('the reclaim', async () => {
      const u = await used(follower);
      return u.pods === '3' && u.configmaps === '4';
    });
    for (const resource of ['pods', 'configmaps'] as const) {
      const r = await burst('second', resource, 2);
      expect(r.other).toEqual([]);
      expect(r.created).toBe(2);
      expect(r.refused).toHaveLength(4);
    }
    expect(await used(follower)).toEqual({ pods: '5', configmaps: '6' });
  }, 120_000);

  it('gives back the charge of creates that fail after it (names taken), under concurrency through every replica', async () => {
    const leader = await cluster.waitForLeader();
    const names = ((await call(leader, 'GET', `${NS}/configmaps`)).body.items as Obj[]).map((c) => c.metadata.name as string).filter((n) => n !== caConfigMap);
    expect((await call(leader, 'DELETE', `${NS}/configmaps/${names[0]}`)).status).toBe(200);
    await until('the reclaim', async () => (await used(leader)).configmaps === '5');
    // Every replica at once re-creates the names that exist: each create that gets the free slot
    // is charged, then refused as AlreadyExists (409), and its charge given back; the others are
    // refused by the quota while a charge holds the slot (403).
    const taken = names.slice(1);
    const results = await Promise.all(cluster.names.flatMap((replica) => taken.map((name) => call(replica, 'POST', `${NS}/configmaps`, { metadata: { name } }))));
    expect(results.filter((r) => r.status !== 409 && r.status !== 403).map((r) => r.body)).toEqual([]);
    expect(results.filter((r) => r.status === 409).length).toBeGreaterThan(0);
    // Given back after each answer (not before it): every replica comes to see the slot free.
    for (const replica of cluster.names) await until(`the charges given back on ${replica}`, async () => (await used(replica)).configmaps === '5');
    // The slot is free again, once.
    const again = await burst('third', 'configmaps', 1);
    expect(again.other).toEqual([]);
    expect(again.created).toBe(1);
    expect(again.refused).toHaveLength(2);
    expect((await used(leader)).configmaps).toBe('6');
  }, 120_000);
});
