// A whole cluster stopped at once (make cluster's Ctrl-C, `docker-compose down`: SIGTERM to every
// replica together). A leader stopping hands leadership to a voter first, as etcd does, so that
// the others keep a leader; but a voter that is stopping too would take it only to drop it, and
// the transfer would fail after two election timeouts, with the leader-only controllers failing
// meanwhile. The leader asks each candidate's /readyz/shutdown first and hands over to none that
// is stopping. A rolling restart (one replica at a time) still hands over (cluster-rolling).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess } from './support/cluster-process.js';

describe('a whole cluster stopped at once', () => {
  let cluster: ClusterProcess;
  beforeAll(async () => {
    cluster = await ClusterProcess.started();
  }, 180_000);
  afterAll(async () => {
    await cluster?.destroy();
  });

  it('its leader hands leadership to none of the stopping voters, and every replica exits cleanly', async () => {
    const leader = await cluster.waitForLeader();
    // The leader finds its candidates' API addresses in the member records they publish.
    await cluster.publishedMembers(leader);
    const codes = await Promise.all(cluster.names.map((n) => cluster.stop(n)));
    expect(codes).toEqual(cluster.names.map(() => 0));
    const logs = cluster.logs(leader);
    expect(logs).not.toContain('handed leadership over before stopping');
    expect(logs).not.toContain('could not hand leadership over before stopping');
    for (const n of cluster.names) expect(cluster.logs(n), n).not.toContain('reconcile failed');
  }, 120_000);
});
