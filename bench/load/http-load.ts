// bench/load/http-load owns the closed-loop HTTP load generator: over HTTP/1.1 a node:https
// keep-alive agent with one socket per connection, each connection sending its next request as
// soon as the previous response has been read completely; over HTTP/2 (a job with
// streamsPerConnection) node:http2 sessions, each carrying that many such request loops as
// streams, as kubectl and client-go multiplex their requests. Runs inside a generator process.
// Imports: load/protocol, load/request-template, support/latency.

import { connect as connectHttp2, type ClientHttp2Session } from 'node:http2';
import { Agent, request } from 'node:https';
import { LatencyRecorder } from '../support/latency.js';
import type { HttpJob, HttpLoadResult, TlsMaterial } from './protocol.js';
import { MeasurementWindow } from './measurement-window.js';
import { compileTemplate, type RenderedRequest } from './request-template.js';

export function tlsAgent(tls: TlsMaterial, maxSockets: number): Agent {
  return new Agent({ ...tlsOptions(tls), keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'fifo' });
}

/** The TLS options of a connection with this material (server name and verification only when set). */
export function tlsOptions(tls: TlsMaterial): { ca: string; cert?: string; key?: string; servername?: string; rejectUnauthorized?: boolean } {
  return {
    ca: tls.ca,
    cert: tls.cert,
    key: tls.key,
    ...(tls.servername !== undefined ? { servername: tls.servername } : {}),
    ...(tls.rejectUnauthorized !== undefined ? { rejectUnauthorized: tls.rejectUnauthorized } : {}),
  };
}

export interface Exchange {
  status: number;
  bytes: number;
  /** The body when asked for (`keepBody`); the start of it for statuses ≥ 300. */
  body?: Buffer;
}

/**
 * One request over the agent; resolves when the whole response has arrived. With `timeoutMs`,
 * a request not answered completely by then is destroyed and rejects with code ETIMEDOUT.
 */
export function exchange(agent: Agent, base: URL, r: RenderedRequest, keepBody = false, timeoutMs?: number): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, agent, method: r.method, path: r.path, headers: r.headers }, (res) => {
      let bytes = 0;
      const chunks: Buffer[] = [];
      // Error bodies are kept (their start) so a failure can be explained.
      const keep = keepBody || (res.statusCode ?? 0) >= 300;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (keep && (keepBody || bytes <= 4096)) chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ...(keep ? { body: Buffer.concat(chunks) } : {}) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (timeoutMs !== undefined) {
      const timer = setTimeout(() => req.destroy(Object.assign(new Error(`no complete answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs);
      req.on('close', () => clearTimeout(timer));
    }
    req.end(r.body);
  });
}

/** One request on an HTTP/2 session; resolves when the whole response has arrived. */
function exchangeHttp2(session: ClientHttp2Session, r: RenderedRequest): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ':method': r.method, ':path': r.path };
    for (const [k, v] of Object.entries(r.headers ?? {})) headers[k.toLowerCase()] = v;
    const stream = session.request(headers, { endStream: r.body === undefined });
    let status = 0;
    let bytes = 0;
    let keep = false;
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[':status'] ?? 0);
      keep = status >= 300;
    });
    stream.on('data', (c: Buffer) => {
      bytes += c.length;
      if (keep && bytes <= 4096) chunks.push(c);
    });
    stream.on('end', () => resolve({ status, bytes, ...(keep ? { body: Buffer.concat(chunks) } : {}) }));
    stream.on('error', reject);
    if (r.body !== undefined) stream.end(r.body);
  });
}

/** How a job's request loops reach the server: each loop sends on a connection of its own, or as a stream on a shared one. */
interface Transport {
  /** The connections' count, each to be primed once. */
  readonly connections: number;
  /** The connection request loop `loop` sends on. */
  connectionOf(loop: number): number;
  send(connection: number, r: RenderedRequest): Promise<Exchange>;
  close(): void;
}

function http1Transport(job: HttpJob, base: URL): Transport {
  const agent = tlsAgent(job.tls, job.connections);
  return {
    connections: job.connections,
    // The agent gives each request a free socket of its own.
    connectionOf: (loop) => loop,
    send: (_connection, r) => exchange(agent, base, r),
    close: () => agent.destroy(),
  };
}

function http2Transport(job: HttpJob, streams: number): Transport {
  const count = Math.max(1, Math.ceil(job.connections / streams));
  const sessions = Array.from({ length: count }, () => {
    const s = connectHttp2(job.baseUrl, tlsOptions(job.tls));
    // A failed session fails its requests, which are counted; the event must not be unhandled.
    s.on('error', () => undefined);
    return s;
  });
  return {
    connections: count,
    connectionOf: (loop) => Math.floor(loop / streams) % count,
    send: (connection, r) => exchangeHttp2(sessions[connection]!, r),
    close: () => {
      for (const s of sessions) s.destroy();
    },
  };
}

export async function runHttpLoad(job: HttpJob): Promise<HttpLoadResult> {
  const base = new URL(job.baseUrl);
  const transport = job.streamsPerConnection !== undefined ? http2Transport(job, Math.max(1, job.streamsPerConnection)) : http1Transport(job, base);
  const render = compileTemplate(job.request, job.modulo ?? 1);
  const ok = new Set(job.okStatus);
  const latency = new LatencyRecorder();
  const errors: Record<string, number> = {};
  let firstError: string | undefined;
  let next = job.startIndex ?? 0;
  const last = job.requests === undefined ? Infinity : next + job.requests;
  let measured = 0;
  let okCount = 0;
  let bytesIn = 0;

  if (job.prime) {
    // One request per connection at once opens them all; they are kept for the run.
    const prime = compileTemplate(job.prime)(0);
    await Promise.all(Array.from({ length: transport.connections }, (_, i) => transport.send(i, prime).catch(() => undefined)));
  }
  const measuring = new MeasurementWindow(job);

  const loop = async (index: number) => {
    const connection = transport.connectionOf(index);
    for (;;) {
      const now = performance.now();
      if (next >= last || !measuring.beforeRequest(now)) return;
      const n = next++;
      const started = performance.now();
      let outcome: string;
      let bytes = 0;
      try {
        const r = await transport.send(connection, render(n));
        bytes = r.bytes;
        outcome = ok.has(r.status) ? 'ok' : String(r.status);
        if (outcome !== 'ok') firstError ??= `status ${r.status} for request ${n}: ${r.body?.toString('utf8').slice(0, 400) ?? ''}`;
      } catch (e) {
        outcome = (e as NodeJS.ErrnoException).code ?? 'error';
        firstError ??= (e as Error).message;
      }
      const ended = performance.now();
      if (!measuring.counts(started, ended)) continue;
      measured++;
      bytesIn += bytes;
      latency.record(ended - started);
      if (outcome === 'ok') okCount++;
      else {
        errors[outcome] = (errors[outcome] ?? 0) + 1;
        firstError ??= `status ${outcome} for request ${n}`;
      }
    }
  };
  await Promise.all(Array.from({ length: job.connections }, (_, i) => loop(i)));
  const { elapsedMs, generatorCpu } = measuring.close();
  transport.close();
  return {
    requests: measured,
    ok: okCount,
    errors,
    ...(firstError ? { firstError } : {}),
    elapsedMs,
    okPerSecond: elapsedMs > 0 ? (okCount * 1000) / elapsedMs : 0,
    latency: latency.summary(),
    histogram: latency.toJSON(),
    bytesIn,
    nextIndex: next,
    generatorCpu,
  };
}
