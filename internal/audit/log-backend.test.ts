// The queue in front of the audit log against a real FIFO whose reader does not read (a
// stalled consumer): the pipe fills, the writer's write blocks, and the queue must neither hold
// requests up without bound nor lose events without counting them.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../log/logger.js';
import { AuditMetrics, LogBackend, type AuditMode } from './log-backend.js';
import { RotatingFile } from './rotating-file.js';

const silent = createLogger('error', () => {});

async function counter(metrics: AuditMetrics, which: 'events' | 'errors', labels: Record<string, string> = {}): Promise<number> {
  const got = await metrics[which].get();
  return got.values.filter((v) => Object.entries(labels).every(([k, l]) => (v.labels as Record<string, string | number | undefined>)[k] === l)).reduce((n, v) => n + v.value, 0);
}

interface Fifo {
  path: string;
  /** Reads what is in the pipe now (non-blocking). */
  drain(): string;
  close(): void;
}

function makeFifo(): Fifo {
  const path = join(mkdtempSync(join(tmpdir(), 'audit-fifo-')), 'audit.pipe');
  execFileSync('mkfifo', [path]);
  // The reader end is open (so opening for writing does not wait) but nothing reads yet.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const buf = Buffer.alloc(1 << 16);
  return {
    path,
    drain() {
      let out = '';
      for (;;) {
        try {
          const n = readSync(fd, buf, 0, buf.length, null);
          if (n <= 0) return out;
          out += buf.toString('utf8', 0, n);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'EAGAIN') return out;
          throw e;
        }
      }
    },
    close: () => closeSync(fd),
  };
}

const LINE = 'x'.repeat(199);
const pipes: Fifo[] = [];
afterEach(() => {
  for (const p of pipes.splice(0)) p.close();
});

async function backendOn(mode: AuditMode, bufferSize: number, blockingTimeoutMs = 50) {
  const fifo = makeFifo();
  pipes.push(fifo);
  const metrics = new AuditMetrics(new Registry());
  const sink = await RotatingFile.open(fifo.path, { maxSizeBytes: 0, maxBackups: 0, maxAgeDays: 0 });
  const backend = new LogBackend(sink, { mode, bufferSize, batchMaxSize: 4, batchMaxWaitMs: 0, blockingTimeoutMs, metrics, log: silent });
  return { fifo, metrics, backend };
}

/** Reads the FIFO until `count` lines arrived. */
async function readLines(fifo: Fifo, count: number): Promise<string[]> {
  let text = '';
  while (text.split('\n').length - 1 < count) {
    text += fifo.drain();
    await new Promise((r) => setImmediate(r));
  }
  return text.split('\n').slice(0, -1);
}

describe('LogBackend with a stalled reader', () => {
  it('batch: a full queue drops at once and counts every drop; what was queued is written', async () => {
    const { fifo, metrics, backend } = await backendOn('batch', 8);
    const total = 3000; // 600 KB: far more than the pipe holds
    let queued = 0;
    for (let i = 0; i < total; i++) {
      const r = backend.enqueue(`${String(i).padStart(4, '0')}${LINE}`);
      expect(typeof r).toBe('boolean'); // never makes the request wait
      if (r === true) queued++;
      if (i % 50 === 0) await new Promise((res) => setImmediate(res));
    }
    const dropped = await counter(metrics, 'errors', { plugin: 'buffered' });
    expect(dropped).toBeGreaterThan(0);
    expect(queued + dropped).toBe(total);
    expect(await counter(metrics, 'events')).toBe(total);
    // Once the reader reads, everything queued arrives, in order.
    const lines = await readLines(fifo, queued);
    expect(lines).toHaveLength(queued);
    const ids = lines.map((l) => Number(l.slice(0, 4)));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    await backend.close(1000);
  });

  it('blocking: a request waits for room at most the bound, then its event is dropped and counted', async () => {
    const { fifo, metrics, backend } = await backendOn('blocking', 4, 50);
    // Enqueue until a wait ends without room: the pipe is full and the queue with it.
    let queued = true;
    let sent = 0; // bounded, in case the pipe never filled
    while (queued && sent < 5000) {
      const r = backend.enqueue(`${String(sent++).padStart(4, '0')}${LINE}`);
      queued = r === true ? true : await r;
    }
    expect(queued).toBe(false);
    expect(await counter(metrics, 'errors', { plugin: 'log' })).toBe(1);
    // A waiting request gets its room as soon as the reader makes some.
    const late = backend.enqueue(`late${LINE}`);
    expect(late).toBeInstanceOf(Promise);
    fifo.drain();
    expect(await late).toBe(true);
    expect(await counter(metrics, 'errors', { plugin: 'log' })).toBe(1);
    await backend.close(1000);
  });

  it('close: waits a bounded time for a stuck sink, then counts what is left', async () => {
    const { metrics, backend } = await backendOn('batch', 100);
    // 100 queued lines of 4 KiB are more than the pipe holds, whatever the writer managed.
    const big = 'y'.repeat(4096);
    for (let i = 0; i < 2000; i++) {
      backend.enqueue(big);
      if (i % 20 === 0) await new Promise((res) => setImmediate(res));
    }
    const before = await counter(metrics, 'errors');
    await backend.close(100);
    expect(await counter(metrics, 'errors', { plugin: 'log' })).toBeGreaterThan(0);
    expect(await counter(metrics, 'errors')).toBeGreaterThan(before);
    expect(backend.enqueue(LINE)).toBe(false);
  });
});
