// e2e/support/cluster-process owns running a multi-replica clusterd control plane as real child
// processes on loopback for the e2e tests: it generates the cluster PKI once (internal/pki's
// generateClusterPki), picks free ports, starts each replica with bin/clusterd and the
// --initial-cluster of all, and offers the faults and the operations the tests need:
// SIGKILL, SIGTERM, restart on the same data, SIGSTOP/SIGCONT, cutting a replica off from its
// peers (peer-proxy.ts), joining a new replica with --join/--token, removing a member; waiting
// for /readyz, finding the leader through /cluster/v1/members. Replica output is kept (the
// last lines per replica) and exits nobody asked for are recorded. Test-only.
//
// Addresses: API on 127.0.0.1:<port below the ephemeral range, so that no client socket takes
// it while the replica is down>; peer address 127.0.0.1:P is the replica's proxy, and the
// replica binds P on its own loopback IP 127.0.13.<n> (--peer-bind-address).

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from './server-process.js';
import { HttpsClient, adminCredentials, type Credentials } from './https-client.js';
import { PeerNetwork } from './peer-proxy.js';
import type { MemberStatus } from '../../internal/cluster/replica.js';

const CLUSTERD = join(PROJECT_ROOT, 'bin', 'clusterd');
const ENTRY = join(PROJECT_ROOT, 'dist', 'cmd', 'clusterd', 'main.js');
const PKI_MODULE = join(PROJECT_ROOT, 'dist', 'internal', 'pki', 'cluster-pki.js');

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** What /cluster/v1/members lists per member (the server's own type). */
export type { MemberStatus };

export interface ClusterOptions {
  /** Founding replicas (default a, b, c). */
  names?: string[];
  heartbeatInterval?: string;
  electionTimeout?: string;
  compactionInterval?: string;
  /** More flags for every replica. */
  extraArgs?: string[];
  /** More flags for one replica (after extraArgs), such as a configuration file of its own. */
  argsFor?: (name: string) => string[];
  /** Progress lines (faults, restarts); default: nothing. */
  log?: (line: string) => void;
}

interface Replica {
  name: string;
  apiPort: number;
  peerPort: number;
  backendHost: string;
  dataDir: string;
  /** Flags that start (and restart) it. */
  args: string[];
  child: ChildProcess | undefined;
  exited: Promise<void> | undefined;
  /** Set while the harness itself is stopping it: its exit is expected. */
  stopping: boolean;
  paused: boolean;
  lines: string[];
  starts: number;
}

export interface UnexpectedExit {
  name: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  tail: string;
}

async function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

/** A free port on 127.0.0.1 outside the kernel's ephemeral range (see the module header). */
async function freeApiPort(): Promise<number> {
  let low = 32768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // not Linux: any port below the usual range
  }
  const lo = Math.max(10_000, low - 12_000);
  for (let i = 0; i < 200; i++) {
    const port = lo + Math.floor(Math.random() * (low - lo));
    if (await portFree('127.0.0.1', port)) return port;
  }
  throw new Error('no free API port found');
}

export class ClusterProcess {
  readonly network = new PeerNetwork();
  readonly creds: Credentials;
  readonly http: HttpsClient;
  readonly unexpectedExits: UnexpectedExit[] = [];
  private readonly replicas = new Map<string, Replica>();
  private nextBackend = 1;
  private destroyed = false;

  private constructor(
    readonly dir: string,
    readonly pkiDir: string,
    private readonly options: ClusterOptions,
  ) {
    this.creds = adminCredentials(pkiDir);
    this.http = new HttpsClient(this.creds);
  }

  /** Generates the PKI and the founding replicas' flags; starts nothing. */
  static async create(options: ClusterOptions = {}): Promise<ClusterProcess> {
    if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run \`make build\` before the e2e tests`);
    const names = options.names ?? ['a', 'b', 'c'];
    const dir = mkdtempSync(join(tmpdir(), 'clusterd-cluster-'));
    const pkiDir = join(dir, 'pki');
    const { generateClusterPki } = (await import(pathToFileURL(PKI_MODULE).href)) as typeof import('../../internal/pki/cluster-pki.js');
    await generateClusterPki(
      pkiDir,
      names.map((name) => ({ name, hosts: ['127.0.0.1'] })),
    );
    const cluster = new ClusterProcess(dir, pkiDir, options);
    const specs: Replica[] = [];
    for (const name of names) specs.push(await cluster.allocate(name));
    const initial = specs.map((r) => `${r.name}=127.0.0.1:${r.peerPort}`).join(',');
    for (const r of specs) {
      r.args = [
        `--name=${r.name}`,
        `--data-dir=${r.dataDir}`,
        `--pki-dir=${pkiDir}`,
        `--initial-cluster=${initial}`,
        ...cluster.commonArgs(r),
      ];
      cluster.replicas.set(r.name, r);
    }
    return cluster;
  }

  /**
   * A cluster created, started, ready on every replica and with a leader. A start that fails
   * destroys what it started: the caller holds no cluster its afterAll could stop.
   */
  static async started(options: ClusterOptions = {}): Promise<ClusterProcess> {
    const cluster = await ClusterProcess.create(options);
    try {
      await cluster.startAll();
      await cluster.waitAllReady();
      await cluster.waitForLeader();
    } catch (err) {
      await cluster.destroy();
      throw err;
    }
    return cluster;
  }

  private async allocate(name: string): Promise<Replica> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const backendHost = `127.0.13.${this.nextBackend++}`;
      const peerPort = await this.network.addProxy(name, backendHost);
      if (await portFree(backendHost, peerPort)) {
        return {
          name,
          apiPort: await freeApiPort(),
          peerPort,
          backendHost,
          dataDir: join(this.dir, name),
          args: [],
          child: undefined,
          exited: undefined,
          stopping: false,
          paused: false,
          lines: [],
          starts: 0,
        };
      }
    }
    throw new Error(`no peer port for ${name}`);
  }

  private commonArgs(r: Replica): string[] {
    const o = this.options;
    return [
      `--secure-port=${r.apiPort}`,
      '--bind-address=127.0.0.1',
      `--peer-bind-address=${r.backendHost}`,
      `--heartbeat-interval=${o.heartbeatInterval ?? '100ms'}`,
      `--election-timeout=${o.electionTimeout ?? '1s'}`,
      ...(o.compactionInterval ? [`--compaction-interval=${o.compactionInterval}`] : []),
      ...(o.extraArgs ?? []),
      ...(o.argsFor?.(r.name) ?? []),
    ];
  }

  private log(line: string): void {
    this.options.log?.(line);
  }

  get names(): string[] {
    return [...this.replicas.keys()];
  }

  runningNames(): string[] {
    return this.names.filter((n) => this.isRunning(n));
  }

  isRunning(name: string): boolean {
    return this.replica(name).child !== undefined;
  }

  url(name: string): string {
    return `https://127.0.0.1:${this.replica(name).apiPort}`;
  }

  peerAddress(name: string): string {
    return `127.0.0.1:${this.replica(name).peerPort}`;
  }

  /** Where the replica's peer listener itself binds (its proxy, peerAddress, admits replicas only). */
  peerListenAddress(name: string): string {
    const r = this.replica(name);
    return `${r.backendHost}:${r.peerPort}`;
  }

  dataDir(name: string): string {
    return this.replica(name).dataDir;
  }

  kubeconfig(name: string): string {
    return join(this.replica(name).dataDir, 'admin.kubeconfig');
  }

  pid(name: string): number | undefined {
    return this.replica(name).child?.pid;
  }

  /** The last lines replica `name` wrote (stdout and stderr, all its runs). */
  logs(name: string): string {
    return this.replica(name).lines.join('\n');
  }

  replica(name: string): Replica {
    const r = this.replicas.get(name);
    if (!r) throw new Error(`no replica ${name}`);
    return r;
  }

  /** Starts replica `name` (again: same flags, same data) and resolves once it serves HTTPS. */
  async start(name: string): Promise<void> {
    const r = this.replica(name);
    if (r.child) throw new Error(`replica ${name} is already running`);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.spawnOnce(r);
        return;
      } catch (e) {
        // Another process on the machine may hold the port for a moment (TIME_WAIT, a scan).
        if (attempt < 10 && /EADDRINUSE/.test(String(e))) {
          await sleep(500);
          continue;
        }
        throw e;
      }
    }
  }

  private async spawnOnce(r: Replica): Promise<void> {
    r.starts++;
    r.stopping = false;
    r.paused = false;
    const child = spawn(CLUSTERD, r.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    r.child = child;
    this.network.setPid(r.name, child.pid);
    let out = '';
    const push = (chunk: string): void => {
      out += chunk;
      let nl: number;
      while ((nl = out.indexOf('\n')) >= 0) {
        r.lines.push(`[${r.name}#${r.starts}] ${out.slice(0, nl)}`);
        out = out.slice(nl + 1);
      }
      if (r.lines.length > 4000) r.lines.splice(0, r.lines.length - 3000);
    };
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      push(d);
    });
    child.stderr!.setEncoding('utf8').on('data', push);
    r.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        if (r.child === child) {
          r.child = undefined;
          this.network.setPid(r.name, undefined);
          if (!r.stopping && !this.destroyed) {
            this.unexpectedExits.push({ name: r.name, code, signal, tail: r.lines.slice(-30).join('\n') });
            this.log(`replica ${r.name} exited unexpectedly (${String(code)}, ${String(signal)})`);
          }
        }
        resolve();
      });
    });
    const serving = await Promise.race([
      (async () => {
        for (let waited = 0; waited < 90_000; waited += 50) {
          if (/clusterd is serving at https:\/\//.test(stdout)) return true;
          await sleep(50);
        }
        return false;
      })(),
      r.exited.then(() => false),
    ]);
    if (!serving) {
      const tail = r.lines.slice(-30).join('\n');
      r.stopping = true;
      child.kill('SIGKILL');
      await r.exited;
      throw new Error(`replica ${r.name} did not start serving:\n${tail}`);
    }
  }

  async startAll(): Promise<void> {
    await Promise.all(this.names.filter((n) => !this.isRunning(n)).map((n) => this.start(n)));
  }

  /** kill -9. */
  async kill(name: string): Promise<void> {
    const r = this.replica(name);
    if (!r.child) return;
    r.stopping = true;
    r.child.kill('SIGKILL');
    await r.exited;
  }

  /** SIGTERM and wait for the exit; resolves with the exit code (SIGKILL after `graceMs`). */
  async stop(name: string, graceMs = 20_000): Promise<number | null> {
    const r = this.replica(name);
    const child = r.child;
    if (!child) return null;
    r.stopping = true;
    if (r.paused) this.resume(name);
    const code = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    const result = await code;
    clearTimeout(timer);
    await r.exited;
    return result;
  }

  /** Freezes the process (SIGSTOP): its sockets stay open, nothing is read or answered. */
  pause(name: string): void {
    const r = this.replica(name);
    if (!r.child || r.paused) return;
    r.paused = true;
    r.child.kill('SIGSTOP');
  }

  resume(name: string): void {
    const r = this.replica(name);
    if (!r.child || !r.paused) return;
    r.paused = false;
    r.child.kill('SIGCONT');
  }

  isolate(name: string): void {
    this.network.isolate(name);
  }

  heal(name: string): void {
    this.network.heal(name);
  }

  /** GET /readyz until 200 (or throws after `timeoutMs` with the verbose answer). */
  async waitReady(name: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      if (!this.isRunning(name)) throw new Error(`replica ${name} is not running:\n${this.logs(name).split('\n').slice(-20).join('\n')}`);
      try {
        const r = await this.http.request(this.url(name), 'GET', '/readyz?verbose', undefined, 5000);
        if (r.status === 200) return;
        last = r.body;
      } catch (e) {
        last = String(e);
      }
      await sleep(100);
    }
    throw new Error(`replica ${name} not ready after ${timeoutMs} ms: ${last}`);
  }

  async waitAllReady(timeoutMs = 60_000): Promise<void> {
    await Promise.all(this.runningNames().map((n) => this.waitReady(n, timeoutMs)));
  }

  /** SIGKILL or SIGTERM, then start again on the same data and wait until ready. */
  async restart(name: string, how: 'kill' | 'term' = 'kill', downMs = 0): Promise<void> {
    if (how === 'kill') await this.kill(name);
    else await this.stop(name);
    if (downMs > 0) await sleep(downMs);
    await this.start(name);
  }

  /** /cluster/v1/members as replica `name` answers it (`local`: its own view, not the leader's). */
  async members(name: string, local = false): Promise<MemberStatus[]> {
    const r = await this.http.json<{ kind: string; members: MemberStatus[] }>(this.url(name), 'GET', `/cluster/v1/members${local ? '?local=true' : ''}`, undefined, 5000);
    if (r.status !== 200) throw new Error(`members from ${name}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.members;
  }

  /**
   * The member list from `via` once every member has published its record (name and API
   * address). A replica publishes it about a second after it has a leader, so a replica can be
   * ready while the list still shows its numeric id.
   */
  async publishedMembers(via: string, timeoutMs = 15_000): Promise<MemberStatus[]> {
    for (let waited = 0; ; waited += 200) {
      const ms = await this.members(via);
      if (ms.every((m) => m.apiAddress !== '' && /^[a-z]/.test(m.name))) return ms;
      if (waited > timeoutMs) throw new Error(`member records not published: ${JSON.stringify(ms)}`);
      await sleep(200);
    }
  }

  /**
   * The leader: the running replica whose own view says it leads, of the highest term (a
   * deposed leader cut off from the others may still believe it leads an older term).
   */
  async leader(): Promise<string | undefined> {
    let best: { name: string; term: number } | undefined;
    await Promise.all(
      this.runningNames()
        .filter((n) => !this.replica(n).paused)
        .map(async (n) => {
          try {
            const self = (await this.members(n, true)).find((m) => m.name === n);
            if (self?.role === 'leader' && (!best || self.term > best.term)) best = { name: n, term: self.term };
          } catch {
            // down or not serving yet
          }
        }),
    );
    return best?.name;
  }

  /** Polls until a leader (other than `except`) exists that a majority of running replicas follow. */
  async waitForLeader(timeoutMs = 30_000, except?: string): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const l = await this.leader();
      if (l !== undefined && l !== except) return l;
      await sleep(50);
    }
    throw new Error(`no leader${except ? ` other than ${except}` : ''} within ${timeoutMs} ms`);
  }

  /**
   * Starts a new replica that joins through `via`'s API with `token` (default: the PKI's
   * join-token file; its own PKI copy goes to <data>/pki). Resolves once it serves; the leader
   * promotes it when caught up.
   */
  async join(name: string, via: string, token = readFileSync(join(this.pkiDir, 'join-token'), 'utf8').trim()): Promise<void> {
    if (this.replicas.has(name)) throw new Error(`replica ${name} exists`);
    const r = await this.allocate(name);
    r.args = [
      `--name=${name}`,
      `--data-dir=${r.dataDir}`,
      `--join=${this.url(via)}`,
      `--token=${token}`,
      `--peer-address=127.0.0.1:${r.peerPort}`,
      ...this.commonArgs(r),
    ];
    this.replicas.set(name, r);
    await this.start(name);
  }

  /** DELETE /cluster/v1/members/<name> through `via`; returns the HTTP status and body. */
  async remove(name: string, via: string): Promise<{ status: number; body: string }> {
    const r = await this.http.request(this.url(via), 'DELETE', `/cluster/v1/members/${name}`, undefined, 20_000);
    return { status: r.status, body: r.body };
  }

  /** Forgets a removed replica (after stopping it). */
  async forget(name: string): Promise<void> {
    await this.kill(name);
    this.replicas.delete(name);
  }

  /** Kills every replica, closes the proxies, removes the directory (unless `keep`). */
  async destroy(keep = false): Promise<void> {
    this.destroyed = true;
    await Promise.all(
      [...this.replicas.values()].map(async (r) => {
        if (!r.child) return;
        r.stopping = true;
        r.child.kill('SIGKILL');
        await r.exited;
      }),
    );
    this.http.close();
    await this.network.close();
    if (!keep) rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * What each running replica says of itself and its peers (members, Raft figures from
   * /metrics) and which peer links are open, for a failure report.
   */
  async diagnose(): Promise<string> {
    const lines = [`peer network: ${this.network.describe()}`];
    for (const name of this.runningNames()) {
      if (this.replica(name).paused) {
        lines.push(`${name}: paused`);
        continue;
      }
      try {
        const ms = await this.members(name, true);
        lines.push(`${name} members: ${ms.map((m) => `${m.name}/${m.role} term ${m.term} applied ${m.applied} lag ${m.lag}`).join('; ')}`);
        const metrics = await this.http.request(this.url(name), 'GET', '/metrics', undefined, 5000);
        const figures = metrics.body
          .split('\n')
          .filter((l) => /^clusterd_raft_(has_leader|is_leader|term|proposals_committed_total|proposals_applied_total|proposals_pending|snapshot_index|leader_changes_seen_total) /.test(l))
          .join(', ');
        lines.push(`${name} raft: ${figures}`);
      } catch (e) {
        lines.push(`${name}: ${String(e)}`);
      }
    }
    return lines.join('\n');
  }

  /** Fatal lines in any replica's output (a Raft node that stopped, an apply that failed). */
  fatalLines(): string[] {
    const out: string[] = [];
    for (const r of this.replicas.values()) for (const l of r.lines) if (/fatal|stopped on a fatal error|refuses writes/i.test(l)) out.push(l);
    return out;
  }
}

