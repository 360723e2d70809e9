// bench/targets/ceiling-process owns the bench's side of the ceiling baseline process: start
// it with the real server's TLS material, register captured responses, stop it.
// Imports: targets/ceiling-main (types), support/project-root.

import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { distModule } from '../support/project-root.js';
import type { CeilingRoute, CeilingWatchEmit, FromCeiling, ToCeiling } from './ceiling-main.js';

/** Response headers that belong to one connection or one moment, not to the response's bytes. */
const PER_EXCHANGE_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

export class CeilingProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    private readonly scratchDir: string,
  ) {}

  private watchPort: number | undefined;

  static async start(tls: { cert: string; key: string; ca: string }, scratchDir: string): Promise<CeilingProcess> {
    const child = fork(distModule('bench/targets/ceiling-main.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const m = await ask(child, { type: 'listen', ...tls });
    if (m.type !== 'listening') throw new Error(`ceiling: ${JSON.stringify(m)}`);
    return new CeilingProcess(child, m.port, scratchDir);
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Serves `body` (with the real response's status and headers) for `method path`. */
  async route(method: string, path: string, status: number, headers: Record<string, string | string[] | undefined>, body: Buffer): Promise<void> {
    const bodyFile = join(this.scratchDir, `ceiling-${Math.random().toString(36).slice(2)}.body`);
    writeFileSync(bodyFile, body);
    const kept: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (v !== undefined && !PER_EXCHANGE_HEADERS.has(k)) kept[k] = Array.isArray(v) ? v.join(', ') : v;
    const route: CeilingRoute = { method, path, status, headers: kept, bodyFile };
    const m = await ask(this.child, { type: 'route', route });
    if (m.type !== 'routed') throw new Error(`ceiling: ${JSON.stringify(m)}`);
  }

  /** Starts the HTTP/2 server (once): the routes, and watch streams on any other path; its URL. */
  async http2Url(): Promise<string> {
    if (this.watchPort === undefined) {
      const m = await ask(this.child, { type: 'watch-listen' });
      if (m.type !== 'listening') throw new Error(`ceiling: ${JSON.stringify(m)}`);
      this.watchPort = m.port;
    }
    return `https://127.0.0.1:${this.watchPort}`;
  }

  /** Emits watch events to every open watch stream; `onAcks` gets [revision, built at] pairs. */
  emitWatchEvents(job: Omit<CeilingWatchEmit, 'type'>, onAcks: (acks: [number, number][]) => void): Promise<{ count: number; elapsedMs: number }> {
    return new Promise((resolve, reject) => {
      const onExit = () => reject(new Error('ceiling process exited'));
      const onMessage = (raw: unknown) => {
        const m = raw as FromCeiling;
        if (m.type === 'acks') return onAcks(m.acks);
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        if (m.type === 'emitted') resolve(m);
        else reject(new Error(`ceiling: ${JSON.stringify(m)}`));
      };
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      this.child.send({ type: 'watch-emit', ...job } satisfies ToCeiling);
    });
  }

  async stop(): Promise<void> {
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    await gone;
  }
}

function ask(child: ChildProcess, m: ToCeiling): Promise<FromCeiling> {
  return new Promise((resolve, reject) => {
    const onExit = () => reject(new Error('ceiling process exited'));
    child.once('exit', onExit);
    child.once('message', (r) => {
      child.off('exit', onExit);
      resolve(r as FromCeiling);
    });
    child.send(m);
  });
}
