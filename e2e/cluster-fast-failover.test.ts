// A leader whose process is gone is replaced without waiting out the election timeout, with
// real processes: its peers find its peer address refusing connections, forget it and elect
// one of themselves at once (raft-node peerDown). The election timeout here is 4 s, so a new
// leader well inside it can only come from that path. The harness's peer proxy answers for a
// dead replica with a reset rather than a refusal, which counts the same. A leader that
// is alive but frozen (SIGSTOP: its sockets stay open, nothing is refused) keeps leadership,
// and one stopped with SIGTERM hands leadership over first, as etcd does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess, sleep } from './support/cluster-process.js';

const ELECTION_MS = 4000;

describe('a leader whose process is gone', () => {
  let cluster: ClusterProcess;
  beforeAll(async () => {
    cluster = await ClusterProcess.started({ electionTimeout: `${ELECTION_MS}ms` });
  }, 120_000);
  afterAll(async () => {
    await cluster?.destroy();
  });

  /** Creates a ConfigMap through `via`: true once acknowledged (the client reports 200 or 201). */
  const create = async (via: string, name: string): Promise<boolean> => {
    const { status } = await cluster.http.request(cluster.url(via), 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }, 30_000);
    return status === 200 || status === 201;
  };

  it('a frozen leader that refuses nothing keeps its leadership and its term', async () => {
    const leader = await cluster.waitForLeader(60_000);
    const term = (await cluster.members(leader, true)).find((m) => m.name === leader)!.term;
    cluster.pause(leader);
    await sleep(ELECTION_MS / 2);
    cluster.resume(leader);
    const follower = cluster.names.find((n) => n !== leader)!;
    expect(await create(follower, 'after-pause')).toBe(true);
    const self = (await cluster.members(leader, true)).find((m) => m.name === leader)!;
    expect({ role: self.role, term: self.term }).toEqual({ role: 'leader', term });
  });

  it('a leader stopped with SIGTERM hands leadership over before it goes', async () => {
    const leader = await cluster.waitForLeader(60_000);
    const survivors = cluster.names.filter((n) => n !== leader);
    expect(await cluster.stop(leader)).toBe(0);
    expect(cluster.logs(leader)).toContain('handed leadership over before stopping');
    const next = await cluster.waitForLeader(10_000, leader);
    expect(survivors).toContain(next);
    expect(await create(next, 'after-sigterm')).toBe(true);
    await cluster.start(leader);
    await cluster.waitReady(leader);
  });

  it('is replaced well inside one election timeout of its kill -9, and writes go on', async () => {
    const leader = await cluster.waitForLeader(60_000);
    const survivors = cluster.names.filter((n) => n !== leader);
    expect(await create(survivors[0]!, 'before-kill')).toBe(true);
    const killedAt = Date.now();
    await cluster.kill(leader);
    const next = await cluster.waitForLeader(30_000, leader);
    const elapsed = Date.now() - killedAt;
    expect(survivors).toContain(next);
    // The followers' election timers alone would not fire before ELECTION_MS after the last
    // heartbeat (a heartbeat interval at most before the kill); the early campaign comes a
    // heartbeat interval after the refusal. Half the timeout leaves room for a loaded machine.
    expect(elapsed).toBeLessThan(ELECTION_MS / 2);
    // (A write forwarded to the old leader just before the kill may still be answered later,
    // 504 after two election timeouts: it may commit. New writes go through at once.)
    // The survivors that saw the refusal say so in their metrics.
    const reports = await Promise.all(survivors.map(async (n) => {
      const text = (await cluster.http.request(cluster.url(n), 'GET', '/metrics')).body;
      return Number(/^clusterd_raft_leader_down_reports_total (\S+)$/m.exec(text)?.[1] ?? NaN);
    }));
    expect(reports.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect(await create(survivors[0]!, 'after-kill-0')).toBe(true);
    expect(await create(survivors[1]!, 'after-kill-1')).toBe(true);
  });
});
