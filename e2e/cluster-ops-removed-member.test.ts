// A replica removed from the cluster (`clusterd members remove`, DELETE /cluster/v1/members/NAME)
// while it keeps running, as etcd's operators know it from a removed member: it remembers the
// leader it last heard, but that leader no longer answers it, so it must not call itself ready
// nor claim a leader (readyz `raft`, clusterd_raft_has_leader); /livez, which does not depend on
// the leader, stays ok; the remaining replicas stay ready and keep the member list without it.
// Asked for the member list, it says it is no member (503) instead of listing the members it
// last knew with a leader that no longer answers it, and its log says it was removed (see below
// for the two ways it learns it).
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

  it('fails its raft readyz check, reports no leader and lists no members; its livez and the others stay ok', async () => {
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
    // Whether it applies its own removal is a race: the leader stops replicating to it once the
    // removal is applied, so it may never hear that the entry committed. If it applied it, it
    // says it is no member, in the member list and its log (two election timeouts later). If
    // not, its peers close its pipes to them as they apply the removal, and refuse it as a
    // removed member when it reconnects: it says so at once, in the member list and its log
    // (its own view still lists it: it applied no removal). Never the members it last knew with
    // the leader that dropped it.
    let own = await cluster.http.request(cluster.url(removed), 'GET', '/cluster/v1/members');
    for (let waited = 0; own.status !== 503 && waited < 30_000; waited += 250) {
      await sleep(250);
      own = await cluster.http.request(cluster.url(removed), 'GET', '/cluster/v1/members');
    }
    expect(JSON.parse(own.body)).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', message: expect.stringContaining(`replica "${removed}" is not a member of the cluster`) });
    const applied = 'raft membership: this replica is no longer a member of the cluster';
    const refused = 'raft membership: this replica was removed from the cluster while it was stopped or cut off; its peers refuse it';
    for (let waited = 0; !cluster.logs(removed).includes(applied) && !cluster.logs(removed).includes(refused) && waited < 30_000; waited += 250) await sleep(250);
    const self = (await cluster.members(removed, true).catch(() => [])).find((m) => m.name === removed);
    if (cluster.logs(removed).includes(refused)) {
      expect(cluster.logs(removed)).not.toContain(applied);
      expect(self, 'its own view still lists it').toBeDefined();
    } else {
      expect(cluster.logs(removed)).toContain(applied);
      expect(self, 'its own view no longer lists it').toBeUndefined();
    }

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
