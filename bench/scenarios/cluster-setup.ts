// bench/scenarios/cluster-setup owns what the multi-replica scenarios share: the run's cluster
// PKI (replicas a, b and c on 127.0.0.1, made once under the scratch directory), a fresh
// three-replica clusterd and, when etcd is installed, a fresh three-member etcd with the same
// certificates for one scenario (stopped when it ends, tracked so an interrupted run stops
// them too), an admin client for one replica, and splitting a number of requests in flight
// over the replicas. Imports: context, internal/testserver (the test HTTPS client),
// targets/clusterd-cluster, targets/etcd-process.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../../internal/testserver/api-client.js';
import { CREATED, type BenchContext } from '../context.js';
import { ClusterdCluster, makeClusterPki } from '../targets/clusterd-cluster.js';
import { EtcdCluster, etcdVersion } from '../targets/etcd-process.js';

export const REPLICAS = ['a', 'b', 'c'] as const;

/** The run's PKI for replicas a, b and c (made on first use). */
export async function clusterPki(ctx: BenchContext): Promise<string> {
  const dir = join(ctx.scratchDir, 'cluster-pki');
  await makeClusterPki(dir, REPLICAS);
  return dir;
}

let clusterSerial = 0;

/**
 * Runs `fn` with a fresh three-replica clusterd (default heartbeat and election timeout) and,
 * when `etcd` is asked for and installed, a fresh three-member etcd; both are stopped after.
 */
export async function withClusters<T>(ctx: BenchContext, label: string, o: { etcd: boolean }, fn: (clusterd: ClusterdCluster, etcd: EtcdCluster | undefined) => Promise<T>): Promise<T> {
  const pki = await clusterPki(ctx);
  const dir = join(ctx.scratchDir, `${label}-${++clusterSerial}`);
  mkdirSync(dir, { recursive: true });
  ctx.progress.step(`${label}: starting three clusterd replicas (Raft, fsync on, 100 ms heartbeat, 1 s election timeout)`);
  const clusterd = await ClusterdCluster.start(join(dir, 'clusterd'), pki, REPLICAS);
  const untrackClusterd = ctx.track(() => clusterd.stop());
  let etcd: EtcdCluster | undefined;
  let untrackEtcd: () => void = () => undefined;
  try {
    ctx.progress.step(`${label}: clusterd leader is ${await clusterd.leader()} (pids ${clusterd.running().map((n) => `${n} ${clusterd.pid(n)}`).join(', ')})`);
    if (o.etcd && etcdVersion()) {
      ctx.progress.step(`${label}: starting three etcd members (peer mutual TLS, fsync on, same certificates)`);
      etcd = await EtcdCluster.start(join(dir, 'etcd'), pki, REPLICAS, { ca: clusterd.tls.ca, clientCert: clusterd.tls.cert!, clientKey: clusterd.tls.key! });
      const started = etcd;
      untrackEtcd = ctx.track(() => started.stop());
      ctx.progress.step(`${label}: etcd leader is ${await etcd.leader()}`);
    } else if (o.etcd) {
      ctx.progress.step(`${label}: etcd is not installed (apt-get install etcd-server): etcd baselines are n/a`);
    }
    return await fn(clusterd, etcd);
  } finally {
    ctx.progress.step(`${label}: stopping the clusters`);
    await etcd?.stop().catch(() => undefined);
    untrackEtcd();
    await clusterd.stop().catch(() => undefined);
    untrackClusterd();
  }
}

/** A client for one replica with the admin's certificate. */
export function adminClient(cluster: ClusterdCluster, name: string): ApiClient {
  return new ApiClient(cluster.url(name), { caPem: cluster.tls.ca, certPem: cluster.tls.cert, keyPem: cluster.tls.key });
}

export async function ensureNamespace(client: ApiClient, name: string): Promise<void> {
  const r = await client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  if (!CREATED.includes(r.status) && r.status !== 409) throw new Error(`creating namespace ${name}: ${r.status} ${r.text()}`);
}

/** Raft counters of every running replica, to describe a phase afterwards (raftNote). */
export async function raftSnapshot(cluster: ClusterdCluster): Promise<Map<string, Record<string, number>>> {
  const out = new Map<string, Record<string, number>>();
  for (const name of cluster.running()) {
    const c = await cluster.raftCounters(name);
    if (c) out.set(name, c);
  }
  return out;
}

/**
 * What each replica's Raft log did between two snapshots: entries committed, synced log writes
 * (entries per fsync, mean time per fsync), CPU seconds and CPU per entry (the figure a change
 * of the write path moves, whatever else the loaded machine runs). Counts include warm-ups.
 */
export async function raftNote(cluster: ClusterdCluster, before: Map<string, Record<string, number>>, leader: string): Promise<string> {
  const after = await raftSnapshot(cluster);
  const parts: string[] = [];
  for (const [name, a] of after) {
    const b = before.get(name);
    if (!b) continue;
    const d = (k: string) => (a[k] ?? 0) - (b[k] ?? 0);
    const fsyncs = d('wal_fsyncs_total');
    const committed = d('proposals_committed_total');
    const per = (x: number) => (fsyncs > 0 ? (x / fsyncs).toFixed(1) : 'n/a');
    const batches = d('apply_batches_total');
    const applied = d('proposals_applied_total');
    const applies = batches > 0 ? `, ${batches} apply batches (${(applied / batches).toFixed(1)} entries each)` : '';
    const frames = d('peer_frames_sent_total') > 0 ? ` in ${(d('peer_frames_sent_total') / committed).toFixed(2)} frames` : '';
    const messages = committed > 0 && d('messages_sent_total') > 0 ? `, ${(d('messages_sent_total') / committed).toFixed(2)} messages sent per entry${frames}` : '';
    parts.push(`${name}${name === leader ? ' (leader)' : ''}: ${committed} entries, ${fsyncs} log fsyncs (${per(committed)} entries and ${per(d('wal_fsync_seconds_total') * 1000)} ms each)${applies}${messages}, ${d('process_cpu_seconds_total').toFixed(1)} CPU s${committed > 0 ? ` (${((d('process_cpu_seconds_total') * 1000) / committed).toFixed(2)} ms per entry)` : ''}`);
  }
  return parts.length ? `Raft logs over the clusterd rounds — ${parts.join('; ')}` : 'Raft counters unavailable';
}

/** `total` split into `parts` nearly equal whole shares (32 over 3: 11, 11, 10). */
export function spread(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

export function median(xs: number[]): number | null {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
