// bench/load/protocol owns the messages between the bench (parent) and a load-generator
// process: the jobs a generator runs and the results it sends back. Plain JSON over the
// child-process IPC channel. Imports: support/latency (types only).

import type { LatencySummary, SerializedLatency } from '../support/latency.js';

/** PEM material for TLS: the CA to trust and, optionally, a client certificate. */
export interface TlsMaterial {
  ca: string;
  cert?: string;
  key?: string;
  /** Name to verify the server's certificate for, when it is not the URL's host (kubeconfig tls-server-name). */
  servername?: string;
  /** false skips verifying the server (kubeconfig insecure-skip-tls-verify); default true. */
  rejectUnauthorized?: boolean;
}

/**
 * A request template. In `path` and `body.template`, `{n}` becomes the request's sequence
 * number (from `startIndex`), `{m}` that number modulo `modulo`, `{ts}` the wall-clock send
 * time in milliseconds (with fractions). `etcdPut`/`etcdDelete` build etcd's v3 JSON-gateway
 * bodies (base64 key and value) for the key template.
 */
export interface RequestTemplate {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: { template: string } | { etcdKey: string; etcdValue?: string };
}

/**
 * Closed-loop HTTP load: `connections` keep-alive HTTP/1.1 connections, one request each at a
 * time; or, with `streamsPerConnection`, HTTP/2 as kubectl and client-go speak it: `connections`
 * requests in flight as streams, `streamsPerConnection` of them on each HTTP/2 connection.
 */
export interface HttpJob {
  kind: 'http';
  baseUrl: string;
  tls: TlsMaterial;
  connections: number;
  /** HTTP/2: requests in flight on each connection (see above); absent: HTTP/1.1. */
  streamsPerConnection?: number;
  /** Requests completing before this are not measured (connection set-up, JIT warm-up). */
  warmupMs: number;
  /** Measure for this long after the warm-up... */
  durationMs?: number;
  /** ...or send exactly this many requests (no warm-up then). */
  requests?: number;
  startIndex?: number;
  modulo?: number;
  /**
   * Timed jobs: which requests the figures count. `start` (default): those sent during the
   * measured window, over the time until the last of them has completed. `completion`: those
   * completing inside the window, over the window's length — the steady-state rate, which
   * does not charge a slow system for draining its queue after the window (with hundreds in
   * flight and seconds of latency, `start` understates it by about latency / window).
   */
  countBy?: 'start' | 'completion';
  request: RequestTemplate;
  okStatus: number[];
  /** Sent once on each connection before anything is measured (opens it, TLS included). */
  prime?: RequestTemplate;
}

export interface HttpLoadResult {
  /** Measured requests (after warm-up), successful or not. */
  requests: number;
  ok: number;
  /** Count per unexpected status (`"429"`) or network error (`"ECONNRESET"`). */
  errors: Record<string, number>;
  firstError?: string;
  elapsedMs: number;
  okPerSecond: number;
  latency: LatencySummary;
  /** The latencies themselves, to merge results of several generators or rounds. */
  histogram: SerializedLatency;
  bytesIn: number;
  /** Sequence numbers used: startIndex ... nextIndex - 1 (warm-up included). */
  nextIndex: number;
  /** The generator's own CPU over the measured window, as a fraction of one core. */
  generatorCpu: number;
}

/** Closed-loop etcd load through the `etcd3` client (gRPC over HTTP/2 with TLS). */
export interface EtcdJob {
  kind: 'etcd';
  endpoint: string;
  tls: TlsMaterial;
  inFlight: number;
  warmupMs: number;
  durationMs?: number;
  requests?: number;
  /**
   * Timed jobs: which requests the figures count. `start` (default): those sent during the
   * measured window, over the time until the last of them has completed. `completion`: those
   * completing inside the window, over the window's length — the steady-state rate, which
   * does not charge a slow system for draining its queue after the window (with hundreds in
   * flight and seconds of latency, `start` understates it by about latency / window).
   */
  countBy?: 'start' | 'completion';
  op: 'put' | 'delete';
  /** Key template with `{n}`/`{m}` as in RequestTemplate. */
  key: string;
  value?: string;
  startIndex?: number;
  modulo?: number;
}

/** Watchers that stay open until told to finish; see WatchControl messages. */
export interface WatchJob {
  kind: 'watch';
  baseUrl: string;
  tls: TlsMaterial;
  watchers: number;
  /** Watch path; `{w}` becomes the watcher's index (from `firstIndex`, default 0). */
  path: string;
  firstIndex?: number;
  protocol: 'http1' | 'http2';
  /** HTTP/2 streams per connection. */
  streamsPerSession: number;
  /**
   * Which client receives: `native` (bench/native/h2watch, nghttp2 + OpenSSL; HTTP/2 only) or
   * `node` (node:http2 / node:https in the generator process). Default `node`.
   */
  client?: 'node' | 'native';
  /** Extra request headers for each watch (a bearer token); `node` client only. */
  headers?: Record<string, string>;
}

export interface WatchResult {
  established: number;
  failedToEstablish: number;
  firstError?: string;
  /** Events received, by type. */
  events: Record<string, number>;
  /** Streams the server ended before `finish`. */
  closedEarly: number;
  /** Delivery latency from the writer's acknowledgement to receipt (0 when it arrived first). */
  fromAck: LatencySummary;
  /** Delivery latency from the send time embedded in the object to receipt. */
  fromSend: LatencySummary;
  /** The same two as histograms, to merge the results of several watcher processes. */
  fromAckHistogram: SerializedLatency;
  fromSendHistogram: SerializedLatency;
  /** Deliveries expected (from `finish`) and seen, for the watched writes. */
  expected: number;
  delivered: number;
  generatorCpu: number;
}

/** Open-loop writer: `ratePerSec` requests per second, paced, at most `maxInFlight` at once. */
export interface WriterJob {
  kind: 'writer';
  baseUrl: string;
  tls: TlsMaterial;
  ratePerSec: number;
  durationMs: number;
  maxInFlight: number;
  startIndex?: number;
  modulo?: number;
  request: RequestTemplate;
  okStatus: number[];
  /** How often acknowledgements are reported while running. */
  ackIntervalMs: number;
}

export interface WriterResult {
  sent: number;
  ok: number;
  errors: Record<string, number>;
  firstError?: string;
  /** Scheduler ticks (1 ms) at which writes were due but `maxInFlight` were outstanding. */
  late: number;
  elapsedMs: number;
  latency: LatencySummary;
  generatorCpu: number;
}

export type Job = HttpJob | EtcdJob | WatchJob | WriterJob;
export type JobResult = HttpLoadResult | WatchResult | WriterResult;

/** Parent → generator. */
export type ToGenerator =
  | { type: 'run'; job: Job }
  /** For a running watch job: acknowledged writes as [resourceVersion, wall-clock ms] pairs. */
  | { type: 'acks'; acks: [number, number][] }
  /**
   * For a running watch job: events sent (by their embedded send time) before `untilMs`
   * (wall clock) are a warm-up: counted as delivered, left out of the latency figures.
   */
  | { type: 'warmup'; untilMs: number }
  /** For a running watch job: stop once `expected` deliveries arrived or `drainMs` passed. */
  | { type: 'finish'; expected: number; drainMs: number };

/** Generator → parent. */
export type FromGenerator =
  | { type: 'ready'; established: number; failed: number; firstError?: string }
  | { type: 'acks'; acks: [number, number][] }
  | { type: 'result'; result: JobResult }
  | { type: 'error'; message: string };

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}
