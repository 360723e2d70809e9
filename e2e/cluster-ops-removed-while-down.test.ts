// A replica removed (`clusterd members remove`, DELETE /cluster/v1/members/NAME) while it was
// stopped, then started again with its old data directory and command line (issue 13 §1): it
// never applied its removal, so its own membership still lists it. Its peers refuse it as a
// removed member with the index of its removal (etcd's rafthttp answers 410 "removed member"),
// and it says so once in its log with what to do, lists no members (503), is not ready, and
// stops campaigning: it sends no Raft message, and the term on the others does not move while
// it runs. Before, it ran pre-vote rounds for ever with peers that never answered it, listed
// the members it last knew with itself as candidate (200), and its log said nothing of why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess, sleep } from './support/cluster-process.js';

const WARNING = 'raft membership: this replica was removed from the cluster while it was stopped or cut off; its peers refuse it';

describe('a replica removed while it was stopped, started again on its old data', () => {
  let cluster: ClusterProcess;
  const started = Date.now();
  const log = (l: string): void => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${l}`);
  beforeAll(async () => {
    cluster = await ClusterProcess.started({ log });
  }, 180_000);
  afterAll(async () => {
    await cluster?.destroy();
  });

  const gauge = async (name: string, metric: string): Promise<number> => {
    const text = (await cluster.http.request(cluster.url(name), 'GET', '/metrics')).body;
    return Number(new RegExp(`^${metric} (\\S+)$`, 'm').exec(text)?.[1]);
  };

  it('is told by its peers, says so once, lists no members, is not ready and moves no term', async () => {
    const leader = await cluster.waitForLeader();
    const removed = cluster.names.find((n) => n !== leader)!;
    const remaining = cluster.names.filter((n) => n !== removed);
    const write = async (via: string, name: string) =>
      (await cluster.http.json(cluster.url(via), 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { via } }, 30_000)).status;
    expect(await write(leader, 'before')).toBeLessThan(300);

    expect(await cluster.stop(removed)).toBe(0);
    const r = await cluster.remove(removed, leader);
    expect(r.status, r.body).toBe(200);
    log(`removed ${removed} through ${leader} while it was stopped`);
    expect(await write(leader, 'after')).toBeLessThan(300);
    const terms = await Promise.all(remaining.map((n) => gauge(n, 'clusterd_raft_term')));

    await cluster.start(removed);
    log(`started ${removed} again on its old data`);
    for (let waited = 0; !cluster.logs(removed).includes(WARNING) && waited < 30_000; waited += 250) await sleep(250);
    const line = cluster.logs(removed).split('\n').find((l) => l.includes(WARNING));
    expect(line, cluster.logs(removed).split('\n').slice(-30).join('\n')).toBeDefined();
    log(line!);
    expect(line).toMatch(new RegExp(`"peer":"(${remaining.join('|')})"`));
    expect(line).toMatch(/"removedAtIndex":\d+/);
    expect(line).toContain('--join and a new token');

    const own = await cluster.http.request(cluster.url(removed), 'GET', '/cluster/v1/members');
    expect(own.status, own.body).toBe(503);
    expect((JSON.parse(own.body) as { message: string }).message).toContain(`replica "${removed}" is not a member of the cluster`);
    const ready = await cluster.http.request(cluster.url(removed), 'GET', '/readyz?verbose');
    expect(ready.status, ready.body).toBe(500);
    expect(ready.body).toContain('[-]raft failed');
    expect(await gauge(removed, 'clusterd_raft_has_leader')).toBe(0);
    expect((await cluster.http.request(cluster.url(removed), 'GET', '/livez')).status).toBe(200);

    // Five election timeouts with it running: it sent no Raft message (it campaigned every
    // election timeout before: 6 pre-votes in 5 s), nothing moved the others' term nor its own
    // (pre-votes already kept them), and it said it once.
    const ownTerm = await gauge(removed, 'clusterd_raft_term');
    const sent = await gauge(removed, 'clusterd_raft_messages_sent_total');
    await sleep(5_000);
    expect(await gauge(removed, 'clusterd_raft_messages_sent_total')).toBe(sent);
    expect(await Promise.all(remaining.map((n) => gauge(n, 'clusterd_raft_term')))).toEqual(terms);
    expect(await gauge(removed, 'clusterd_raft_term')).toBe(ownTerm);
    expect(cluster.logs(removed).split('\n').filter((l) => l.includes(WARNING))).toHaveLength(1);
    for (const name of remaining) {
      expect((await cluster.http.request(cluster.url(name), 'GET', '/readyz')).status, name).toBe(200);
      const list = JSON.parse((await cluster.http.request(cluster.url(name), 'GET', '/cluster/v1/members')).body) as { members: { name: string }[] };
      expect(list.members.map((m) => m.name).sort(), name).toEqual(remaining.slice().sort());
    }
    expect(await write(remaining.find((n) => n !== leader)!, 'still')).toBeLessThan(300);
    expect(cluster.isRunning(removed)).toBe(true);
    expect(cluster.unexpectedExits).toEqual([]);
  }, 240_000);
});
