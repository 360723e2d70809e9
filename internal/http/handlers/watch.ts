// internal/http/handlers/watch owns watch streams (spec §2.6, §4.3, §6): the start point
// (current state first, or changes after a version), bookmarks (periodic, before a timeout
// closes the stream, and the initial-events-end one), the timeout, and framing each event in
// the negotiated encoding. The stream pulls from the watcher, so a slow client only fills its
// own bounded queue. Imports: http, registry, watchcache, list-options, selection.

import type { Context } from 'hono';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { watchParams } from '../list-options.js';
import { chooseRepresentation, watchEventWriter } from '../representations.js';
import type { Item } from '../serializers.js';
import { selectAll, type WatchOutput } from '../../watchcache/types.js';
import type { WatchSeries } from '../../metrics/metrics.js';
import { CacheWatcher } from '../../watchcache/watcher.js';
import { errors, StatusError } from '../../apierrors/status.js';
import type { ResourceRequest } from './resource-request.js';
import { selectionFor } from './selection.js';
import { sharedBatch } from '../watch-batches.js';


const MAX_TIMER_MS = 2 ** 31 - 1;
/** Events of one watch converted by a webhook at the same time (a watch from 0 starts with every object). */
const WEBHOOK_EVENTS_IN_FLIGHT = 8;
export async function handleWatch(c: Context<Env>, deps: HttpDeps, rr: ResourceRequest): Promise<Response> {
  const rep = chooseRepresentation(c, deps, rr.resource, 'watch');
  const writer = watchEventWriter(c, deps, rep, rr.resource);
  const params = watchParams(rr.query);
  const selection = selectionFor(rr.resource, rr.query, rr.info.name || undefined);
  let fromRevision = params.fromRevision;
  // sendInitialEvents with a version the cache has not reached: after the wait, upstream's
  // cacher answers a stream holding one ERROR event (the 504 Status), not an HTTP error.
  let tooLarge: StatusError | undefined;
  if (params.notOlderThan !== undefined) {
    try {
      await rr.registry.catchUp({ kind: 'notOlderThan', revision: params.notOlderThan });
    } catch (e) {
      if (!(e instanceof StatusError) || e.code !== 504) throw e;
      tooLarge = e;
    }
  }
  if (fromRevision < 0) {
    // sendInitialEvents=false with resourceVersion unset (most recent: caught up with the store
    // first) or 0 (any): changes from now on, no initial state.
    fromRevision = await rr.registry.catchUp(params.consistent ? { kind: 'consistent' } : { kind: 'any' });
  }
  let watcher: CacheWatcher;
  if (tooLarge) {
    watcher = new CacheWatcher(() => false, 1, 0, () => {});
    const { code, message, details } = tooLarge.status;
    watcher.fail(code, tooLarge.reason, message, details as Record<string, unknown> | undefined);
  } else {
    watcher = await rr.registry.watch(rr.namespace, selection.filter ?? selectAll, fromRevision, params.consistent);
    if (params.sendInitialEvents && params.allowBookmarks) watcher.bookmark(true);
  }

  // Node's timers fire at once for delays beyond 2^31 - 1 ms (about 24.8 days), so a longer
  // timeoutSeconds is held to that: a watch asked to last 30 days ended immediately.
  const timeoutMs = Math.min(
    MAX_TIMER_MS,
    (params.timeoutSeconds !== undefined ? params.timeoutSeconds : deps.minWatchTimeoutSeconds * (1 + Math.random())) * 1000,
  );
  const converting = !rr.registry.servesStoredShape(rr.resource);
  const convertsAsync = rr.registry.convertsAsync(rr.resource);
  const parse = (out: Extract<WatchOutput, { entry: unknown }>): Record<string, unknown> => JSON.parse(out.entry.bytes.toString('utf8')) as Record<string, unknown>;
  const toItem = (out: Extract<WatchOutput, { entry: unknown }>): Item =>
    // Without a conversion webhook toVersion answers synchronously (convertsAsync is false).
    converting ? { object: rr.registry.toVersion(rr.resource, parse(out)) as Record<string, unknown> } : { entry: out.entry };
  const bookmarkObject = (revision: number, initialEventsEnd?: boolean): Item => {
    const metadata: Record<string, unknown> = { resourceVersion: String(revision) };
    if (initialEventsEnd) metadata.annotations = { [`${deps.naming.groupDomain}/initial-events-end`]: 'true' };
    return { object: { kind: rr.resource.kind, apiVersion: rr.resource.apiVersion, metadata } };
  };
  const encode = (out: WatchOutput): Buffer[] | undefined => {
    if (out.type === 'BOOKMARK') {
      if (!params.allowBookmarks) return undefined;
      return [writer.write('BOOKMARK', bookmarkObject(out.revision, out.initialEventsEnd))];
    }
    if (out.type === 'ERROR') {
      const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: out.message, reason: out.reason, ...(out.details ? { details: out.details } : {}), code: out.code };
      return [writer.write('ERROR', { object: status })];
    }
    if (out.entry.corrupt) return undefined;
    return writer.parts(out.type, toItem(out));
  };
  const encodeOwn = (outs: readonly WatchOutput[]): Buffer | undefined => {
    const parts: Buffer[] = [];
    for (const out of outs) {
      const p = encode(out);
      if (p) parts.push(...p);
    }
    return parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : Buffer.concat(parts);
  };
  // A conversion webhook converts each event on its own (one ConversionReview per event, as
  // upstream), a few of a round's at a time, written in their order; a failure ends the stream
  // with an ERROR event carrying the conversion's Status after the events before it.
  let conversionFailed = false;
  const encodeConverted = async (outs: readonly WatchOutput[]): Promise<Buffer | undefined> => {
    const parts: Buffer[] = [];
    for (let start = 0; start < outs.length && !conversionFailed; start += WEBHOOK_EVENTS_IN_FLIGHT) {
      const chunk = outs.slice(start, start + WEBHOOK_EVENTS_IN_FLIGHT);
      const converted = await Promise.allSettled(
        chunk.map((out) => ('entry' in out && !out.entry.corrupt ? rr.registry.toVersion(rr.resource, parse(out)) : undefined)),
      );
      for (let i = 0; i < chunk.length; i++) {
        const c = converted[i]!;
        const out = chunk[i]!;
        if (c.status === 'rejected') {
          conversionFailed = true;
          const e = c.reason instanceof StatusError ? c.reason : errors.internal(c.reason instanceof Error ? c.reason.message : String(c.reason));
          parts.push(writer.write('ERROR', { object: { ...e.status } }));
          watcher.close();
          break;
        }
        const p = c.value !== undefined && out.type !== 'BOOKMARK' && out.type !== 'ERROR' ? writer.parts(out.type, { object: c.value }) : encode(out);
        if (p) parts.push(...p);
      }
    }
    return parts.length === 0 ? undefined : Buffer.concat(parts);
  };
  // Bookmarks (per stream, and only written when asked for) keep a batch out of the shared memo.
  const shareKey = writer.shareKey;
  const encodeBatch = (outs: readonly WatchOutput[]): Buffer | undefined =>
    shareKey !== undefined && outs.every((o) => o.type !== 'BOOKMARK' && o.type !== 'ERROR')
      ? sharedBatch(shareKey, outs, () => encodeOwn(outs))
      : encodeOwn(outs);

  const beforeTimeout = () => {
    if (params.allowBookmarks) watcher.bookmark();
  };
  const bookmarkEvery = params.allowBookmarks ? deps.bookmarkIntervalMs : 0;
  const counted = deps.metrics?.watch(rr.resource.group, rr.resource.version, rr.resource.kind);
  const outgoing = c.env?.outgoing as NodeResponse | undefined;
  if (convertsAsync) {
    // Converted by a webhook: the pull-based stream, which waits for each round's conversion.
    const stream = watchStream(watcher, encodeConverted, timeoutMs, bookmarkEvery, beforeTimeout, counted);
    const headers = new Headers({ 'content-type': writer.contentType, 'cache-control': 'no-cache, private' });
    for (const w of c.get('warnings')) headers.append('warning', w);
    return new Response(stream, { status: 200, headers });
  }
  if (outgoing && typeof outgoing.writeHead === 'function') {
    // Straight to the Node response: a web stream per watcher costs more than the events.
    const headers: Record<string, string | string[]> = { 'content-type': writer.contentType, 'cache-control': 'no-cache, private' };
    const warnings = c.get('warnings');
    if (warnings.length) headers.warning = warnings;
    pumpToNode(watcher, encodeBatch, outgoing, headers, timeoutMs, bookmarkEvery, beforeTimeout, counted);
    return RESPONSE_ALREADY_SENT;
  }
  const stream = watchStream(watcher, encodeBatch, timeoutMs, bookmarkEvery, beforeTimeout, counted);
  const headers = new Headers({ 'content-type': writer.contentType, 'cache-control': 'no-cache, private' });
  for (const w of c.get('warnings')) headers.append('warning', w);
  return new Response(stream, { status: 200, headers });
}

/** The part of Node's HTTP/1.1 and HTTP/2 compatibility responses the watch writer uses. */
interface NodeResponse {
  writeHead(status: number, headers: Record<string, string | string[]>): unknown;
  flushHeaders?(): void;
  write(chunk: Buffer): boolean;
  end(): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  readonly writableEnded?: boolean;
  readonly writableLength?: number;
  readonly destroyed?: boolean;
  /** HTTP/2 compatibility responses: the Http2Stream they write to. */
  readonly stream?: unknown;
}

/** What a round's bytes are written to: the HTTP/2 stream itself, or the HTTP/1.1 response. */
interface ByteSink {
  write(chunk: Buffer): boolean;
  once(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
  readonly writableLength?: number;
}

function isHttp2Stream(s: unknown): s is ByteSink {
  const o = s as { write?: unknown; respond?: unknown; once?: unknown; off?: unknown } | null | undefined;
  return typeof o?.write === 'function' && typeof o.respond === 'function' && typeof o.once === 'function' && typeof o.off === 'function';
}

/**
 * Above this many bytes buffered in a stream, its watcher is paused until the stream drains
 * (meanwhile its bounded queue absorbs events, or overflows). Below it, writes go on although
 * the stream's own high-water mark is passed: HTTP/2 streams report that after a single event.
 */
const STREAM_BUFFER_LIMIT = 256 * 1024;

/**
 * Writes a watcher's outputs to a Node response until the watcher ends, the timeout fires or
 * the client goes away. Runs in the watcher's delivery rounds (callback mode): each round
 * writes everything queued as one chunk, often the very Buffer other streams write too.
 */
function pumpToNode(
  watcher: CacheWatcher,
  encodeBatch: (outs: readonly WatchOutput[]) => Buffer | undefined,
  res: NodeResponse,
  headers: Record<string, string | string[]>,
  timeoutMs: number,
  bookmarkIntervalMs: number,
  beforeTimeout: () => void,
  counted?: WatchSeries,
): void {
  let gone = false;
  let finished = false;
  let sink: ByteSink = res;
  counted?.opened();
  const timer = setTimeout(() => {
    beforeTimeout();
    watcher.close();
  }, timeoutMs);
  const bookmarks = bookmarkIntervalMs > 0 ? setInterval(() => watcher.bookmark(), bookmarkIntervalMs) : undefined;
  const finish = () => {
    if (finished) return;
    finished = true;
    counted?.closed();
    clearTimeout(timer);
    clearInterval(bookmarks);
    res.off('close', onClose);
    sink.off('drain', onDrain);
    watcher.close();
    if (!gone && !res.writableEnded && !res.destroyed) res.end();
  };
  const onClose = () => {
    gone = true;
    finish();
  };
  const onDrain = () => watcher.resume();
  // The headers go through the response (with what filters set on it, such as Audit-Id); over
  // HTTP/2 the rounds' bytes then go to its Http2Stream directly. The compatibility layer's
  // write adds checks and a call per write and nothing a started watch needs: measured with
  // 1,000 TLS streams on 10 sessions, 2.3 KB events, 1-2 events per write, its write cost 4-25 %
  // (median 7 %, about 0.4 µs) more server CPU per write than the stream's own, in 8 pairs.
  res.once('close', onClose);
  try {
    res.writeHead(200, headers);
    res.flushHeaders?.();
    if (isHttp2Stream(res.stream)) sink = res.stream;
  } catch {
    finish();
    return;
  }
  watcher.consume(() => {
    if (finished) return;
    try {
      const outs = watcher.drain();
      // Counted per delivery round, not per event: the fan-out path stays one call per stream.
      if (counted) counted.events.value += outs.length;
      const bytes = outs.length > 0 ? encodeBatch(outs) : undefined;
      if (bytes && !sink.write(bytes) && (sink.writableLength ?? Infinity) > STREAM_BUFFER_LIMIT) {
        watcher.pause();
        sink.once('drain', onDrain);
      }
      if (watcher.closed && watcher.pending === 0) finish();
    } catch {
      finish();
    }
  });
}

/**
 * A byte stream of a watcher's outputs. Each pull waits for outputs and writes everything
 * queued as one chunk. On timeout: a last bookmark (when asked for), then a clean end.
 */
export function watchStream(
  watcher: CacheWatcher,
  encodeBatch: (outs: readonly WatchOutput[]) => Buffer | undefined | Promise<Buffer | undefined>,
  timeoutMs: number,
  bookmarkIntervalMs: number,
  beforeTimeout: () => void,
  counted?: WatchSeries,
): ReadableStream<Uint8Array> {
  let timer: NodeJS.Timeout | undefined;
  let bookmarks: NodeJS.Timeout | undefined;
  let stopped = false;
  const stop = () => {
    if (!stopped) counted?.closed();
    stopped = true;
    clearTimeout(timer);
    clearInterval(bookmarks);
    watcher.close();
  };
  return new ReadableStream<Uint8Array>({
    start() {
      counted?.opened();
      timer = setTimeout(() => {
        beforeTimeout();
        stop();
      }, timeoutMs);
      if (bookmarkIntervalMs > 0) bookmarks = setInterval(() => watcher.bookmark(), bookmarkIntervalMs);
    },
    async pull(controller) {
      for (;;) {
        await watcher.ready();
        const outs = watcher.drain();
        if (outs.length === 0) {
          if (watcher.closed) {
            stop();
            controller.close();
            return;
          }
          continue;
        }
        if (counted) counted.events.value += outs.length;
        const encoded = encodeBatch(outs);
        const bytes = encoded instanceof Promise ? await encoded : encoded;
        if (bytes) {
          try {
            controller.enqueue(bytes);
          } catch {
            // The client went away while the batch was converted: the stream is cancelled.
          }
          return;
        }
      }
    },
    cancel() {
      stop();
    },
  });
}
