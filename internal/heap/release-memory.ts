// internal/heap/release-memory owns giving back the memory a server's start grew and no longer
// uses: collections of the kind V8 runs for a low-memory notification, one when the server is
// ready and one at the first idle moment after (cmd/clusterd calls both). A start allocates fast
// (the cache's load, bootstrap, the garbage collector's graph after readiness), so V8 grows its
// young generation to the largest semi-space size and keeps the old generation's pages of the
// start's garbage; V8's own memory reducer hands them back only after tens of seconds of
// idleness, or not at all while timers keep the heap's allocation rate above its threshold.
// The young generation grows back under load: what is released is only what an idle server
// holds for no use. Imports: node only (node:inspector is required when a collection runs).

import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

export interface IdleReleaseOptions {
  /** Whether the process was idle since the previous call (idleSampler in the server). */
  idleSinceLastCall(): boolean;
  /** Calls `fn` after `ms`; returns a cancel function. */
  schedule(fn: () => void, ms: number): () => void;
  /** The release itself (lowMemoryCollection in the server). */
  release(): Promise<void>;
  /** How long one look at the process lasts. */
  windowMs: number;
  /** Windows to look at before giving up (a busy server: V8's memory reducer is enough). */
  maxWindows: number;
}

/**
 * Looks at the process one window at a time and releases at the first idle window, once.
 * Returns a function that stops looking (shutdown). A failed release is ignored: it only
 * gives memory back.
 */
export function releaseWhenIdle(o: IdleReleaseOptions): () => void {
  let cancel: (() => void) | undefined;
  let windows = 0;
  const look = () => {
    cancel = undefined;
    windows++;
    if (o.idleSinceLastCall()) {
      void o.release().catch(() => undefined);
      return;
    }
    if (windows < o.maxWindows) cancel = o.schedule(look, o.windowMs);
  };
  o.idleSinceLastCall();
  cancel = o.schedule(look, o.windowMs);
  return () => cancel?.();
}

export interface IdleThresholds {
  /** The event loop's utilization at or above which the process is busy. */
  maxLoopUtilization: number;
  /** CPU time over wall time (cores) at or above which the process is busy. */
  maxCpuCores: number;
}

/**
 * Idle since the previous call: the event loop mostly waited for events and the process used
 * little CPU. Both, because each alone misleads on a loaded machine: work chunked across
 * turns (setImmediate) keeps the loop fully utilized but gets little CPU while it waits for a
 * core, and an idle loop woken by its timers waits for a core too, which counts as utilized.
 */
export function idleSampler(t: IdleThresholds): () => boolean {
  let loop = performance.eventLoopUtilization();
  let cpu = process.cpuUsage();
  let at = performance.now();
  return () => {
    const loopNow = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(loopNow, loop).utilization;
    const used = process.cpuUsage(cpu);
    const now = performance.now();
    const cores = (used.user + used.system) / 1000 / Math.max(now - at, 1);
    loop = loopNow;
    cpu = process.cpuUsage();
    at = now;
    return utilization < t.maxLoopUtilization && cores < t.maxCpuCores;
  };
}

/**
 * A full collection with V8's low-memory notification (what the inspector's
 * HeapProfiler.collectGarbage asks for): collects until nothing more is freed, compacts, and
 * shrinks the young generation to its initial size. Resolves when done; resolves at once
 * when the process has no inspector (Node built without it) or the session fails.
 */
export function lowMemoryCollection(): Promise<void> {
  let inspector: typeof import('node:inspector');
  try {
    inspector = createRequire(import.meta.url)('node:inspector') as typeof import('node:inspector');
  } catch {
    return Promise.resolve();
  }
  // Never throws: the server calls this without waiting, and only memory is at stake.
  return new Promise((resolve) => {
    try {
      const session = new inspector.Session();
      session.connect();
      session.post('HeapProfiler.collectGarbage', () => {
        // Not inside the callback: a session disconnected from its own message's callback
        // blocks the thread for good (Node 20).
        setImmediate(() => {
          session.disconnect();
          resolve();
        });
      });
    } catch {
      resolve();
    }
  });
}
