// bench/targets/ceiling-main is the entry point of the ceiling baseline: a bare node:https
// server with the real server's certificate, key and client-certificate check, answering each
// route with bytes captured from the real server's response (status, headers, body) and
// doing nothing else. What it measures is the cost of TLS, HTTP/1.1 and the bytes themselves.
// Its HTTP/2 server answers the same routes (for the HTTP/2 GET row: TLS, HTTP/2 framing and the
// bytes). For the watch scenario that server also serves watch streams and emits, at a given rate,
// events made from a captured event's bytes: each batch of due events is built once and the
// same Buffer written to every stream as soon as the loop is free; a stream with more than
// 256 KiB buffered holds its batches (shared, not copied) until `drain`, as clusterd's watch
// streams wait (TLS, HTTP/2 framing and the bytes, nothing else). Both servers take clusterd's cipher preference, so the TLS they
// measure is the TLS clusterd negotiates. Configured over the IPC channel. Imports: node,
// internal/server/tls-ciphers.

import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { createSecureServer, type Http2SecureServer, type ServerHttp2Stream } from 'node:http2';
import { servingCipherPreference } from '../../internal/server/tls-ciphers.js';

export interface CeilingRoute {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  bodyFile: string;
}

/** Emit watch events: `{rv}` and `{ts}` in the template become the revision and the wall-clock ms. */
export interface CeilingWatchEmit {
  type: 'watch-emit';
  eventTemplate: string;
  ratePerSec: number;
  durationMs: number;
  firstRevision: number;
  ackIntervalMs: number;
}

export type ToCeiling = { type: 'listen'; cert: string; key: string; ca: string } | { type: 'route'; route: CeilingRoute } | { type: 'watch-listen' } | CeilingWatchEmit;
export type FromCeiling =
  | { type: 'listening'; port: number }
  | { type: 'routed' }
  /** Emitted events as [revision, wall-clock ms when built], reported while emitting. */
  | { type: 'acks'; acks: [number, number][] }
  | { type: 'emitted'; count: number; elapsedMs: number }
  | { type: 'error'; message: string };

if (!process.send) throw new Error('ceiling-main must be started with an IPC channel (child_process.fork)');

const routes = new Map<string, { status: number; headers: Record<string, string>; body: Buffer }>();
let server: Server | undefined;
let tls: { cert: string; key: string; ca: string } | undefined;
let watchServer: Http2SecureServer | undefined;
/** Each watch stream with the batches held back while its buffer is over HIGH_WATER. */
const watchStreams = new Map<ServerHttp2Stream, Buffer[]>();
/** As clusterd's watch pump: above this many buffered bytes a stream waits for `drain`. */
const HIGH_WATER = 256 * 1024;

/** Writes `batch` to `stream`, or holds it (with what is held already) until the stream drains. */
function writeBatch(stream: ServerHttp2Stream, held: Buffer[], batch: Buffer): void {
  if (held.length > 0 || stream.writableLength > HIGH_WATER) {
    if (held.push(batch) === 1) {
      stream.once('drain', () => {
        // One writev of the held batches themselves: each is the Buffer every stream shares, so
        // holding costs no copy per stream. (A Buffer.concat here copied them once per stream:
        // 1,000 lagging streams held gigabytes, and its page faults were charged to the ceiling.)
        stream.cork();
        for (const b of held) stream.write(b);
        held.length = 0;
        stream.uncork();
      });
    }
    return;
  }
  stream.write(batch);
}
const send = (m: FromCeiling) => process.send!(m);

/** HTTP/1.1 headers HTTP/2 forbids (RFC 9113 §8.2.2): a captured response may carry them. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/** A route's captured response on an HTTP/2 stream, after draining any request body. */
function answerStream(stream: ServerHttp2Stream, route: { status: number; headers: Record<string, string>; body: Buffer }): void {
  const headers: Record<string, string | number> = { ':status': route.status };
  for (const [k, v] of Object.entries(route.headers)) if (!CONNECTION_HEADERS.has(k.toLowerCase())) headers[k.toLowerCase()] = v;
  headers['content-length'] = route.body.length;
  stream.on('error', () => undefined);
  stream.resume();
  stream.respond(headers);
  stream.end(route.body);
}

process.on('message', (raw) => {
  const m = raw as ToCeiling;
  try {
    if (m.type === 'listen') {
      tls = { cert: m.cert, key: m.key, ca: m.ca };
      server = createServer({ cert: m.cert, key: m.key, ca: m.ca, ...servingCipherPreference, requestCert: true, rejectUnauthorized: true, keepAliveTimeout: 60_000 }, (req, res) => {
        const route = routes.get(`${req.method} ${req.url}`);
        // Drain any request body before answering, as a real server must.
        req.resume();
        req.on('end', () => {
          if (!route) {
            res.writeHead(404).end();
            return;
          }
          res.writeHead(route.status, { ...route.headers, 'content-length': route.body.length });
          res.end(route.body);
        });
      });
      server.listen(0, '127.0.0.1', () => send({ type: 'listening', port: (server!.address() as { port: number }).port }));
    } else if (m.type === 'route') {
      const { route } = m;
      routes.set(`${route.method} ${route.path}`, { status: route.status, headers: route.headers, body: readFileSync(route.bodyFile) });
      send({ type: 'routed' });
    } else if (m.type === 'watch-listen') {
      if (!tls) throw new Error('watch-listen before listen');
      watchServer = createSecureServer({ ...tls, ...servingCipherPreference, requestCert: true, rejectUnauthorized: true });
      watchServer.on('stream', (stream, headers) => {
        const route = routes.get(`${String(headers[':method'])} ${String(headers[':path'])}`);
        if (route) {
          answerStream(stream, route);
          return;
        }
        stream.respond({ ':status': 200, 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
        watchStreams.set(stream, []);
        stream.on('close', () => watchStreams.delete(stream));
        stream.on('error', () => watchStreams.delete(stream));
      });
      watchServer.listen(0, '127.0.0.1', () => send({ type: 'listening', port: (watchServer!.address() as { port: number }).port }));
    } else if (m.type === 'watch-emit') {
      emitWatchEvents(m);
    }
  } catch (e) {
    send({ type: 'error', message: (e as Error).message });
  }
});
process.on('disconnect', () => process.exit(0));

function emitWatchEvents(job: CeilingWatchEmit): void {
  const total = Math.round((job.ratePerSec * job.durationMs) / 1000);
  const t0 = performance.now();
  let made = 0;
  let pending: Buffer[] = [];
  let acks: [number, number][] = [];
  let flushing = false;
  const flush = () => {
    flushing = false;
    if (pending.length === 0) return;
    const batch = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
    pending = [];
    for (const [s, held] of watchStreams) writeBatch(s, held, batch);
  };
  const reportAcks = setInterval(() => {
    if (acks.length) send({ type: 'acks', acks });
    acks = [];
  }, job.ackIntervalMs);
  const tick = setInterval(() => {
    const due = Math.min(total, Math.floor(((performance.now() - t0) * job.ratePerSec) / 1000) + 1);
    for (; made < due; made++) {
      const rv = job.firstRevision + made;
      const at = performance.timeOrigin + performance.now();
      pending.push(Buffer.from(job.eventTemplate.replace('{rv}', String(rv)).replace('{ts}', String(at))));
      acks.push([rv, at]);
    }
    if (pending.length && !flushing) {
      flushing = true;
      setImmediate(flush);
    }
    if (made >= total) {
      clearInterval(tick);
      setImmediate(() => {
        clearInterval(reportAcks);
        if (acks.length) send({ type: 'acks', acks });
        acks = [];
        send({ type: 'emitted', count: made, elapsedMs: performance.now() - t0 });
      });
    }
  }, 1);
}
