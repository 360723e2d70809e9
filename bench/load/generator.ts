// bench/load/generator owns the bench's side of a load-generator process: fork it, hand it a
// job, await its result; for watch jobs, relay acknowledgements and tell it when to finish.
// Imports: load/protocol, support/project-root.

import { fork, type ChildProcess } from 'node:child_process';
import { distModule } from '../support/project-root.js';
import type { EtcdJob, FromGenerator, HttpJob, HttpLoadResult, Job, JobResult, ToGenerator, WatchJob, WatchResult, WriterJob, WriterResult } from './protocol.js';

export class GeneratorProcess {
  private waiting: { resolve(m: FromGenerator): void; reject(e: Error): void; type: FromGenerator['type'] } | undefined;
  private exited = false;
  /** Called with acknowledgements a writer job reports while it runs. */
  onAcks: ((acks: [number, number][]) => void) | undefined;

  private constructor(readonly child: ChildProcess) {
    child.on('message', (raw) => {
      const m = raw as FromGenerator;
      if (m.type === 'acks') return this.onAcks?.(m.acks);
      const w = this.waiting;
      if (!w) return;
      this.waiting = undefined;
      if (m.type === 'error') w.reject(new Error(`load generator failed: ${m.message}`));
      else w.resolve(m);
    });
    child.on('exit', (code, signal) => {
      this.exited = true;
      const w = this.waiting;
      this.waiting = undefined;
      w?.reject(new Error(`load generator exited (${code ?? signal})`));
    });
  }

  static start(): GeneratorProcess {
    // A larger heap: a watch job buffers up to millions of event lines. No deprecation warnings: grpc-js
    // warns that it sets an IP address as TLS server name, which is etcd's loopback address.
    const child = fork(distModule('bench/load/generator-main.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: ['--max-old-space-size=2048', '--no-deprecation'] });
    return new GeneratorProcess(child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  private request(message: ToGenerator, expect: FromGenerator['type']): Promise<FromGenerator> {
    if (this.exited) return Promise.reject(new Error('load generator is not running'));
    if (this.waiting) return Promise.reject(new Error('load generator is busy'));
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject, type: expect };
      this.child.send(message);
    });
  }

  async run(job: HttpJob | EtcdJob): Promise<HttpLoadResult>;
  async run(job: WriterJob): Promise<WriterResult>;
  async run(job: Job): Promise<JobResult> {
    const m = await this.request({ type: 'run', job }, 'result');
    if (m.type !== 'result') throw new Error(`load generator answered ${m.type}`);
    return m.result;
  }

  /** Opens the watchers of a watch job; resolves once they are established (or failed). */
  async openWatchers(job: WatchJob): Promise<{ established: number; failed: number; firstError?: string }> {
    const m = await this.request({ type: 'run', job }, 'ready');
    if (m.type !== 'ready') throw new Error(`load generator answered ${m.type}`);
    return m;
  }

  /** Events of the running watch job sent before `untilMs` (wall clock) are a warm-up. */
  warmUntil(untilMs: number): void {
    if (!this.exited) this.child.send({ type: 'warmup', untilMs } satisfies ToGenerator);
  }

  relayAcks(acks: [number, number][]): void {
    if (!this.exited) this.child.send({ type: 'acks', acks } satisfies ToGenerator);
  }

  async finishWatchers(expected: number, drainMs: number): Promise<WatchResult> {
    const m = await this.request({ type: 'finish', expected, drainMs }, 'result');
    if (m.type !== 'result') throw new Error(`load generator answered ${m.type}`);
    return m.result as WatchResult;
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    await gone;
  }
}
