// bench/load/native-watch owns driving the native watch client (bench/native/h2watch.c) from a
// generator process: it writes the job's TLS material to a private temporary directory, starts
// the binary, relays warm-up and acknowledgements as control lines, and turns its result line
// into a WatchResult. Same surface as WatchFleet, so the scenario does not care which client
// runs. Imports: load/protocol, support/latency, support/project-root.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { LatencyRecorder, type SerializedLatency } from '../support/latency.js';
import { distModule } from '../support/project-root.js';
import type { WatchJob, WatchResult } from './protocol.js';

type Ready = { type: 'ready'; established: number; failed: number; firstError?: string };
type Result = Omit<WatchResult, 'fromAck' | 'fromSend'> & { type: 'result'; fromAckHistogram: SerializedLatency; fromSendHistogram: SerializedLatency };

/** The compiled client, built by `make bench-native`. */
export function nativeWatchBinary(): string {
  return distModule('bench/native/h2watch');
}

export class NativeWatchFleet {
  private child: ChildProcess | undefined;
  private dir: string | undefined;
  private readonly lines: string[] = [];
  private waiter: ((line: string | undefined) => void) | undefined;
  private stderr = '';

  constructor(private readonly job: WatchJob) {}

  async open(): Promise<{ established: number; failed: number; firstError?: string }> {
    const { job } = this;
    if (job.protocol !== 'http2') throw new Error('the native watch client speaks HTTP/2 only');
    const base = new URL(job.baseUrl);
    this.dir = mkdtempSync(join(tmpdir(), 'h2watch-'));
    const file = (name: string, pem: string) => {
      const path = join(this.dir!, name);
      writeFileSync(path, pem, { mode: 0o600 });
      return path;
    };
    const args = ['--host', base.hostname, '--port', base.port, '--ca', file('ca.pem', job.tls.ca), '--path', job.path, '--watchers', String(job.watchers)];
    args.push('--first-index', String(job.firstIndex ?? 0), '--streams-per-session', String(job.streamsPerSession));
    if (job.tls.cert && job.tls.key) args.push('--cert', file('cert.pem', job.tls.cert), '--key', file('key.pem', job.tls.key));
    const child = spawn(nativeWatchBinary(), args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    child.stderr!.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString('utf8')).slice(-2000)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const w = this.waiter;
      this.waiter = undefined;
      if (w) w(line);
      else this.lines.push(line);
    });
    child.on('exit', () => {
      const w = this.waiter;
      this.waiter = undefined;
      w?.(undefined);
    });
    const ready = JSON.parse(await this.nextLine('ready')) as Ready;
    return { established: ready.established, failed: ready.failed, ...(ready.firstError ? { firstError: ready.firstError } : {}) };
  }

  private nextLine(what: string): Promise<string> {
    const queued = this.lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (!this.child || this.child.exitCode !== null) return Promise.reject(new Error(`h2watch exited before its ${what} line: ${this.stderr.trim()}`));
    return new Promise((resolve, reject) => {
      this.waiter = (line) => (line === undefined ? reject(new Error(`h2watch exited before its ${what} line: ${this.stderr.trim()}`)) : resolve(line));
    });
  }

  private control(line: string): void {
    this.child?.stdin!.write(`${line}\n`);
  }

  warmUntil(untilMs: number): void {
    this.control(`warm ${untilMs}`);
  }

  acks(pairs: [number, number][]): void {
    if (pairs.length) this.control(`acks ${pairs.map(([rv, at]) => `${rv} ${at}`).join(' ')}`);
  }

  async finish(expected: number, drainMs: number): Promise<WatchResult> {
    this.control(`finish ${expected} ${drainMs}`);
    try {
      const r = JSON.parse(await this.nextLine('result')) as Result;
      const { type: _type, ...result } = r;
      return {
        ...result,
        fromAck: LatencyRecorder.from(r.fromAckHistogram).summary(),
        fromSend: LatencyRecorder.from(r.fromSendHistogram).summary(),
      };
    } finally {
      this.child?.kill();
      if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
