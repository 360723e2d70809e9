// raft/node/testing/process-cluster.ts owns running a cluster of kv-replica-main processes on
// loopback for the multi-process tests and the benchmark: it issues the mutual-TLS material,
// picks addresses (127.0.0.1, .2, .3 when the machine allows binding them, otherwise distinct
// ports on 127.0.0.1), writes each replica's config, and starts, kills (SIGKILL) and restarts
// replicas with their data directories intact. Replicas run the compiled JavaScript of dist/
// even when the caller runs from TypeScript (vitest): transpiling every module at each start
// cost seconds of CPU per (re)start, which a loaded machine could not spare.

import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import * as net from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ChildProcess } from 'node:child_process';
import { spawnBuiltModule } from '../../launch/spawn-module.js';
import { createClusterCa } from '../../transport/cluster-ca.js';
import type { NodeId } from '../../types.js';
import type { ReplicaConfig } from './kv-replica-main.js';
import { replicaStatus, type ReplicaStatus } from './kv-client.js';

export interface ProcessClusterOptions {
  size: number;
  /** Working directory: data directories and config files go here. */
  dir: string;
  tickMs?: number;
  electionTicks?: number;
  snapshotEntries?: number;
  /** Receives the replicas' stderr lines, prefixed with the id. */
  log?: (line: string) => void;
}

async function canBind(host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(0, host, () => s.close(() => resolve(true)));
  });
}

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const addr = s.address() as net.AddressInfo;
      s.close(() => resolve(addr.port));
    });
  });
}

export class ProcessCluster {
  private readonly procs = new Map<NodeId, ChildProcess>();
  private constructor(
    readonly configs: Map<NodeId, ReplicaConfig>,
    private readonly dir: string,
    private readonly log: (line: string) => void,
  ) {}

  static async create(o: ProcessClusterOptions): Promise<ProcessCluster> {
    await mkdir(o.dir, { recursive: true });
    const distinctHosts = o.size <= 254 && (await canBind('127.0.0.2'));
    const hostOf = (id: NodeId): string => (distinctHosts ? `127.0.0.${id}` : '127.0.0.1');
    const ca = await createClusterCa();
    const ids = Array.from({ length: o.size }, (_, i) => i + 1);
    const raftPorts = new Map<NodeId, number>();
    const apiPorts = new Map<NodeId, number>();
    for (const id of ids) {
      raftPorts.set(id, await freePort(hostOf(id)));
      apiPorts.set(id, await freePort(hostOf(id)));
    }
    const peers: [NodeId, string][] = ids.map((id) => [id, `https://${hostOf(id)}:${raftPorts.get(id)}`]);
    const configs = new Map<NodeId, ReplicaConfig>();
    for (const id of ids) {
      configs.set(id, {
        id,
        clusterId: 'process-cluster',
        dataDir: join(o.dir, `member-${id}`),
        raft: { host: hostOf(id), port: raftPorts.get(id)! },
        api: { host: hostOf(id), port: apiPorts.get(id)! },
        peers,
        tls: await ca.issueMember(id, { ips: [hostOf(id)] }),
        tickMs: o.tickMs ?? 50,
        electionTicks: o.electionTicks ?? 10,
        snapshotEntries: o.snapshotEntries,
      });
      await writeFile(join(o.dir, `member-${id}.json`), JSON.stringify(configs.get(id)));
    }
    return new ProcessCluster(configs, o.dir, o.log ?? (() => undefined));
  }

  get ids(): NodeId[] {
    return [...this.configs.keys()];
  }

  apiUrl(id: NodeId): string {
    const c = this.configs.get(id)!;
    return `http://${c.api.host}:${c.api.port}`;
  }

  isRunning(id: NodeId): boolean {
    return this.procs.has(id);
  }

  /** The process id of running replica `id` (for CPU accounting), undefined when it is not running. */
  pid(id: NodeId): number | undefined {
    return this.procs.get(id)?.pid;
  }

  /**
   * Starts replica `id` and resolves once it serves its API. Throws at once when dist/ is
   * missing or older than the sources under raft/ (run `make build`).
   */
  async start(id: NodeId): Promise<void> {
    const child = spawnBuiltModule(import.meta.url, './kv-replica-main.ts', { args: [join(this.dir, `member-${id}.json`)] });
    this.procs.set(id, child);
    createInterface({ input: child.stderr! }).on('line', (l) => this.log(`[${id}] ${l}`));
    const lines = createInterface({ input: child.stdout! });
    const exited = once(child, 'exit').then(([code, signal]) => {
      if (this.procs.get(id) === child) this.procs.delete(id);
      return `exited (${String(code)}, ${String(signal)})`;
    });
    const ready = new Promise<string>((resolve) => lines.on('line', (l) => l.includes('"ready"') && resolve('ready')));
    const outcome = await Promise.race([ready, exited]);
    if (outcome !== 'ready') throw new Error(`replica ${id} ${outcome} before serving`);
  }

  async startAll(): Promise<void> {
    await Promise.all(this.ids.map((id) => this.start(id)));
  }

  /** kill -9: no chance to flush or close anything. */
  async kill(id: NodeId): Promise<void> {
    const child = this.procs.get(id);
    if (!child) return;
    this.procs.delete(id);
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  /** Graceful stop (SIGTERM) of every running replica. */
  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.procs.entries()].map(async ([id, child]) => {
        this.procs.delete(id);
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  async statuses(): Promise<Map<NodeId, ReplicaStatus>> {
    const out = new Map<NodeId, ReplicaStatus>();
    await Promise.all(
      [...this.procs.keys()].map(async (id) => {
        const s = await replicaStatus(this.apiUrl(id));
        if (s) out.set(id, s);
      }),
    );
    return out;
  }

  /** The leader of the highest term among running replicas, if one claims it. */
  async leader(): Promise<NodeId | null> {
    let best: ReplicaStatus | null = null;
    for (const s of (await this.statuses()).values()) if (s.role === 'leader' && (!best || s.term > best.term)) best = s;
    return best ? best.id : null;
  }

  /** Polls (every 20 ms) until a leader exists, or rejects after `timeoutMs`. */
  async waitForLeader(timeoutMs = 15_000, except?: NodeId): Promise<NodeId> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const l = await this.leader();
      if (l !== null && l !== except) return l;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('no leader elected in time');
  }
}
