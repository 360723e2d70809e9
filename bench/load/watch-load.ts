// bench/load/watch-load owns the watchers of the watch scenario and the paced writer that
// feeds them. Watchers parse only what they need from each event line (type, the object's
// resourceVersion, the embedded send time) and measure delivery latency two ways: from the
// writer's acknowledgement of that resourceVersion (acks arrive from the writer process via
// the parent) and from the send time written into the object. Runs inside generator
// processes. Imports: load/protocol, load/request-template, load/http-load, support/latency.

import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { request as httpsRequest, type Agent } from 'node:https';
import { LatencyRecorder } from '../support/latency.js';
import { exchange, tlsAgent, tlsOptions } from './http-load.js';
import { wallClockMs, type WatchJob, type WatchResult, type WriterJob, type WriterResult } from './protocol.js';
import { compileTemplate, type RenderedRequest } from './request-template.js';

const RESOURCE_VERSION = /"resourceVersion":"(\d+)"/;
const TYPE_KEY = Buffer.from('{"type":"');
const RESOURCE_VERSION_KEY = Buffer.from('"resourceVersion":"');
const SENT_AT_KEY = Buffer.from('"bench/sent-at":"');

/** The string value after `key` (which ends with an opening quote) within buf[start, end). */
function readQuoted(buf: Buffer, start: number, end: number, key: Buffer): string | undefined {
  const at = buf.indexOf(key, start);
  if (at < 0 || at >= end) return undefined;
  const from = at + key.length;
  const close = buf.indexOf(34, from);
  return close < 0 || close > end ? undefined : buf.toString('latin1', from, close);
}

/**
 * The decimal number (digits and at most one point) in the quoted value after `key`, read
 * byte by byte: a string per field per event would cost more than the rest of the parse.
 */
function readNumber(buf: Buffer, start: number, end: number, key: Buffer): number | undefined {
  const at = buf.indexOf(key, start);
  if (at < 0 || at >= end) return undefined;
  let i = at + key.length;
  let whole = 0;
  let digits = 0;
  for (; i < end; i++, digits++) {
    const c = buf[i]!;
    if (c < 48 || c > 57) break;
    whole = whole * 10 + (c - 48);
  }
  if (digits === 0) return undefined;
  if (buf[i] === 46) {
    let scale = 1;
    for (i++; i < end; i++) {
      const c = buf[i]!;
      if (c < 48 || c > 57) break;
      scale /= 10;
      whole += (c - 48) * scale;
    }
  }
  return buf[i] === 34 ? whole : undefined;
}

/** Each event type with its closing quote, as it follows TYPE_KEY. */
const EVENT_TYPES = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'].map((t) => ({ type: t, bytes: Buffer.from(`${t}"`) }));

/** The event's type when the line starts as the server frames events, else by search. */
function eventType(buf: Buffer, start: number, end: number): string {
  if (buf.compare(TYPE_KEY, 0, TYPE_KEY.length, start, start + TYPE_KEY.length) === 0) {
    const from = start + TYPE_KEY.length;
    for (const t of EVENT_TYPES) {
      if (from + t.bytes.length <= end && buf.compare(t.bytes, 0, t.bytes.length, from, from + t.bytes.length) === 0) return t.type;
    }
  }
  return readQuoted(buf, start, end, TYPE_KEY) ?? 'UNPARSED';
}

/** The annotation writers embed their send time in (wall-clock ms). */
export const SENT_AT_ANNOTATION = 'bench/sent-at';

interface Stream {
  close(): void;
}

export class WatchFleet {
  private readonly fromAck = new LatencyRecorder();
  private readonly fromSend = new LatencyRecorder();
  private readonly events: Record<string, number> = {};
  private readonly ackTimes = new Map<number, number>();
  private readonly waitingForAck = new Map<number, number[]>();
  private readonly streams: Stream[] = [];
  private readonly sessions: ClientHttp2Session[] = [];
  private agent: Agent | undefined;
  private delivered = 0;
  /** Events sent before this wall-clock time are not measured (warm-up). */
  private measureFrom = 0;
  private closedEarly = 0;
  private finishing = false;
  private established = 0;
  private failed = 0;
  private firstError: string | undefined;
  private cpuAtReady: NodeJS.CpuUsage | undefined;
  private readyAt = 0;
  private onDelivery: (() => void) | undefined;

  constructor(private readonly job: WatchJob) {}

  /** Events received so far, of every type (for progress reports while it runs). */
  get received(): number {
    let n = 0;
    for (const v of Object.values(this.events)) n += v;
    return n;
  }

  /** Opens every watcher; resolves once each has its response headers or failed. */
  async open(): Promise<{ established: number; failed: number; firstError?: string }> {
    const { job } = this;
    const base = new URL(job.baseUrl);
    const paths = Array.from({ length: job.watchers }, (_, w) => job.path.replaceAll('{w}', String(w + (job.firstIndex ?? 0))));
    if (job.protocol === 'http2') {
      const sessionCount = Math.ceil(job.watchers / job.streamsPerSession);
      for (let s = 0; s < sessionCount; s++) {
        // Flow-control windows as Go's HTTP/2 client sets them (client-go: 4 MiB per stream,
        // 1 GiB per connection); Node's 64 KiB defaults would make the client the bottleneck.
        const session = http2Connect(base.origin, { ...tlsOptions(job.tls), settings: { initialWindowSize: 4 * 1024 * 1024 } });
        session.on('connect', () => session.setLocalWindowSize(1024 * 1024 * 1024));
        session.on('error', (e) => (this.firstError ??= e.message));
        this.sessions.push(session);
      }
      await Promise.all(paths.map((p, i) => this.openHttp2(this.sessions[Math.floor(i / job.streamsPerSession)]!, p)));
    } else {
      this.agent = tlsAgent(job.tls, Infinity);
      // Bounded concurrency while connecting, so the listen backlog is not overrun.
      let next = 0;
      const opener = async () => {
        while (next < paths.length) await this.openHttp1(base, paths[next++]!);
      };
      await Promise.all(Array.from({ length: 32 }, opener));
    }
    this.cpuAtReady = process.cpuUsage();
    this.readyAt = performance.now();
    return { established: this.established, failed: this.failed, ...(this.firstError ? { firstError: this.firstError } : {}) };
  }

  private openHttp2(session: ClientHttp2Session, path: string): Promise<void> {
    return new Promise((resolve) => {
      const stream = session.request({ ...this.job.headers, ':method': 'GET', ':path': path });
      let settled = false;
      const settle = (ok: boolean, why?: string) => {
        if (settled) return;
        settled = true;
        if (ok) this.established++;
        else {
          this.failed++;
          this.firstError ??= why;
        }
        resolve();
      };
      stream.on('response', (headers) => {
        const status = Number(headers[':status']);
        settle(status === 200, `watch ${path} answered ${status}`);
      });
      this.consume(stream, () => settle(false, `watch ${path} ended before its headers`));
      stream.on('error', (e) => settle(false, e.message));
      this.streams.push({ close: () => stream.close() });
    });
  }

  private openHttp1(base: URL, path: string): Promise<void> {
    return new Promise((resolve) => {
      const req = httpsRequest({ host: base.hostname, port: base.port, path, method: 'GET', agent: this.agent, headers: this.job.headers }, (res) => {
        if (res.statusCode === 200) this.established++;
        else {
          this.failed++;
          this.firstError ??= `watch ${path} answered ${res.statusCode}`;
        }

        this.consume(res, () => undefined);
        resolve();
      });
      req.on('error', (e) => {
        this.failed++;
        this.firstError ??= e.message;
        resolve();
      });
      req.end();
      this.streams.push({ close: () => req.destroy() });
    });
  }

  /**
   * Splits the stream into events on Buffers and reads only the few fields it needs, by byte
   * search: decoding a gigabyte per second into strings and running regular expressions over
   * whole objects made the watcher process the bottleneck of the machine the server shares.
   * An event split across chunks is joined from its two pieces only; the rest of each chunk is
   * read in place.
   */
  private consume(stream: NodeJS.ReadableStream, onEndBeforeHeaders: () => void): void {
    let pending: Buffer | undefined;
    stream.on('data', (chunk: Buffer) => {
      const now = wallClockMs();
      let start = 0;
      if (pending) {
        const nl = chunk.indexOf(10);
        if (nl < 0) {
          pending = Buffer.concat([pending, chunk]);
          return;
        }
        const joined = Buffer.concat([pending, chunk.subarray(0, nl)]);
        pending = undefined;
        this.onEventBytes(joined, 0, joined.length, now);
        start = nl + 1;
      }
      for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
        this.onEventBytes(chunk, start, nl, now);
        start = nl + 1;
      }
      if (start < chunk.length) pending = chunk.subarray(start);
    });
    stream.on('end', () => {
      onEndBeforeHeaders();
      if (!this.finishing) this.closedEarly++;
    });
  }

  private onEventBytes(buf: Buffer, start: number, end: number, receivedAt: number): void {
    const type = eventType(buf, start, end);
    this.events[type] = (this.events[type] ?? 0) + 1;
    if (type !== 'ADDED' && type !== 'MODIFIED') return;
    const sentAt = readNumber(buf, start, end, SENT_AT_KEY);
    if (sentAt === undefined) return;
    this.delivered++;
    this.onDelivery?.();
    if (sentAt < this.measureFrom) return;
    this.fromSend.record(Math.max(0, receivedAt - sentAt));
    const rv = readNumber(buf, start, end, RESOURCE_VERSION_KEY) ?? NaN;
    const ackedAt = this.ackTimes.get(rv);
    if (ackedAt !== undefined) this.fromAck.record(Math.max(0, receivedAt - ackedAt));
    else {
      const waiting = this.waitingForAck.get(rv);
      if (waiting) waiting.push(receivedAt);
      else this.waitingForAck.set(rv, [receivedAt]);
    }
  }

  /** Events sent before `untilMs` (wall clock) count as delivered but not in the latencies. */
  warmUntil(untilMs: number): void {
    this.measureFrom = untilMs;
  }

  /** Acknowledgements from the writer: [resourceVersion, wall-clock ms]. */
  acks(pairs: [number, number][]): void {
    for (const [rv, at] of pairs) {
      this.ackTimes.set(rv, at);
      const waiting = this.waitingForAck.get(rv);
      if (!waiting) continue;
      this.waitingForAck.delete(rv);
      for (const receivedAt of waiting) this.fromAck.record(Math.max(0, receivedAt - at));
    }
  }

  /** Waits for `expected` deliveries (or `drainMs`), closes every stream, reports. */
  async finish(expected: number, drainMs: number): Promise<WatchResult> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, drainMs);
      const check = () => {
        if (this.delivered >= expected) {
          clearTimeout(timer);
          resolve();
        }
      };
      this.onDelivery = check;
      check();
    });
    this.onDelivery = undefined;
    const cpu = process.cpuUsage(this.cpuAtReady);
    const elapsed = performance.now() - this.readyAt;
    this.finishing = true;
    for (const s of this.streams) s.close();
    for (const s of this.sessions) s.destroy();
    this.agent?.destroy();
    return {
      established: this.established,
      failedToEstablish: this.failed,
      ...(this.firstError ? { firstError: this.firstError } : {}),
      events: this.events,
      closedEarly: this.closedEarly,
      fromAck: this.fromAck.summary(),
      fromSend: this.fromSend.summary(),
      fromAckHistogram: this.fromAck.toJSON(),
      fromSendHistogram: this.fromSend.toJSON(),
      expected,
      delivered: this.delivered,
      generatorCpu: elapsed > 0 ? (cpu.user + cpu.system) / 1000 / elapsed : 0,
    };
  }
}

/**
 * Writes at a fixed rate (open loop: the schedule does not wait for responses, up to
 * `maxInFlight` outstanding). Calls `onAcks` every `ackIntervalMs` with the resourceVersion and
 * acknowledgement time of each successful write.
 */
export async function runWriter(job: WriterJob, onAcks: (acks: [number, number][]) => void): Promise<WriterResult> {
  const base = new URL(job.baseUrl);
  const agent = tlsAgent(job.tls, job.maxInFlight);
  const render = compileTemplate(job.request, job.modulo ?? 1);
  const ok = new Set(job.okStatus);
  const latency = new LatencyRecorder();
  const errors: Record<string, number> = {};
  let firstError: string | undefined;
  let pendingAcks: [number, number][] = [];
  let inFlight = 0;
  let sent = 0;
  let okCount = 0;
  let late = 0;
  let n = job.startIndex ?? 0;
  const total = Math.round((job.ratePerSec * job.durationMs) / 1000);
  // Every connection the writer may use is opened (TLS handshake included) before the schedule
  // starts, so the first writes do not carry handshakes with a server busy fanning out.
  const version: RenderedRequest = { method: 'GET', path: '/version', headers: {}, body: undefined };
  await Promise.all(Array.from({ length: job.maxInFlight }, () => exchange(agent, base, version).catch(() => undefined)));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const flush = setInterval(() => {
    if (pendingAcks.length) onAcks(pendingAcks);
    pendingAcks = [];
  }, job.ackIntervalMs);
  const outstanding = new Set<Promise<void>>();

  const write = (index: number) => {
    inFlight++;
    sent++;
    const started = performance.now();
    const p = exchange(agent, base, render(index), true)
      .then((r) => {
        latency.record(performance.now() - started);
        if (ok.has(r.status)) {
          okCount++;
          const rv = Number(RESOURCE_VERSION.exec(r.body!.toString('utf8'))?.[1]);
          pendingAcks.push([rv, wallClockMs()]);
        } else {
          errors[r.status] = (errors[r.status] ?? 0) + 1;
          firstError ??= `status ${r.status}: ${r.body!.toString('utf8').slice(0, 300)}`;
        }
      })
      .catch((e: Error) => {
        errors[e.name] = (errors[e.name] ?? 0) + 1;
        firstError ??= e.message;
      })
      .finally(() => {
        inFlight--;
        outstanding.delete(p);
      });
    outstanding.add(p);
  };

  // A 1 ms tick issues every write whose scheduled time has come.
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) * job.ratePerSec) / 1000) + 1);
      while (sent < due) {
        if (inFlight >= job.maxInFlight) {
          late++;
          break;
        }
        write(n++);
      }
      if (sent >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 1);
  });
  while (outstanding.size) await Promise.all([...outstanding]);
  clearInterval(flush);
  if (pendingAcks.length) onAcks(pendingAcks);
  const elapsedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  agent.destroy();
  return {
    sent,
    ok: okCount,
    errors,
    ...(firstError ? { firstError } : {}),
    late,
    elapsedMs,
    latency: latency.summary(),
    generatorCpu: (cpu.user + cpu.system) / 1000 / elapsedMs,
  };
}
