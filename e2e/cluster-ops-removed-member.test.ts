// A replica removed from the cluster (`clusterd members remove`, DELETE /cluster/v1/members/NAME)
// while it keeps running, as etcd's operators know it from a removed member: it remembers the
// leader it last heard, but that leader no longer answers it, so it must not call itself ready
// nor claim a leader (readyz `raft`, clusterd_raft_has_leader); /livez, which does not depend on
// the leader, stays ok; the remaining replicas stay ready and keep the member list without it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess, sleep } from './support/cluster-process.js';

describe('a removed replica that keeps running', () => {
  let cluster: ClusterProcess;
  beforeAll(async () => {
    cluster = await ClusterProcess.started();
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  const gauge = async (name: string, metric: string): Promise<number> => {
    const text = (await cluster.http.request(cluster.url(name), 'GET', '/metrics')).body;
    return Number(new RegExp(`^${metric} (\\S+)$`, 'm').exec(text)?.[1]);
  };

  it('fails its raft readyz check and reports no leader; its livez and the others stay ok', async () => {
    const leader = await cluster.waitForLeader();
    const removed = cluster.names.find((n) => n !== leader)!;
    const r = await cluster.remove(removed, leader);
    expect(r.status, r.body).toBe(200);
    const remaining = cluster.names.filter((n) => n !== removed);

    let ready = await cluster.http.request(cluster.url(removed), 'GET', '/readyz?verbose');
    for (let waited = 0; ready.status === 200 && waited < 30_000; waited += 250) {
      await sleep(250);
      ready = await cluster.http.request(cluster.url(removed), 'GET', '/readyz?verbose');
    }
    expect(ready.status, ready.body).toBe(500);
    expect(ready.body).toContain('[-]raft failed');
    expect(await gauge(removed, 'clusterd_raft_has_leader')).toBe(0);
    expect((await cluster.http.request(cluster.url(removed), 'GET', '/livez')).status).toBe(200);
    expect((await cluster.http.request(cluster.url(removed), 'GET', '/readyz?exclude=raft')).status).toBe(200);

    for (const name of remaining) {
      expect((await cluster.http.request(cluster.url(name), 'GET', '/readyz')).status, name).toBe(200);
      expect(await gauge(name, 'clusterd_raft_has_leader'), name).toBe(1);
      const list = JSON.parse((await cluster.http.request(cluster.url(name), 'GET', '/cluster/v1/members')).body) as { members: { name: string }[] };
      expect(list.members.map((m) => m.name).sort(), name).toEqual(remaining.slice().sort());
    }
    await cluster.forget(removed);
    expect(cluster.unexpectedExits).toEqual([]);
  });
});
