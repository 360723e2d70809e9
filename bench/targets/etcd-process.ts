// bench/targets/etcd-process owns the etcd baseline: Debian's etcd (3.4) as a single member
// with its defaults (WAL fsync on), in a temporary data directory, on loopback ports, serving
// clients over TLS with the same serving certificate as the server under test. Client
// certificates are not checked: with --trusted-ca-file etcd 3.4 demands one from every client,
// its own JSON gateway included, which dials with the serving certificate — and that lacks the
// client-auth usage. Imports: targets/free-port.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
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
    const [clientPort, peerPort] = [await freePort(), await freePort()];
    const files = { cert: join(dataDir, 'server.crt'), key: join(dataDir, 'server.key') };
    writeFileSync(files.cert, tls.cert);
    writeFileSync(files.key, tls.key, { mode: 0o600 });
    const client = `https://127.0.0.1:${clientPort}`;
    const peer = `http://127.0.0.1:${peerPort}`;
    const child = spawn(
      binary,
      [
        '--name=bench',
        `--data-dir=${join(dataDir, 'data')}`,
        `--listen-client-urls=${client}`,
        `--advertise-client-urls=${client}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=bench=${peer}`,
        `--cert-file=${files.cert}`,
        `--key-file=${files.key}`,
        '--logger=zap',
        '--log-level=error',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const etcd = new EtcdProcess(child, clientPort);
    let exited = false;
    void etcd.exitCode.then(() => (exited = true));
    const agent = new Agent({ ca: tls.ca, cert: tls.clientCert, key: tls.clientKey, keepAlive: false });
    const deadline = performance.now() + 30_000;
    try {
      for (;;) {
        if (exited) throw new Error(`etcd exited before it was healthy:\n${etcd.stderr}`);
        if (performance.now() > deadline) throw new Error(`etcd was not healthy within 30 s:\n${etcd.stderr}`);
        if (await healthy(agent, clientPort)) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    } catch (e) {
      child.kill('SIGKILL');
      throw e;
    } finally {
      agent.destroy();
    }
    return etcd;
  }

  get url(): string {
    return `https://127.0.0.1:${this.clientPort}`;
  }

  get pid(): number {
    return this.child.pid!;
  }

  async stop(): Promise<void> {
    this.child.kill('SIGTERM');
    await this.exitCode;
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
