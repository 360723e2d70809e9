// RaftLivenessMonitor with a hand-moved clock and a recording logger: which gaps it reports,
// which it keeps quiet about, and the per-scrape maxima it exposes.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { MessageType, type Message } from '../../raft/types.js';
import type { DurableLogStore } from '../../raft/storage/log-store.js';
import type { Transport, TransportHandler } from '../../raft/transport/transport.js';
import { silentLogger, type Logger } from '../log/logger.js';
import { RaftLivenessMonitor } from './raft-liveness.js';

const msg = (type: MessageType, from: number, to: number): Message => ({
  type, from, to, term: 2, logTerm: 0, index: 0, entries: [], commit: 0, reject: false, rejectHint: 0, context: new Uint8Array(),
});

function setup(leader: number) {
  let now = 0;
  const warnings: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
  const log: Logger = { ...silentLogger, warn: (m, f) => warnings.push({ msg: m, fields: f }) };
  const monitor = new RaftLivenessMonitor({
    log,
    id: 1,
    heartbeatIntervalMs: 100,
    electionTimeoutMs: 1000,
    status: () => ({ role: leader === 1 ? 'leader' : 'follower', leader, term: 2 }),
    leader: () => leader,
    now: () => now,
  });
  const delivered: Message[] = [];
  const down: number[] = [];
  const handler = monitor.handler({ process: (m) => delivered.push(m), reportUnreachable: () => {}, reportSnapshot: () => {}, reportPeerDown: (id) => void down.push(id) } satisfies TransportHandler);
  const sent: Message[] = [];
  const inner: Transport = {
    start: async () => {},
    send: (ms) => sent.push(...ms),
    addPeer: () => {},
    removePeer: () => {},
    updatePeer: () => {},
    stop: async () => {},
  };
  const transport = monitor.transport(inner);
  return { monitor, handler, transport, warnings, delivered, sent, down, advance: (ms: number) => (now += ms) };
}

describe('RaftLivenessMonitor', () => {
  it('a leader: warns of a heartbeat sent more than three intervals after the last to that peer, passes every message on', () => {
    const t = setup(1);
    t.transport.send([msg(MessageType.Heartbeat, 1, 2), msg(MessageType.Heartbeat, 1, 3)]);
    t.advance(250);
    t.transport.send([msg(MessageType.Heartbeat, 1, 2), msg(MessageType.App, 1, 3)]);
    expect(t.warnings).toEqual([]);
    t.advance(450);
    t.transport.send([msg(MessageType.Heartbeat, 1, 2), msg(MessageType.Heartbeat, 1, 3)]);
    expect(t.warnings.map((w) => [w.msg, w.fields?.to, w.fields?.gapMs])).toEqual([
      ['raft liveness: leader sent a heartbeat late', 2, 450],
      ['raft liveness: leader sent a heartbeat late', 3, 700],
    ]);
    expect(t.sent).toHaveLength(6);
  });

  it('passes the transport\'s reports on, a peer found down included (the fast election needs it)', () => {
    const t = setup(2);
    t.handler.reportPeerDown(2);
    expect(t.down).toEqual([2]);
  });

  it('a follower: warns when nothing came from its leader for half an election timeout, not of other peers', () => {
    const t = setup(2);
    t.handler.process(msg(MessageType.Heartbeat, 2, 1));
    t.handler.process(msg(MessageType.PreVote, 3, 1));
    t.advance(400);
    t.handler.process(msg(MessageType.Heartbeat, 2, 1));
    t.advance(900);
    t.handler.process(msg(MessageType.PreVote, 3, 1)); // not the leader: no warning
    expect(t.warnings).toEqual([]);
    t.handler.process(msg(MessageType.App, 2, 1));
    expect(t.warnings.map((w) => [w.msg, w.fields?.gapMs, w.fields?.then])).toEqual([['raft liveness: nothing heard from the leader', 900, 'App']]);
    expect(t.delivered).toHaveLength(5);
  });

  it('times log writes, warns of slow ones, and reports each maximum once per scrape', async () => {
    const t = setup(1);
    let advanceBy = 0;
    const store = t.monitor.store({
      save: async () => {
        t.advance(advanceBy);
      },
    } as unknown as DurableLogStore);
    advanceBy = 40;
    await store.save({ entries: [] });
    advanceBy = 250;
    await store.save({ entries: [], sync: false });
    expect(t.warnings.map((w) => [w.msg, w.fields?.ms, w.fields?.sync])).toEqual([['raft liveness: slow log write', 250, false]]);
    const registry = new Registry();
    t.monitor.registerMetrics(registry);
    const value = async () => (await registry.getSingleMetric('clusterd_raft_log_write_seconds_max')!.get()).values[0]!.value;
    expect(await value()).toBe(0.25);
    expect(await value()).toBe(0); // reset by the scrape
  });

  // etcd operators alert on histogram_quantile(0.99, etcd_disk_wal_fsync_duration_seconds_bucket):
  // the same figure, with etcd's buckets, for the synced log writes only.
  it('observes every synced log write in a histogram with etcd\'s WAL fsync buckets', async () => {
    const t = setup(1);
    let advanceBy = 0;
    const store = t.monitor.store({ save: async () => void t.advance(advanceBy) } as unknown as DurableLogStore);
    for (const [ms, sync] of [[3, undefined], [40, true], [250, false], [0.5, true]] as const) {
      advanceBy = ms;
      await store.save({ entries: [], ...(sync === undefined ? {} : { sync }) });
    }
    const registry = new Registry();
    t.monitor.registerMetrics(registry);
    const text = await registry.getSingleMetricAsString('clusterd_raft_wal_fsync_duration_seconds');
    const sample = (suffix: string, le?: string) =>
      Number(new RegExp(`^clusterd_raft_wal_fsync_duration_seconds_${suffix}${le === undefined ? '' : `\\{le="${le.replace(/[+.]/g, '\\$&')}"\\}`} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(text).toContain('# TYPE clusterd_raft_wal_fsync_duration_seconds histogram');
    expect(sample('count')).toBe(3);
    expect(sample('sum')).toBeCloseTo(0.0435, 6);
    expect(['0.001', '0.004', '0.064', '8.192', '+Inf'].map((le) => sample('bucket', le))).toEqual([1, 2, 3, 3, 3]);
    expect([...text.matchAll(/_bucket\{le="([^"]+)"\}/g)].map((m) => m[1])).toEqual(
      ['0.001', '0.002', '0.004', '0.008', '0.016', '0.032', '0.064', '0.128', '0.256', '0.512', '1.024', '2.048', '4.096', '8.192', '+Inf'],
    );
  });

  it('hands back the store\'s own promise: observing a write adds no hop before the caller resumes', async () => {
    const t = setup(1);
    const pending: Promise<void>[] = [];
    const failing = new Error('disk full');
    let fail = false;
    const store = t.monitor.store({
      save: () => {
        const p = fail ? Promise.reject(failing) : Promise.resolve();
        pending.push(p);
        return p;
      },
    } as unknown as DurableLogStore);
    const saved = store.save({ entries: [] });
    expect(saved).toBe(pending[0]);
    await saved;
    fail = true;
    const failed = store.save({ entries: [] });
    expect(failed).toBe(pending[1]);
    await expect(failed).rejects.toBe(failing);
    expect(t.warnings).toEqual([]);
  });

  it('says once that this replica left the membership, after two election timeouts out of it; not a joiner that was never in', () => {
    let now = 0;
    let status: { role: string; leader: number; term: number; isMember: boolean } = { role: 'follower', leader: 2, term: 2, isMember: false };
    const warnings: string[] = [];
    const monitor = new RaftLivenessMonitor({
      log: { ...silentLogger, warn: (m) => warnings.push(m) },
      id: 1,
      heartbeatIntervalMs: 100,
      electionTimeoutMs: 1000,
      status: () => status,
      leader: () => status.leader,
      now: () => now,
    });
    const removal = 'raft membership: this replica is no longer a member of the cluster';
    const poll = (ms: number) => {
      now += ms;
      monitor.pollStatus();
    };
    // A joiner before its admission is applied: never a member yet, nothing to say.
    for (let k = 0; k < 50; k++) poll(100);
    expect(warnings).toEqual([]);
    status = { ...status, isMember: true };
    poll(100);
    // Out for a moment (a snapshot older than its admission), then in again: quiet.
    status = { ...status, isMember: false };
    poll(100);
    poll(1500);
    status = { ...status, isMember: true };
    poll(100);
    expect(warnings).toEqual([]);
    // Removed: said after two election timeouts, once.
    status = { ...status, isMember: false };
    poll(100);
    poll(1999);
    expect(warnings).toEqual([]);
    poll(1);
    expect(warnings).toEqual([removal]);
    for (let k = 0; k < 100; k++) poll(100);
    expect(warnings).toEqual([removal]);
  });

  it('says at once, and once, that a peer refused this replica as removed, naming the peer and the index; not the membership line after it', () => {
    let now = 0;
    let status: { role: string; leader: number; term: number; isMember: boolean; removed?: { by: number; at: number } } = { role: 'pre-candidate', leader: 0, term: 2, isMember: true };
    const warnings: { msg: string; fields: unknown }[] = [];
    const monitor = new RaftLivenessMonitor({
      log: { ...silentLogger, warn: (msg, fields) => warnings.push({ msg, fields }) },
      id: 3,
      heartbeatIntervalMs: 100,
      electionTimeoutMs: 1000,
      status: () => status,
      leader: () => status.leader,
      peerName: (id) => (id === 1 ? 'a' : undefined),
      now: () => now,
    });
    const poll = (ms: number) => {
      now += ms;
      monitor.pollStatus();
    };
    poll(100);
    expect(warnings).toEqual([]);
    status = { ...status, isMember: false, removed: { by: 1, at: 42 } };
    poll(100);
    expect(warnings).toEqual([
      {
        msg: 'raft membership: this replica was removed from the cluster while it was stopped or cut off; its peers refuse it',
        fields: expect.objectContaining({ peer: 'a', peerId: 1, removedAtIndex: 42, action: expect.stringContaining('--join and a new token') }),
      },
    ]);
    for (let k = 0; k < 100; k++) poll(100);
    expect(warnings).toHaveLength(1);
  });
});
