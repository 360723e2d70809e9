// The membership operations an etcd or k3s operator strings together, on real processes (issue 13
// §1, found untested by the acceptance run): removing the current leader through a follower
// (the others elect one among themselves and go on writing; the removed process says it is no
// member), giving that name back to a fresh replica that joins with a new token (its member id
// derives from the name, so the id of a removed member is reused), and restarting that joined
// replica with its command line after its token was revoked: the token is checked at the join
// only, so it rejoins with its data.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess, sleep, type MemberStatus } from './support/cluster-process.js';

interface Item {
  metadata: { name: string; resourceVersion: string; uid: string };
}

describe('remove the leader, give its name to a new replica, restart that one', () => {
  let cluster: ClusterProcess;
  const started = Date.now();
  const log = (l: string): void => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${l}`);
  beforeAll(async () => {
    cluster = await ClusterProcess.started({ log });
  }, 180_000);
  afterAll(async () => {
    await cluster?.destroy();
  });

  const write = async (via: string, name: string): Promise<{ status: number; body: Item }> =>
    cluster.http.json<Item>(cluster.url(via), 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { via } }, 30_000);
  const read = async (via: string, name: string): Promise<string> => {
    const r = await cluster.http.request(cluster.url(via), 'GET', `/api/v1/namespaces/default/configmaps/${name}`);
    expect(r.status, `${name} via ${via}: ${r.body}`).toBe(200);
    return r.body;
  };
  /** The member list through `via` once `check` holds (the list follows the applied membership). */
  const membersWhen = async (via: string, check: (ms: MemberStatus[]) => boolean, what: string): Promise<MemberStatus[]> => {
    let ms: MemberStatus[] = [];
    for (let waited = 0; waited <= 60_000; waited += 250) {
      ms = await cluster.members(via).catch(() => []);
      if (check(ms)) return ms;
      await sleep(250);
    }
    throw new Error(`${what}: the member list through ${via} is ${JSON.stringify(ms)}`);
  };

  it('removes the leader through a follower (a new leader takes the writes), rejoins its name with a fresh replica and restarts that one after its token was revoked', async () => {
    const old = await cluster.waitForLeader();
    const [via, other] = cluster.names.filter((n) => n !== old) as [string, string];
    expect((await write(old, 'before-removal')).status).toBe(200);

    const r = await cluster.remove(old, via);
    expect(r.status, r.body).toBe(200);
    log(`removed the leader ${old} through ${via}`);
    const leader = await cluster.waitForLeader(30_000, old);
    expect([via, other]).toContain(leader);
    const ms = await membersWhen(via, (m) => m.length === 2, 'the removed leader should leave the list');
    expect(ms.map((m) => m.name).sort()).toEqual([via, other].sort());
    expect(ms.filter((m) => m.role === 'leader').map((m) => m.name)).toEqual([leader]);

    for (const w of [via, other]) expect((await write(w, `after-removal-${w}`)).status, `write through ${w}`).toBe(200);
    expect(await read(other, `after-removal-${via}`)).toBe(await read(via, `after-removal-${via}`));

    // The removed process still runs: it claims no leader and lists no members.
    const own = await cluster.http.request(cluster.url(old), 'GET', '/cluster/v1/members');
    expect(own.status, own.body).toBe(503);
    expect((JSON.parse(own.body) as { message: string }).message).toContain(`replica "${old}" is not a member of the cluster`);

    // Its name goes to a fresh replica (empty data directory) that joins with a new token.
    const oldDir = cluster.dataDir(old);
    await cluster.forget(old);
    rmSync(oldDir, { recursive: true, force: true });
    const created = await cluster.http.json<{ token: string; id: string }>(cluster.url(via), 'POST', '/cluster/v1/tokens', { ttlSeconds: 3600, description: 'rejoin' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await cluster.join(old, other, created.body.token);
    log(`${old} joined again through ${other}`);
    await membersWhen(
      leader,
      (m) => m.length === 3 && m.some((x) => x.name === old && x.role === 'follower' && x.reachable === true && x.lag === 0),
      `${old} should be a caught-up voter again`,
    );
    await cluster.waitReady(old);
    expect(cluster.logs(old)).not.toContain('raft membership: this replica is no longer a member');
    // It holds what was written before its name was removed and while it was gone, byte for byte.
    for (const name of ['before-removal', `after-removal-${via}`, `after-removal-${other}`]) expect(await read(old, name), name).toBe(await read(leader, name));
    expect((await write(old, 'through-the-new-one')).status).toBe(200);
    expect(await read(via, 'through-the-new-one')).toBe(await read(old, 'through-the-new-one'));

    // The token is checked at the join only: revoked, the same command line still restarts it.
    const revoked = await cluster.http.request(cluster.url(via), 'DELETE', `/cluster/v1/tokens/${created.body.id}`);
    expect(revoked.status, revoked.body).toBe(200);
    await cluster.restart(old, 'term');
    await cluster.waitReady(old);
    const after = await membersWhen(leader, (m) => m.some((x) => x.name === old && x.reachable === true && x.role !== 'learner'), `${old} should be back`);
    expect(after.map((m) => m.name).sort()).toEqual(cluster.names.slice().sort());
    expect((await write(old, 'after-restart')).status).toBe(200);

    // Nor does a restart need the flag: the data directory has joined.
    const joined = cluster.replica(old);
    joined.args = joined.args.filter((a) => !a.startsWith('--token='));
    await cluster.restart(old, 'term');
    await cluster.waitReady(old);
    expect((await write(old, 'after-restart-without-token')).status).toBe(200);
    expect(cluster.unexpectedExits).toEqual([]);
  }, 300_000);
});
