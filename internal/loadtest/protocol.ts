// internal/loadtest/protocol owns the messages between the load tool's coordinator and its
// worker processes (plain JSON over the child-process IPC channel): the job a worker runs,
// its progress and its results. Imports: bench/load/protocol, bench/support/latency (types).

import type { TlsMaterial, WatchResult } from '../../bench/load/protocol.js';
import type { SerializedLatency } from '../../bench/support/latency.js';
import type { Mix, RequestOp } from './options.js';

export interface WorkerTarget {
  server: string;
  tls: TlsMaterial;
  headers: Record<string, string>;
}

export interface WorkerJob {
  /** This worker's number (0-based): it names its objects. */
  index: number;
  /** Identifies the run: in object names and the clusterd-load/run label. */
  runId: string;
  targets: WorkerTarget[];
  namespace: string;
  /** This worker's connections; connection i goes to target (firstConnection + i) % targets. */
  connections: number;
  firstConnection: number;
  /** This worker's watchers; watcher i goes to target (firstWatcher + i) % targets. */
  watchers: number;
  firstWatcher: number;
  /** The resourceVersion the watchers start from (the namespace's list before the load). */
  watchFrom: string;
  /** Whether anyone watches: then acknowledgements of writes are reported for the watch lag. */
  reportAcks: boolean;
  mix: Mix;
  durationMs: number;
  /** This worker's share of --rate; 0 = closed loop. */
  ratePerSec: number;
  objectSize: number;
  listLimit: number;
  timeoutMs: number;
}

export interface OpFigures {
  /** Requests answered or failed. */
  requests: number;
  ok: number;
  /** 409 Conflict answers to an update's resourceVersion precondition. */
  conflicts: number;
  errors: number;
  /** Latencies of successful requests. */
  latency: SerializedLatency;
}

export interface ErrorFigures {
  count: number;
  byOp: Partial<Record<RequestOp, number>>;
  /** The first such error's message. */
  example: string;
}

export interface WorkerLoadResult {
  ops: Record<RequestOp, OpFigures>;
  /** By "<status> <reason>" or the network error's code. */
  errors: Record<string, ErrorFigures>;
  /** Per target (the job's order): requests sent there and errors among them. */
  targets: { requests: number; errors: number }[];
  /** Open loop: requests that started more than 5 ms after their scheduled time. */
  late: number;
  /** update/get/delete sent as creates because this worker had no object for them. */
  substitutedCreates: number;
  /** Wall-clock ms of the first request's start and the last answer. */
  startedAt: number;
  endedAt: number;
}

export interface Progress {
  requests: number;
  ok: number;
  conflicts: number;
  errors: number;
  watchEvents: number;
}

/** Coordinator → worker. */
export type ToWorker =
  | { type: 'open'; job: WorkerJob }
  | { type: 'start' }
  /** Stop starting requests now (SIGINT). */
  | { type: 'stop' }
  | { type: 'acks'; acks: [number, number][] }
  /**
   * Every watcher should receive `perWatcherEvents` events (creates, updates and deletes), of
   * which `perWatcher` carry a write time (creates and updates); wait up to drainMs, close, report.
   */
  | { type: 'finish'; perWatcher: number; perWatcherEvents: number; drainMs: number };

/** Worker → coordinator. */
export type FromWorker =
  | { type: 'ready'; established: number; failed: number; firstError?: string }
  | { type: 'progress'; progress: Progress }
  | { type: 'acks'; acks: [number, number][] }
  | { type: 'loaded'; result: WorkerLoadResult }
  | { type: 'watched'; result: WatchResult | null }
  | { type: 'error'; message: string };
