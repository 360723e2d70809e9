// bench/targets/etcd-process owns the etcd baseline: Debian's etcd (3.4) as a single member
// with its defaults (WAL fsync on), in a temporary data directory, on loopback ports, serving
// clients over TLS with the same serving certificate as the server under test; and
// EtcdCluster, three members on loopback with the certificates of a clusterd cluster PKI (the
// multi-replica baseline), whose members can be killed and restarted. Client
// certificates are not checked: with --trusted-ca-file etcd 3.4 demands one from every client,
// its own JSON gateway included, which dials with the serving certificate — and that lacks the
// client-auth usage. Imports: support/https-call, targets/free-port.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { httpsCall } from '../support/https-call.js';
import { freePort } from './free-port.js';

/** The etcd version on PATH (`3.4.23`), or undefined when etcd is not installed. */
export function etcdVersion(binary = 'etcd'): string | undefined {
  const r = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  return /etcd Version: (\S+)/.exec(r.stdout)?.[1] ?? 'unknown';
}

export class EtcdProcess {
  private exitCode: Promise<number | null>;
  private stderr = '';

  private constructor(
    readonly child: ChildProcess,
    readonly clientPort: number,
  ) {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (this.stderr = (this.stderr + d).slice(-20_000)));
    child.stdout!.resume();
    this.exitCode = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static async start(dataDir: string, tls: { cert: string; key: string; ca: string; clientCert: string; clientKey: string }, binary = 'etcd'): Promise<EtcdProcess> {
    const files = { cert: join(dataDir, 'server.crt'), key: join(dataDir, 'server.key') };
    writeFileSync(files.cert, tls.cert);
    writeFileSync(files.key, tls.key, { mode: 0o600 });
    const agent = new Agent({ ca: tls.ca, cert: tls.clientCert, key: tls.clientKey, keepAlive: false });
    try {
      const { etcd } = await EtcdProcess.startOnFreePorts(
        (ports, attempt) => ({ name: 'bench', dataDir: join(dataDir, attempt === 1 ? 'data' : `data-${attempt}`), ...ports, certFile: files.cert, keyFile: files.key, initialCluster: `bench=http://127.0.0.1:${ports.peerPort}` }),
        agent,
        30_000,
        binary,
      );
      return etcd;
    } finally {
      agent.destroy();
    }
  }

  /**
   * Spawns a member on two ports freePort found free and waits until it is healthy. A port found
   * free can be taken by another process before etcd binds it (other tests and benches pick
   * ports the same way); that attempt is not a result, so up to three are made, each on fresh
   * ports (`build` gets the attempt number: a fresh data directory per attempt).
   */
  static async startOnFreePorts(
    build: (ports: { clientPort: number; peerPort: number }, attempt: number) => EtcdMemberOptions,
    agent: Agent,
    timeoutMs: number,
    binary = 'etcd',
  ): Promise<{ etcd: EtcdProcess; member: EtcdMemberOptions }> {
    for (let attempt = 1; ; attempt++) {
      const member = build({ clientPort: await freePort(), peerPort: await freePort() }, attempt);
      const etcd = EtcdProcess.spawnMember(member, binary);
      try {
        await etcd.waitHealthy(agent, timeoutMs);
        return { etcd, member };
      } catch (e) {
        if (attempt >= 3 || !etcd.portTaken) throw e;
      }
    }
  }

  /** Whether the process failed because a port it was to listen on was taken. */
  get portTaken(): boolean {
    return this.stderr.includes('address already in use');
  }

  /**
   * Spawns one member without waiting for it (see waitHealthy). Peers talk plain HTTP unless
   * `peerTls` is given (then mutual TLS: --peer-client-cert-auth against its CA).
   */
  static spawnMember(m: EtcdMemberOptions, binary = 'etcd'): EtcdProcess {
    const client = `https://127.0.0.1:${m.clientPort}`;
    const peer = `${m.peerTls ? 'https' : 'http'}://127.0.0.1:${m.peerPort}`;
    const child = spawn(
      binary,
      [
        `--name=${m.name}`,
        `--data-dir=${m.dataDir}`,
        `--listen-client-urls=${client}`,
        `--advertise-client-urls=${client}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=${m.initialCluster}`,
        '--initial-cluster-state=new',
        `--initial-cluster-token=${m.clusterToken ?? 'bench'}`,
        `--cert-file=${m.certFile}`,
        `--key-file=${m.keyFile}`,
        ...(m.peerTls ? [`--peer-cert-file=${m.peerTls.certFile}`, `--peer-key-file=${m.peerTls.keyFile}`, `--peer-trusted-ca-file=${m.peerTls.caFile}`, '--peer-client-cert-auth'] : []),
        '--logger=zap',
        '--log-level=error',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    return new EtcdProcess(child, m.clientPort);
  }

  /** Waits until /health says true (a member of a cluster: once a leader is known). */
  async waitHealthy(agent: Agent, timeoutMs: number): Promise<void> {
    let exited = false;
    void this.exitCode.then(() => (exited = true));
    const deadline = performance.now() + timeoutMs;
    try {
      for (;;) {
        if (exited) throw new Error(`etcd exited before it was healthy:\n${this.stderr.slice(-2000)}`);
        if (performance.now() > deadline) throw new Error(`etcd was not healthy within ${timeoutMs / 1000} s:\n${this.stderr.slice(-2000)}`);
        if (await healthy(agent, this.clientPort)) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    } catch (e) {
      this.child.kill('SIGKILL');
      throw e;
    }
  }

  get url(): string {
    return `https://127.0.0.1:${this.clientPort}`;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  logTail(): string {
    return this.stderr;
  }

  async stop(): Promise<void> {
    this.child.kill('SIGTERM');
    await this.exitCode;
  }

  /** SIGKILL (a crash) and wait for the process to be gone. */
  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exitCode;
  }
}

export interface EtcdMemberOptions {
  name: string;
  dataDir: string;
  clientPort: number;
  peerPort: number;
  /** Client-facing serving certificate and key (files). */
  certFile: string;
  keyFile: string;
  /** `name=peerURL,...`, the same on every member. */
  initialCluster: string;
  clusterToken?: string;
  peerTls?: { certFile: string; keyFile: string; caFile: string };
}

/**
 * A three-member (or N-member) etcd on loopback: every member serves clients over TLS with a
 * replica's serving certificate of a cluster PKI (targets/clusterd-cluster) and talks to its
 * peers over mutual TLS with that replica's peer certificate, as clusterd's replicas do;
 * default heartbeat (100 ms) and election timeout (1 s); WAL fsync on.
 */
export class EtcdCluster {
  private readonly members = new Map<string, EtcdProcess>();
  private readonly agent: Agent;

  private constructor(
    private readonly options: Map<string, EtcdMemberOptions>,
    readonly tls: { ca: string; clientCert: string; clientKey: string },
    private readonly binary: string,
  ) {
    this.agent = new Agent({ ca: tls.ca, cert: tls.clientCert, key: tls.clientKey, keepAlive: true });
  }

  /** Members `names` under `dir`/<name>, certificates from the cluster PKI in `pkiDir`. */
  static async start(dir: string, pkiDir: string, names: readonly string[], tls: { ca: string; clientCert: string; clientKey: string }, binary = 'etcd'): Promise<EtcdCluster> {
    // As EtcdProcess.startOnFreePorts: a port taken between freePort and etcd's bind is retried
    // with fresh ports (and fresh data directories), up to three times.
    for (let attempt = 1; ; attempt++) {
      try {
        return await EtcdCluster.startOnce(attempt === 1 ? dir : join(dir, `attempt-${attempt}`), pkiDir, names, tls, binary);
      } catch (e) {
        if (attempt >= 3 || !(e instanceof PortTaken)) throw e instanceof PortTaken ? e.cause : e;
      }
    }
  }

  private static async startOnce(dir: string, pkiDir: string, names: readonly string[], tls: { ca: string; clientCert: string; clientKey: string }, binary: string): Promise<EtcdCluster> {
    const ports = [];
    for (const name of names) ports.push({ name, client: await freePort(), peer: await freePort() });
    const initialCluster = ports.map((p) => `${p.name}=https://127.0.0.1:${p.peer}`).join(',');
    // The same on every member (it seeds the cluster id), distinct per cluster.
    const clusterToken = `bench-${ports[0]!.peer}`;
    const options = new Map<string, EtcdMemberOptions>();
    for (const p of ports) {
      const replica = join(pkiDir, 'replicas', p.name);
      options.set(p.name, {
        name: p.name,
        dataDir: join(dir, p.name),
        clientPort: p.client,
        peerPort: p.peer,
        certFile: join(replica, 'apiserver.crt'),
        keyFile: join(replica, 'apiserver.key'),
        initialCluster,
        clusterToken,
        peerTls: { certFile: join(replica, 'peer.crt'), keyFile: join(replica, 'peer.key'), caFile: join(pkiDir, 'peer-ca.crt') },
      });
    }
    const cluster = new EtcdCluster(options, tls, binary);
    for (const name of names) cluster.members.set(name, EtcdProcess.spawnMember(options.get(name)!, binary));
    try {
      await Promise.all([...cluster.members.values()].map((m) => m.waitHealthy(cluster.agent, 30_000)));
    } catch (e) {
      const taken = [...cluster.members.values()].some((m) => m.portTaken);
      await cluster.stop();
      throw taken ? new PortTaken(e) : e;
    }
    return cluster;
  }

  get names(): string[] {
    return [...this.options.keys()];
  }

  url(name: string): string {
    return `https://127.0.0.1:${this.options.get(name)!.clientPort}`;
  }

  pid(name: string): number {
    const m = this.members.get(name);
    if (!m) throw new Error(`etcd member ${name} is not running`);
    return m.pid;
  }

  running(): string[] {
    return this.names.filter((n) => this.members.get(n)?.running);
  }

  pids(): number[] {
    return this.running().map((n) => this.pid(n));
  }

  /** The running member that reports itself leader (v3 maintenance status); waits for one. */
  async leader(timeoutMs = 30_000): Promise<string> {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      for (const name of this.running()) {
        try {
          const r = await httpsCall(this.agent, `${this.url(name)}/v3/maintenance/status`, { method: 'POST', body: '{}', timeoutMs: 1000 });
          const j = JSON.parse(r.body.toString('utf8')) as { header?: { member_id?: string }; leader?: string };
          if (r.status === 200 && j.header?.member_id && j.header.member_id === j.leader) return name;
        } catch {
          // not answering: try the next member
        }
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`etcd: no leader among ${this.running().join(', ')} within ${timeoutMs / 1000} s`);
  }

  /** Waits until every running member answers /health true. */
  async allHealthy(timeoutMs = 30_000): Promise<void> {
    await Promise.all(this.running().map((n) => this.members.get(n)!.waitHealthy(this.agent, timeoutMs)));
  }

  async kill(name: string): Promise<void> {
    await this.members.get(name)?.kill();
  }

  /** Starts a killed member again on its data directory and ports; waits for /health. */
  async restart(name: string): Promise<void> {
    const old = this.members.get(name);
    if (old?.running) await old.stop();
    const m = EtcdProcess.spawnMember(this.options.get(name)!, this.binary);
    this.members.set(name, m);
    await m.waitHealthy(this.agent, 30_000);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.members.values()].filter((m) => m.running).map((m) => m.stop()));
    this.agent.destroy();
  }
}

function healthy(agent: Agent, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', agent, timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve(res.statusCode === 200 && body.includes('"true"')));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** A cluster start that failed because one of its ports was taken before its member bound it. */
class PortTaken extends Error {
  constructor(override readonly cause: unknown) {
    super('an etcd port was taken before etcd bound it');
  }
}
