// raft/bench/raft-bench.ts owns the Raft benchmark (not a test): a three-member clusterd Raft
// cluster (kv-replica-main: RaftNode + LevelDB with fsync + HTTP/2 mutual TLS) side by side,
// in the same run, with a three-member etcd 3.4 cluster (peer mutual TLS, fsync, its v3 JSON
// gateway). Both are driven the same way: HTTP/1.1 keep-alive JSON puts of the same size to
// the leader, with 1, 16 and 256 requests in flight, and leader failover measured as the time
// from kill -9 of the leader to the first put acknowledged afterwards. Both clusters run for
// the whole benchmark and take turns in one-second rounds (see runSystems), so that load from
// elsewhere on a shared machine falls on both alike. Each system is warmed up first (16 in
// flight, unmeasured), and the 1-in-flight level runs three times as long as the others: its
// p99 is a tail of one put at a time and needs the samples (the table says how many).
// Prints a Markdown table with ratios (clusterd / etcd) and writes JSON.
//
//   node --import ./raft/launch/ts-loader.mjs raft/bench/raft-bench.ts [--quick] [--spread] [--out file] [--help]
//   (or from dist: node dist/raft/bench/raft-bench.js)
// `make bench` calls runRaftBench(). etcd is looked up on PATH (Debian: apt-get install -y
// etcd-server); without it only clusterd's figures are reported.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as http from 'node:http';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { readCpuMs } from '../../bench/support/proc-stats.js';
import { closeClientConnections, kvPut, replicaStats } from '../node/testing/kv-client.js';
import { ProcessCluster } from '../node/testing/process-cluster.js';
import { createClusterCa } from '../transport/cluster-ca.js';

export interface RaftBenchOptions {
  /** Shorter phases (for CI smoke runs). */
  quick?: boolean;
  /** Measured duration per concurrency level. Default 5 s (quick: 1.5 s). */
  durationMs?: number;
  /**
   * Measured duration at 1 in flight, where each put waits for its own commit: its p99 needs
   * more samples than one level's duration gives (5 s: about 2,000 puts, so the p99 is the
   * 20th slowest). Default 3 × durationMs.
   */
  durationAt1Ms?: number;
  /**
   * Unmeasured load (16 in flight) on each system first: a fresh Node process compiles its hot
   * code for seconds under load (etcd needs none, but gets the same). Default 5 s (quick: 2 s).
   */
  warmupMs?: number;
  /**
   * Each system's puts spread over all its members (worker w puts through member w mod n, the
   * followers forwarding to the leader) instead of all through the leader: what forwarding
   * costs, as clients spread over the replicas see it. Default false.
   */
  spread?: boolean;
  /** Value size of each put. Default 256 bytes. */
  valueBytes?: number;
  /** Requests in flight. Default [1, 16, 256]. */
  concurrency?: number[];
  /** Failover rounds (median reported). Default 3 (quick: 1). */
  failovers?: number;
  /** Where to write the JSON result. Default bench/results/raft-bench.json. */
  outFile?: string;
  /** etcd binary; default `etcd` on PATH. */
  etcdBinary?: string;
  log?: (line: string) => void;
}

export interface LoadResult {
  concurrency: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** Acknowledged puts measured (the latencies the percentiles come from). */
  samples: number;
  /**
   * CPU time (user + system) of all three members per acknowledged put, measured over this
   * system's own rounds only (the other system idles meanwhile): what a put costs the shared
   * cores, which a loaded machine's wall-clock figures hide. Null when /proc is unavailable.
   */
  cpuMsPerPut: number | null;
}

export interface SystemResult {
  system: string;
  load: LoadResult[];
  /** Kill -9 of the leader to first acknowledged put, per round, in ms. */
  failoverMs: number[];
}

export interface RaftBenchResult {
  startedAt: string;
  valueBytes: number;
  durationMs: number;
  clusterd: SystemResult;
  etcd: SystemResult | null;
  etcdVersion: string | null;
  markdown: string;
}

/** One system under test, as the load generator sees it. */
interface Target {
  name: string;
  /** Base URLs by member, for the members currently running. */
  liveMembers(): number[];
  /** Process ids of the running members (CPU accounting). */
  pids(): number[];
  leader(): Promise<number>;
  /** Internal counters of a member (clusterd: RaftNode.stats()), for the log; optional. */
  stats?(member: number): Promise<Record<string, number> | null>;
  /** Resolves true when the put was acknowledged. */
  put(member: number, key: string, value: string, timeoutMs: number): Promise<boolean>;
  kill(member: number): Promise<void>;
  restart(member: number): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Length of one turn of one system in the interleaved load phases (see runSystems). */
const ROUND_MS = 1000;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Latencies and counts of one system at one concurrency, accumulated over rounds. */
interface LoadSamples {
  latencies: number[];
  errors: number;
  elapsedMs: number;
  /** Members' CPU time during the rounds; NaN once a reading failed. */
  cpuMs: number;
}

/** Total CPU time of the processes, NaN when one cannot be read. */
function cpuOf(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + (readCpuMs(pid) ?? NaN), 0);
}

/** Runs `concurrency` workers against the leader (or spread over the members) for `durationMs`, adding to `into`. */
async function runLoad(t: Target, concurrency: number, durationMs: number, value: string, into: LoadSamples, spread = false): Promise<void> {
  const leader = await t.leader();
  const members = t.liveMembers();
  const deadline = performance.now() + durationMs;
  const worker = async (w: number): Promise<void> => {
    for (let n = 0; performance.now() < deadline; n++) {
      const start = performance.now();
      const ok = await t.put(spread ? members[w % members.length]! : leader, `bench-${w}-${n % 64}`, value, 10_000);
      if (ok) into.latencies.push(performance.now() - start);
      else into.errors++;
    }
  };
  const pids = t.pids();
  const cpuBefore = cpuOf(pids);
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  into.elapsedMs += performance.now() - started;
  into.cpuMs += cpuOf(pids) - cpuBefore;
}

function summarize(concurrency: number, x: LoadSamples): LoadResult {
  const sorted = [...x.latencies].sort((a, b) => a - b);
  return {
    concurrency,
    opsPerSec: Math.round((sorted.length / x.elapsedMs) * 1000),
    p50Ms: Number(percentile(sorted, 50).toFixed(2)),
    p99Ms: Number(percentile(sorted, 99).toFixed(2)),
    errors: x.errors,
    samples: sorted.length,
    cpuMsPerPut: Number.isFinite(x.cpuMs) && sorted.length > 0 ? Number((x.cpuMs / sorted.length).toFixed(3)) : null,
  };
}

async function measureFailover(t: Target, value: string, log: (l: string) => void): Promise<number> {
  const leader = await t.leader();
  // Make sure every member is caught up and serving before the kill.
  for (const m of t.liveMembers()) await t.put(m, 'failover-warmup', value, 5_000);
  const killedAt = performance.now();
  await t.kill(leader);
  let elapsed = NaN;
  for (let attempt = 0; performance.now() - killedAt < 30_000; attempt++) {
    const members = t.liveMembers();
    const target = members[attempt % members.length]!;
    if (await t.put(target, 'failover', value, 300)) {
      elapsed = performance.now() - killedAt;
      break;
    }
  }
  log(`${t.name}: failover after killing ${leader}: ${elapsed.toFixed(0)} ms`);
  await t.restart(leader);
  await sleep(500);
  return Math.round(elapsed);
}

/**
 * Runs every system at every concurrency, interleaved: each level is split into rounds of
 * about ROUND_MS, and the systems take turns (ABBA order), so that a burst of load from
 * something else on the machine falls on both rather than on whichever ran at that moment.
 */
async function runSystems(
  targets: Target[],
  o: Required<Pick<RaftBenchOptions, 'durationMs' | 'durationAt1Ms' | 'warmupMs' | 'concurrency' | 'failovers' | 'spread'>>,
  value: string,
  log: (l: string) => void,
): Promise<SystemResult[]> {
  for (const t of targets) await runLoad(t, 16, o.warmupMs, value, { latencies: [], errors: 0, elapsedMs: 0, cpuMs: 0 }, o.spread); // warm-up
  const load = targets.map((): LoadResult[] => []);
  for (const c of o.concurrency) {
    const duration = c === 1 ? o.durationAt1Ms : o.durationMs;
    const rounds = Math.max(1, Math.round(duration / ROUND_MS));
    const samples = targets.map((): LoadSamples => ({ latencies: [], errors: 0, elapsedMs: 0, cpuMs: 0 }));
    const before = await Promise.all(targets.map(async (t) => (t.stats ? await t.stats(await t.leader()) : null)));
    for (let r = 0; r < rounds; r++) {
      const order = targets.map((_, i) => i);
      if (r % 2 === 1) order.reverse();
      for (const i of order) await runLoad(targets[i]!, c, duration / rounds, value, samples[i]!, o.spread);
    }
    for (const [i, t] of targets.entries()) {
      const res = summarize(c, samples[i]!);
      log(`${t.name}: ${c} in flight: ${res.opsPerSec} puts/s, p50 ${res.p50Ms} ms, p99 ${res.p99Ms} ms (${res.samples} puts), ${res.errors} errors, members' CPU ${res.cpuMsPerPut ?? 'n/a'} ms per put`);
      const after = before[i] && t.stats ? await t.stats(await t.leader()) : null;
      if (before[i] && after) log(`${t.name}: leader during ${c} in flight: ${describeStats(before[i]!, after)}`);
      load[i]!.push(res);
    }
  }
  const failoverMs = targets.map((): number[] => []);
  for (let k = 0; k < o.failovers; k++) {
    for (const [i, t] of targets.entries()) failoverMs[i]!.push(await measureFailover(t, value, log));
  }
  return targets.map((t, i) => ({ system: t.name, load: load[i]!, failoverMs: failoverMs[i]! }));
}

/** Per-Ready batching figures from two RaftNode.stats() readings. */
function describeStats(a: Record<string, number>, b: Record<string, number>): string {
  const d = (k: string): number => (b[k] ?? 0) - (a[k] ?? 0);
  const per = (x: number, y: number): string => (y > 0 ? (x / y).toFixed(2) : 'n/a');
  return [
    `${d('readies')} readies`,
    `${per(d('entriesSaved'), d('saves'))} entries/save`,
    `${d('idleSaves')} idle saves`,
    `${per(d('saveMs'), d('saves'))} ms/save`,
    `${per(d('messagesSent'), d('readies'))} msgs/ready`,
    `${per(d('entriesApplied'), d('readies'))} applied/ready`,
    `${d('entriesAppliedAhead')} applied ahead of the leader's own write`,
    `apply ${d('applyMs').toFixed(0)} ms`,
    `${d('snapshots')} snapshots (loop ${d('snapshotMs').toFixed(0)} ms, save ${d('snapshotSaveMs').toFixed(0)} ms, compact ${d('compactMs').toFixed(0)} ms)`,
  ].join(', ');
}

// ---- clusterd --------------------------------------------------------------------------------

async function clusterdTarget(dir: string, log: (l: string) => void): Promise<Target> {
  // Same timing as etcd's defaults: 100 ms heartbeat, 1 s election timeout.
  const cluster = await ProcessCluster.create({ size: 3, dir, tickMs: 100, electionTicks: 10, snapshotEntries: 10_000, log });
  await cluster.startAll();
  await cluster.waitForLeader(30_000);
  return {
    name: 'clusterd',
    liveMembers: () => cluster.ids.filter((id) => cluster.isRunning(id)),
    pids: () => cluster.ids.flatMap((id) => cluster.pid(id) ?? []),
    leader: () => cluster.waitForLeader(30_000),
    stats: (m) => replicaStats(cluster.apiUrl(m)),
    put: async (m, key, value, timeoutMs) => (await kvPut(cluster.apiUrl(m), key, value, timeoutMs)).kind === 'ok',
    kill: (m) => cluster.kill(m),
    restart: (m) => cluster.start(m),
    stop: () => cluster.stopAll(),
  };
}

// ---- etcd ------------------------------------------------------------------------------------

const etcdAgent = new http.Agent({ keepAlive: true, maxSockets: 512 });

function postJson(url: string, body: unknown, timeoutMs: number): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = http.request(url, { method: 'POST', agent: etcdAgent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } });
    const timer = setTimeout(() => req.destroy(new Error('timeout')), timeoutMs);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        const raw = Buffer.concat(chunks).toString('utf8');
        let json: unknown = null;
        try {
          json = JSON.parse(raw);
        } catch {
          json = raw;
        }
        resolve({ status: res.statusCode ?? 0, json });
      });
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(text);
  });
}

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function etcdVersion(binary: string): string | null {
  const r = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout) return null;
  return /etcd Version: (\S+)/.exec(r.stdout)?.[1] ?? r.stdout.split('\n')[0]!;
}

async function etcdTarget(binary: string, dir: string, log: (l: string) => void): Promise<Target> {
  const ca = await createClusterCa({ name: 'etcd bench CA' });
  const hosts = (await canBind('127.0.0.2')) ? [1, 2, 3].map((i) => `127.0.0.${i}`) : ['127.0.0.1', '127.0.0.1', '127.0.0.1'];
  const members = await Promise.all(
    [1, 2, 3].map(async (i) => {
      const host = hosts[i - 1]!;
      const tls = await ca.issueMember(i, { ips: [host] });
      const mdir = join(dir, `etcd-${i}`);
      await mkdir(mdir, { recursive: true });
      await writeFile(join(mdir, 'ca.pem'), tls.ca);
      await writeFile(join(mdir, 'cert.pem'), tls.cert);
      await writeFile(join(mdir, 'key.pem'), tls.key);
      return { i, host, mdir, clientPort: await freePort(host), peerPort: await freePort(host) };
    }),
  );
  const initialCluster = members.map((m) => `m${m.i}=https://${m.host}:${m.peerPort}`).join(',');
  const procs = new Map<number, ChildProcess>();
  const clientUrl = (i: number): string => {
    const m = members[i - 1]!;
    return `http://${m.host}:${m.clientPort}`;
  };
  const start = async (i: number): Promise<void> => {
    const m = members[i - 1]!;
    const args = [
      '--name', `m${i}`,
      '--data-dir', join(m.mdir, 'data'),
      '--listen-client-urls', clientUrl(i),
      '--advertise-client-urls', clientUrl(i),
      '--listen-peer-urls', `https://${m.host}:${m.peerPort}`,
      '--initial-advertise-peer-urls', `https://${m.host}:${m.peerPort}`,
      '--initial-cluster', initialCluster,
      '--initial-cluster-state', 'new',
      '--initial-cluster-token', 'raft-bench',
      '--peer-cert-file', join(m.mdir, 'cert.pem'),
      '--peer-key-file', join(m.mdir, 'key.pem'),
      '--peer-trusted-ca-file', join(m.mdir, 'ca.pem'),
      '--peer-client-cert-auth',
      '--logger', 'zap',
      '--log-level', 'error',
    ];
    const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (d: Buffer) => log(`[etcd m${i}] ${d.toString().trim().slice(0, 300)}`));
    procs.set(i, child);
    child.on('exit', () => procs.get(i) === child && procs.delete(i));
  };
  const statusOf = async (i: number): Promise<{ memberId: string; leader: string } | null> => {
    try {
      const r = await postJson(`${clientUrl(i)}/v3/maintenance/status`, {}, 1000);
      const j = r.json as { header?: { member_id?: string }; leader?: string };
      return r.status === 200 && j.header?.member_id && j.leader ? { memberId: j.header.member_id, leader: j.leader } : null;
    } catch {
      return null;
    }
  };
  const leader = async (): Promise<number> => {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const statuses = new Map<number, { memberId: string; leader: string }>();
      for (const i of procs.keys()) {
        const s = await statusOf(i);
        if (s) statuses.set(i, s);
      }
      for (const [i, s] of statuses) if (s.memberId === s.leader) return i;
      await sleep(20);
    }
    throw new Error('etcd: no leader');
  };
  await Promise.all(members.map((m) => start(m.i)));
  await leader();
  return {
    name: 'etcd',
    liveMembers: () => [...procs.keys()].sort(),
    pids: () => [...procs.values()].flatMap((c) => c.pid ?? []),
    leader,
    put: async (m, key, value, timeoutMs) => {
      try {
        const r = await postJson(`${clientUrl(m)}/v3/kv/put`, { key: Buffer.from(key).toString('base64'), value: Buffer.from(value).toString('base64') }, timeoutMs);
        return r.status === 200;
      } catch {
        return false;
      }
    },
    kill: async (m) => {
      const child = procs.get(m);
      if (!child) return;
      procs.delete(m);
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
    restart: async (m) => {
      await start(m);
      // Serving again once it answers a status request.
      for (let i = 0; i < 500 && !(await statusOf(m)); i++) await sleep(20);
    },
    stop: async () => {
      await Promise.all(
        [...procs.values()].map(async (c) => {
          const exited = once(c, 'exit');
          c.kill('SIGTERM');
          await exited;
        }),
      );
      etcdAgent.destroy();
    },
  };
}

async function canBind(host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(0, host, () => s.close(() => resolve(true)));
  });
}

// ---- report ----------------------------------------------------------------------------------

function ratio(a: number, b: number | undefined): string {
  if (b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return 'n/a';
  return `${(a / b).toFixed(2)}×`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]!;
}

function markdown(ours: SystemResult, etcd: SystemResult | null, version: string | null, valueBytes: number, spread: boolean): string {
  const lines = [
    `Raft benchmark: 3 members on loopback, fsync on, ${valueBytes}-byte puts over HTTP/1.1 JSON ${spread ? 'spread over the three members (followers forward to the leader)' : 'to the leader'}` +
      (etcd ? `; etcd ${version ?? '?'} in the same run` : '; etcd not available'),
    '',
    '| metric | clusterd | etcd | clusterd / etcd |',
    '| --- | ---: | ---: | ---: |',
  ];
  for (const r of ours.load) {
    const e = etcd?.load.find((x) => x.concurrency === r.concurrency);
    lines.push(`| puts/s @${r.concurrency} in flight | ${r.opsPerSec} | ${e?.opsPerSec ?? 'n/a'} | ${ratio(r.opsPerSec, e?.opsPerSec)} |`);
    lines.push(`| p50 commit latency @${r.concurrency} (ms) | ${r.p50Ms} | ${e?.p50Ms ?? 'n/a'} | ${ratio(r.p50Ms, e?.p50Ms)} |`);
    lines.push(`| p99 commit latency @${r.concurrency} (ms; of ${r.samples} / ${e?.samples ?? 'n/a'} puts) | ${r.p99Ms} | ${e?.p99Ms ?? 'n/a'} | ${ratio(r.p99Ms, e?.p99Ms)} |`);
    lines.push(`| members' CPU per put @${r.concurrency} (ms) | ${r.cpuMsPerPut ?? 'n/a'} | ${e?.cpuMsPerPut ?? 'n/a'} | ${ratio(r.cpuMsPerPut ?? NaN, e?.cpuMsPerPut ?? undefined)} |`);
  }
  const fo = median(ours.failoverMs);
  const efo = etcd ? median(etcd.failoverMs) : undefined;
  lines.push(`| leader failover, kill -9 to first commit (ms, median of ${ours.failoverMs.length}) | ${fo} | ${efo ?? 'n/a'} | ${ratio(fo, efo)} |`);
  return lines.join('\n');
}

/** Runs the whole benchmark; see the module header. */
export async function runRaftBench(opts: RaftBenchOptions = {}): Promise<RaftBenchResult> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const durationMs = opts.durationMs ?? (opts.quick ? 1500 : 5000);
  const o = {
    durationMs,
    durationAt1Ms: opts.durationAt1Ms ?? 3 * durationMs,
    warmupMs: opts.warmupMs ?? (opts.quick ? 2000 : 5000),
    concurrency: opts.concurrency ?? [1, 16, 256],
    failovers: opts.failovers ?? (opts.quick ? 1 : 3),
    spread: opts.spread ?? false,
  };
  const valueBytes = opts.valueBytes ?? 256;
  const value = 'v'.repeat(valueBytes);
  const dir = await mkdtemp(join(tmpdir(), 'raft-bench-'));
  const startedAt = new Date().toISOString();
  const binary = opts.etcdBinary ?? 'etcd';
  const version = etcdVersion(binary);
  let ours: SystemResult;
  let etcd: SystemResult | null = null;
  const targets: Target[] = [];
  try {
    targets.push(await clusterdTarget(join(dir, 'clusterd'), (l) => (l.includes('fatal') ? log(l) : undefined)));
    if (version) targets.push(await etcdTarget(binary, join(dir, 'etcd'), () => undefined));
    else log(`etcd not found (${binary}); install it with: apt-get install -y etcd-server`);
    [ours, etcd = null] = (await runSystems(targets, o, value, log)) as [SystemResult, SystemResult?];
  } finally {
    for (const t of targets) await t.stop().catch(() => undefined);
    closeClientConnections();
    await rm(dir, { recursive: true, force: true });
  }
  const md = markdown(ours, etcd, version, valueBytes, o.spread);
  const result: RaftBenchResult = { startedAt, valueBytes, durationMs: o.durationMs, clusterd: ours, etcd, etcdVersion: version, markdown: md };
  const outFile = opts.outFile ?? join('bench', 'results', 'raft-bench.json');
  await mkdir(dirname(outFile), { recursive: true });
  await writeFile(outFile, JSON.stringify(result, null, 2));
  return result;
}

const USAGE = `usage: node dist/raft/bench/raft-bench.js [--quick] [--spread] [--out FILE]

Runs a three-member clusterd Raft cluster next to a three-member etcd (when etcd is on PATH)
and prints a Markdown table of their ratios.

flags:
  --quick       shorter phases (1.5 s per level instead of 5 s), for smoke runs
  --spread      puts spread over the three members instead of all to the leader (etcd's too)
  --out FILE    where the JSON result goes (default bench/results/raft-bench.json)
  --help        this text
`;

/** The command line's options, or 'help'; throws an Error saying what is wrong. */
export function parseRaftBenchArgs(argv: readonly string[]): Pick<RaftBenchOptions, 'quick' | 'spread' | 'outFile'> | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: { quick: { type: 'boolean' }, spread: { type: 'boolean' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) return 'help';
  if (values.out === '') throw new Error('--out needs a file name');
  return { quick: values.quick === true, spread: values.spread === true, outFile: values.out };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let parsed: ReturnType<typeof parseRaftBenchArgs>;
  try {
    parsed = parseRaftBenchArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`raft-bench: ${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (parsed === 'help') {
    process.stdout.write(USAGE);
  } else {
    const result = await runRaftBench(parsed);
    process.stdout.write(`${result.markdown}\n`);
  }
}
