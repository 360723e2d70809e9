// Three store replicas over RaftReplicator in one process (local transport, memory LevelDB):
// writes through any replica, the same revisions everywhere, linearizable reads on followers,
// snapshot catch-up of a replica that was cut off past log compaction, and writes that fail
// clearly when no quorum exists.
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryLogStore } from '../../raft/storage/level-log-store.js';
import { LocalNetwork } from '../../raft/transport/local-transport.js';
import type { DurableLogStore } from '../../raft/storage/log-store.js';
import { LevelRevisionStore } from '../store/revision-store.js';
import { isStoreError, type AppliedBatch } from '../store/types.js';
import { encodeStored } from '../storedobject/stored-object.js';
import { WatchCache } from '../watchcache/watch-cache.js';
import { RaftReplicator } from './raft-replicator.js';
import { MessageType } from '../../raft/types.js';

const enc = (s: string): Uint8Array => new Uint8Array(Buffer.from(s));
const dec = (b: Uint8Array | undefined): string | undefined => (b ? Buffer.from(b).toString() : undefined);

interface Replica {
  id: number;
  store: LevelRevisionStore;
  replicator: RaftReplicator;
  log: DurableLogStore;
  batches: AppliedBatch[];
}

const running: Replica[] = [];

async function startReplica(net: LocalNetwork, id: number, ids: number[], opts: { snapshotEntries?: number; log?: DurableLogStore; join?: boolean } = {}): Promise<Replica> {
  const log = opts.log ?? createMemoryLogStore();
  const replicator = new RaftReplicator({
    leaderWaitMs: 1500,
    node: {
      id,
      peers: new Map(ids.map((i) => [i, `local://${i}`])),
      ...(opts.join ? { join: true } : {}),
      store: log,
      transport: (handler) => net.transport(id, handler),
      tickMs: 10,
      electionTicks: 10,
      snapshotEntries: opts.snapshotEntries ?? 10_000,
      catchUpEntries: 5,
      proposalTimeoutMs: 2000,
      readTimeoutMs: 1000,
    },
  });
  const store = await LevelRevisionStore.open({ storage: 'memory', replicator, sync: false });
  const batches: AppliedBatch[] = [];
  store.subscribe((b) => batches.push(b));
  await replicator.run(store);
  const r = { id, store, replicator, log, batches };
  running.push(r);
  return r;
}

async function waitFor(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const leaderOf = (rs: Replica[]): Replica | undefined => rs.find((r) => r.replicator.isLeader());

afterEach(async () => {
  for (const r of running.splice(0)) await r.store.close().catch(() => undefined);
});

describe('RaftReplicator', () => {
  it("carries the proposer's cache attributes in the log: the other replicas' caches build the same entries without parsing", async () => {
    const net = new LocalNetwork();
    const ids = [1, 2, 3];
    const rs = await Promise.all(ids.map((id) => startReplica(net, id, ids)));
    const caches = rs.map((r) => new WatchCache(r.store, { root: '/registry/', specFor: () => undefined }));
    try {
      await Promise.all(caches.map((c) => c.start()));
      await waitFor(() => leaderOf(rs) !== undefined, 'a leader');
      const at = rs.findIndex((r) => !r.replicator.isLeader());
      rs.forEach((r, i) => r.replicator.describeWith((key, obj) => caches[i]!.attributeBytes(key, obj)));
      const key = '/registry/core/configmaps/ns/one';
      const obj = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'one', namespace: 'ns', labels: { app: 'x', n: 1 } }, data: { k: 'v' } };
      await rs[at]!.store.execute({ type: 'txn', compares: [{ key, modRevision: 0 }], ops: [{ type: 'put', key, value: encodeStored(obj) }] }, new Map([[key, obj]]));
      await waitFor(() => caches.every((c) => c.resource('/registry/core/configmaps/').get(key) !== undefined), 'the entry on every replica');
      const entries = caches.map((c) => c.resource('/registry/core/configmaps/').get(key)!);
      for (const e of entries) {
        expect(Buffer.from(e.bytes).toString()).toBe(Buffer.from(entries[at]!.bytes).toString());
        expect({ namespace: e.namespace, name: e.name, labels: e.labels, fields: e.fields }).toEqual({
          namespace: 'ns',
          name: 'one',
          labels: { app: 'x', n: '1' },
          fields: { 'metadata.name': 'one', 'metadata.namespace': 'ns' },
        });
      }
      // What the others hold came from the carried bytes, not from parsing the object: carry a
      // marker label and it is what they see (the proposer uses its own decoded object).
      rs.forEach((r, i) =>
        r.replicator.describeWith((k, o) => caches[i]!.attributeBytes(k, { ...(o as object), metadata: { name: 'two', namespace: 'ns', labels: { carried: 'yes' } } })),
      );
      const key2 = '/registry/core/configmaps/ns/two';
      const obj2 = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'two', namespace: 'ns' } };
      await rs[at]!.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: key2, value: encodeStored(obj2) }] }, new Map([[key2, obj2]]));
      await waitFor(() => caches.every((c) => c.resource('/registry/core/configmaps/').get(key2) !== undefined), 'the second entry on every replica');
      caches.forEach((c, i) => expect(c.resource('/registry/core/configmaps/').get(key2)!.labels).toEqual(i === at ? {} : { carried: 'yes' }));
    } finally {
      for (const c of caches) c.stop();
    }
  });

  it('hears of leadership as an event of the node: its listeners know in the turn the node reports the change', async () => {
    const net = new LocalNetwork();
    const ids = [1, 2, 3];
    const rs = await Promise.all(ids.map((id) => startReplica(net, id, ids)));
    const mismatches: string[] = [];
    for (const r of rs) {
      let told = false;
      r.replicator.onLeadership((leads) => (told = leads));
      // Subscribed after the replicator: by the time this runs, the replicator has been told.
      r.replicator.raft.onLeaderChange(() => {
        const leads = r.replicator.raft.status().role === 'leader';
        if (leads !== told) mismatches.push(`replica ${r.id}: node says leader=${leads}, listener was told ${told}`);
      });
    }
    await waitFor(() => leaderOf(rs) !== undefined, 'a leader');
    const leader = leaderOf(rs)!;
    const next = rs.find((r) => r !== leader)!;
    await leader.replicator.raft.transferLeadership(next.id);
    await waitFor(() => leaderOf(rs) === next && !leader.replicator.isLeader(), 'the transfer');
    expect(mismatches).toEqual([]);
    expect(next.replicator.leaderChanges).toBeGreaterThanOrEqual(1);
  });

  it('applies writes from any replica at the same revision everywhere, and follower reads see them', async () => {
    const net = new LocalNetwork();
    const ids = [1, 2, 3];
    const rs = await Promise.all(ids.map((id) => startReplica(net, id, ids)));
    await waitFor(() => leaderOf(rs) !== undefined, 'a leader');
    const follower = rs.find((r) => !r.replicator.isLeader())!;
    const put = await follower.store.execute({ type: 'txn', compares: [{ key: '/a', modRevision: 0 }], ops: [{ type: 'put', key: '/a', value: enc('one') }] }, new Map([['/a', { hint: true }]]));
    expect(put.succeeded).toBe(true);
    // Read-your-writes on the replica that answered.
    expect(dec((await follower.store.get('/a'))?.value)).toBe('one');
    expect(follower.batches.at(-1)!.events[0]!.decoded).toEqual({ hint: true });
    // A second write through the leader; its compare sees the first.
    const leader = leaderOf(rs)!;
    const conflict = await leader.store.execute({ type: 'txn', compares: [{ key: '/a', modRevision: 0 }], ops: [{ type: 'put', key: '/a', value: enc('two') }] });
    expect(conflict.succeeded).toBe(false);
    const update = await leader.store.execute({ type: 'txn', compares: [{ key: '/a', modRevision: put.revision }], ops: [{ type: 'put', key: '/a', value: enc('two') }] });
    expect(update.succeeded).toBe(true);
    // Every replica: a consistent revision covers the write, and the same bytes at the same revision.
    for (const r of rs) {
      const rev = await r.store.consistentRevision();
      expect(rev).toBeGreaterThanOrEqual(update.revision);
      const kv = await r.store.get('/a');
      expect(dec(kv?.value)).toBe('two');
      expect(kv?.modRevision).toBe(update.revision);
      expect(kv?.createRevision).toBe(put.revision);
      // Hints are local to the proposer.
      if (r !== follower) expect(r.batches.some((b) => b.events.some((e) => e.decoded !== undefined))).toBe(false);
    }
  });

  it('catches a replica up by a snapshot image after the log was compacted past it', async () => {
    const net = new LocalNetwork();
    const ids = [1, 2, 3];
    const rs = await Promise.all(ids.map((id) => startReplica(net, id, ids, { snapshotEntries: 20 })));
    await waitFor(() => leaderOf(rs) !== undefined, 'a leader');
    const leader = leaderOf(rs)!;
    const lagging = rs.find((r) => r !== leader)!;
    net.isolate(lagging.id);
    for (let i = 0; i < 120; i++) {
      const r = await leader.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: `/k/${i % 7}`, value: enc(`v${i}`) }] });
      expect(r.succeeded).toBe(true);
    }
    await leader.store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: '/k/3' }] });
    const target = leader.store.currentRevision();
    net.healAll();
    await waitFor(() => lagging.store.currentRevision() === target, 'the lagging replica to catch up');
    expect(lagging.batches.some((b) => b.reset)).toBe(true);
    const a = await leader.store.range('/k/');
    const b = await lagging.store.range('/k/');
    expect(b.kvs).toEqual(a.kvs);
    expect(b.kvs.map((kv) => kv.key)).not.toContain('/k/3');
    // History came with the image: an older revision inside the window reads the same.
    const at = target - 10;
    expect((await lagging.store.range('/k/', { revision: at })).kvs).toEqual((await leader.store.range('/k/', { revision: at })).kvs);
  });

  it('refuses writes and consistent reads clearly without a quorum, and never reports an uncommitted write as done', async () => {
    const net = new LocalNetwork();
    const ids = [1, 2, 3];
    const rs = await Promise.all(ids.map((id) => startReplica(net, id, ids)));
    await waitFor(() => leaderOf(rs) !== undefined, 'a leader');
    const alone = rs.find((r) => !r.replicator.isLeader())!;
    net.isolate(alone.id);
    const write = alone.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/x', value: enc('1') }] });
    await expect(write).rejects.toSatisfy((e: unknown) => isStoreError(e, 'STORE_NOT_PROPOSED') || isStoreError(e, 'STORE_OUTCOME_UNKNOWN'));
    await expect(alone.store.consistentRevision()).rejects.toSatisfy((e: unknown) => isStoreError(e, 'STORE_READ_UNAVAILABLE'));
    expect(alone.replicator.readsFailed).toBe(1);
    // The majority side still works, and the isolated replica's refused write is nowhere.
    const others = rs.filter((r) => r !== alone);
    await waitFor(() => leaderOf(others) !== undefined, 'a leader on the majority side');
    const ok = await leaderOf(others)!.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/y', value: enc('2') }] });
    expect(ok.succeeded).toBe(true);
    net.healAll();
    await waitFor(() => alone.store.currentRevision() >= ok.revision, 'the isolated replica to catch up');
    for (const r of rs) {
      const x = await r.store.get('/x');
      // Either the write never committed anywhere or (outcome unknown) it did everywhere alike.
      expect(dec(x?.value)).toBe(dec((await rs[0]!.store.get('/x'))?.value));
    }
  });

  it('proposes a write again when a forwarded attempt was lost on the way, and counts it', async () => {
    const net = new LocalNetwork();
    const ids = [1, 2, 3];
    const rs = await Promise.all(ids.map((id) => startReplica(net, id, ids)));
    await waitFor(() => leaderOf(rs) !== undefined && rs.every((r) => r.replicator.raft.leader() === leaderOf(rs)!.id), 'a leader known to all');
    const follower = rs.find((r) => !r.replicator.isLeader())!;
    // The follower's first forwarded proposal is held back, as a stalled connection would; its
    // next one is appended, so the first is certainly not made and is proposed again.
    let first = true;
    net.hold((m) => {
      if (m.from !== follower.id || m.type !== MessageType.Prop || !first) return false;
      first = false;
      return true;
    });
    const put = (key: string, v: string) => follower.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key, value: enc(v) }] });
    const held = put('/held', 'a');
    await waitFor(() => !first, 'the first proposal to be held');
    const later = await put('/later', 'b');
    const retried = await held;
    expect(later.succeeded && retried.succeeded).toBe(true);
    expect(retried.revision).toBeGreaterThan(later.revision);
    expect(follower.replicator.proposalsRetried).toBe(1);
    net.release();
  });
});
