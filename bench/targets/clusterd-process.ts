// bench/targets/clusterd-process owns running the server under test for the bench: the built
// entry point (dist/cmd/clusterd/main.js) with LevelDB and fsync (the defaults), on a loopback
// port picked beforehand, timed from spawn to the first /readyz 200; restartable on the same
// data directory and port, and killable with SIGKILL (a replica of a cluster, see
// targets/clusterd-cluster). Imports: load/protocol (types), support/*, targets/free-port.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import type { TlsMaterial } from '../load/protocol.js';
import { issueCertificate, loadCertificateAuthority } from '../../internal/pki/certificates.js';
import { distModule } from '../support/project-root.js';
import { readMemory, type MemorySample } from '../support/proc-stats.js';
import { freePort } from './free-port.js';

export interface ClusterdStart {
  server: ClusterdProcess;
  /** Spawn to the first /readyz answered 200, in milliseconds. */
  readyMs: number;
}

export class ClusterdProcess {
  private exitCode: Promise<number | null>;
  private stderr = '';
  private exitedFlag = false;
  /** Where the admin certificate and the CA are: --pki-dir when given, else <data-dir>/pki. */
  readonly pkiDir: string;

  private constructor(
    readonly child: ChildProcess,
    readonly dataDir: string,
    readonly port: number,
    readonly args: string[],
    /** The server's entry module (another checkout's, for side-by-side runs); this build's by default. */
    readonly entry: string | undefined,
  ) {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      // Keep the tail only: a long run must not grow the bench's own memory.
      this.stderr = (this.stderr + d).slice(-20_000);
    });
    child.stdout!.resume();
    this.exitCode = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    void this.exitCode.then(() => (this.exitedFlag = true));
    const pkiArg = args.find((a) => a.startsWith('--pki-dir='));
    this.pkiDir = pkiArg ? pkiArg.slice('--pki-dir='.length) : join(dataDir, 'pki');
  }

  /**
   * Starts the server and waits for /readyz; throws with its stderr if it exits first. `entry`:
   * another build's dist/cmd/clusterd/main.js (bench/ab-writes), this one's by default.
   */
  static async start(dataDir: string, args: string[] = [], port?: number, entry?: string): Promise<ClusterdStart> {
    const p = port ?? (await freePort());
    const t0 = performance.now();
    const child = spawn(process.execPath, [...serverNodeFlags(), entry ?? distModule('cmd/clusterd/main.js'), `--data-dir=${dataDir}`, `--secure-port=${p}`, '--bind-address=127.0.0.1', ...args, ...serverArgs()], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new ClusterdProcess(child, dataDir, p, args, entry);
    let exited = false;
    void server.exitCode.then(() => (exited = true));
    const deadline = t0 + 120_000;
    const agent = new Agent({ keepAlive: false, rejectUnauthorized: false });
    try {
      for (;;) {
        if (exited) throw new Error(`clusterd exited before it was ready:\n${server.stderr}`);
        if (performance.now() > deadline) throw new Error(`clusterd was not ready within 120 s:\n${server.stderr}`);
        if ((await readyzStatus(agent, p)) === 200) break;
        await new Promise((r) => setTimeout(r, 5));
      }
    } catch (e) {
      child.kill('SIGKILL');
      throw e;
    } finally {
      agent.destroy();
    }
    return { server, readyMs: performance.now() - t0 };
  }

  get pid(): number {
    return this.child.pid!;
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** False once the process has exited (stopped, killed or crashed). */
  get running(): boolean {
    return !this.exitedFlag;
  }

  /** The admin's client certificate and the CA, as the load generators need them. */
  adminTls(): TlsMaterial {
    const pki = this.pkiDir;
    return { ca: readFileSync(join(pki, 'ca.crt'), 'utf8'), cert: readFileSync(join(pki, 'admin.crt'), 'utf8'), key: readFileSync(join(pki, 'admin.key'), 'utf8') };
  }

  /** A client certificate for `user` in `groups`, signed by the cluster CA (a non-admin identity). */
  async userTls(user: string, groups: string[]): Promise<TlsMaterial & { cert: string; key: string }> {
    const ca = readFileSync(join(this.pkiDir, 'ca.crt'), 'utf8');
    const authority = await loadCertificateAuthority(ca, readFileSync(join(this.pkiDir, 'ca.key'), 'utf8'));
    const { certPem, keyPem } = await issueCertificate(authority, { commonName: user, organizations: groups, usage: 'client' });
    return { ca, cert: certPem, key: keyPem };
  }

  /** The serving certificate and key, for baselines that must use the same TLS. */
  servingTls(): { cert: string; key: string; ca: string } {
    const pki = join(this.dataDir, 'pki');
    return { cert: readFileSync(join(pki, 'apiserver.crt'), 'utf8'), key: readFileSync(join(pki, 'apiserver.key'), 'utf8'), ca: readFileSync(join(pki, 'ca.crt'), 'utf8') };
  }

  memory(): MemorySample | undefined {
    return readMemory(this.pid);
  }

  logTail(): string {
    return this.stderr;
  }

  /** SIGTERM and wait for the process to exit. */
  async stop(): Promise<number | null> {
    this.child.kill('SIGTERM');
    return this.exitCode;
  }

  /** SIGKILL (no shutdown at all, as a crash) and wait for the process to be gone. */
  async kill(): Promise<number | null> {
    this.child.kill('SIGKILL');
    return this.exitCode;
  }

  /** Stops and starts again on the same data directory and port. */
  async restart(): Promise<ClusterdStart> {
    await this.stop();
    return ClusterdProcess.start(this.dataDir, this.args, this.port, this.entry);
  }
}

function readyzStatus(agent: Agent, port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/readyz', agent, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Extra clusterd flags for every server and replica the bench starts (for A/B runs: `--tls-threads=1`). */
function serverArgs(): string[] {
  return (process.env.BENCH_SERVER_ARGS ?? '').split(/\s+/).filter(Boolean);
}

/** Extra node flags for the server under test (for profiling: `--cpu-prof --cpu-prof-dir=…`). */
function serverNodeFlags(): string[] {
  return (process.env.BENCH_SERVER_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
}
