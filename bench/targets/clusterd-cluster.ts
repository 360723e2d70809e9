// bench/targets/clusterd-cluster owns a multi-replica clusterd for the bench: the cluster PKI
// (made once per directory, as `clusterd pki` would), N replicas of the built server on
// loopback (each a ClusterdProcess: its own data directory, API port and peer port, the same
// --initial-cluster, default heartbeat and election timeouts unless told otherwise), started
// together (a replica is ready only once a leader is known), the leader as the replicas
// themselves report it (/cluster/v1/members), and kill -9 / restart of one replica.
// Imports: internal/pki/cluster-pki, load/protocol (types), support/https-call,
// targets/clusterd-process, targets/free-port.

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { join } from 'node:path';
import { generateClusterPki } from '../../internal/pki/cluster-pki.js';
import type { TlsMaterial } from '../load/protocol.js';
import { httpsCall } from '../support/https-call.js';
import { ClusterdProcess } from './clusterd-process.js';
import { freePort } from './free-port.js';

export interface MemberView {
  name: string;
  role: string;
  apiAddress?: string;
  applied?: number;
  term?: number;
}

/** Makes (or completes) a cluster PKI directory for replicas `names` on 127.0.0.1. */
export async function makeClusterPki(dir: string, names: readonly string[]): Promise<void> {
  if (existsSync(join(dir, 'ca.crt')) && names.every((n) => existsSync(join(dir, 'replicas', n, 'peer.crt')))) return;
  const r = await generateClusterPki(dir, names.map((name) => ({ name, hosts: ['127.0.0.1'] })));
  if (r.warnings.length) throw new Error(`cluster PKI in ${dir}: ${r.warnings.join('; ')}`);
}

/** The admin's client certificate and the cluster CA of a cluster PKI directory. */
export function clusterAdminTls(pkiDir: string): TlsMaterial {
  return { ca: readFileSync(join(pkiDir, 'ca.crt'), 'utf8'), cert: readFileSync(join(pkiDir, 'admin.crt'), 'utf8'), key: readFileSync(join(pkiDir, 'admin.key'), 'utf8') };
}

interface Slot {
  name: string;
  dataDir: string;
  apiPort: number;
  args: string[];
  process: ClusterdProcess | undefined;
}

export class ClusterdCluster {
  private readonly agent: Agent;
  readonly tls: TlsMaterial;

  private constructor(
    private readonly slots: Slot[],
    readonly pkiDir: string,
  ) {
    this.tls = clusterAdminTls(pkiDir);
    this.agent = new Agent({ ca: this.tls.ca, cert: this.tls.cert, key: this.tls.key, keepAlive: true });
  }

  /**
   * Starts replicas `names` (a PKI for them must exist in `pkiDir`) under `dir`/<name>, all at
   * once, and resolves when every one answers /readyz 200. `extraArgs` go to every replica.
   */
  static async start(dir: string, pkiDir: string, names: readonly string[], extraArgs: string[] = []): Promise<ClusterdCluster> {
    const ports = [];
    for (const name of names) ports.push({ name, api: await freePort(), peer: await freePort() });
    const initialCluster = ports.map((p) => `${p.name}=127.0.0.1:${p.peer}`).join(',');
    const slots: Slot[] = ports.map((p) => {
      const dataDir = join(dir, p.name);
      mkdirSync(dataDir, { recursive: true });
      return { name: p.name, dataDir, apiPort: p.api, args: [`--name=${p.name}`, `--pki-dir=${pkiDir}`, `--initial-cluster=${initialCluster}`, '--log-level=error', ...extraArgs], process: undefined };
    });
    const cluster = new ClusterdCluster(slots, pkiDir);
    const started = await Promise.allSettled(slots.map(async (s) => (s.process = (await ClusterdProcess.start(s.dataDir, s.args, s.apiPort)).server)));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await cluster.stop();
      throw failed.reason;
    }
    return cluster;
  }

  get names(): string[] {
    return this.slots.map((s) => s.name);
  }

  private slot(name: string): Slot {
    const s = this.slots.find((x) => x.name === name);
    if (!s) throw new Error(`no replica ${name}`);
    return s;
  }

  url(name: string): string {
    return `https://127.0.0.1:${this.slot(name).apiPort}`;
  }

  pid(name: string): number {
    const p = this.slot(name).process;
    if (!p) throw new Error(`replica ${name} is not running`);
    return p.pid;
  }

  /** Replicas whose process is running, in the order they were named. */
  running(): string[] {
    return this.slots.filter((s) => s.process?.running).map((s) => s.name);
  }

  pids(): number[] {
    return this.running().map((n) => this.pid(n));
  }

  process(name: string): ClusterdProcess | undefined {
    return this.slot(name).process;
  }

  /** The member list as replica `name` sees it, or undefined when it does not answer. */
  async members(name: string, timeoutMs = 1000): Promise<MemberView[] | undefined> {
    try {
      const r = await httpsCall(this.agent, `${this.url(name)}/cluster/v1/members`, { timeoutMs });
      if (r.status !== 200) return undefined;
      return (JSON.parse(r.body.toString('utf8')) as { members: MemberView[] }).members;
    } catch {
      return undefined;
    }
  }

  /** The running replica that reports itself leader; waits for one at most `timeoutMs`. */
  async leader(timeoutMs = 30_000): Promise<string> {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      for (const name of this.running()) {
        const self = (await this.members(name))?.find((m) => m.name === name);
        if (self?.role === 'leader') return name;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no leader among ${this.running().join(', ')} within ${timeoutMs / 1000} s`);
  }

  /**
   * The replica's Raft counters and its CPU seconds from /metrics (clusterd_raft_* and
   * process_cpu_seconds_total, names without the clusterd_raft_ prefix), or undefined.
   */
  async raftCounters(name: string): Promise<Record<string, number> | undefined> {
    try {
      const r = await httpsCall(this.agent, `${this.url(name)}/metrics`, { timeoutMs: 2000 });
      if (r.status !== 200) return undefined;
      const out: Record<string, number> = {};
      for (const line of r.body.toString('utf8').split('\n')) {
        const m = /^(clusterd_raft_\w+|process_cpu_seconds_total) (\S+)$/.exec(line);
        if (m) out[m[1]!.replace('clusterd_raft_', '')] = Number(m[2]);
      }
      return out;
    } catch {
      return undefined;
    }
  }

  /** Waits until every running replica answers /readyz 200 (a leader known, caught up). */
  async allReady(timeoutMs = 60_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (const name of this.running()) {
      for (;;) {
        const status = await httpsCall(this.agent, `${this.url(name)}/readyz`, { timeoutMs: 1000 }).then((r) => r.status, () => 0);
        if (status === 200) break;
        if (performance.now() > deadline) throw new Error(`replica ${name} not ready within ${timeoutMs / 1000} s`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }

  /** kill -9 of one replica; resolves once the process is gone. */
  async kill(name: string): Promise<void> {
    await this.slot(name).process?.kill();
  }

  /** Starts a stopped or killed replica again on its data directory and ports; spawn-to-ready ms. */
  async restart(name: string): Promise<number> {
    const s = this.slot(name);
    if (s.process?.running) await s.process.stop();
    const { server, readyMs } = await ClusterdProcess.start(s.dataDir, s.args, s.apiPort);
    s.process = server;
    return readyMs;
  }

  async stop(): Promise<void> {
    this.agent.destroy();
    await Promise.all(this.slots.map((s) => (s.process?.running ? s.process.stop() : undefined)));
  }

  /** Server logs (tails) of every replica, for failure messages. */
  logTails(): string {
    return this.slots.map((s) => `--- ${s.name}\n${s.process?.logTail().slice(-2000) ?? ''}`).join('\n');
  }
}
