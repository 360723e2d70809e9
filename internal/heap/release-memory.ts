// internal/heap/release-memory owns giving back the memory a server's start grew and no longer
// uses: collections of the kind V8 runs for a low-memory notification, one when the server is
// ready and one at the first idle moment after (cmd/clusterd calls both). A start allocates fast
// (the cache's load, bootstrap, the garbage collector's graph after readiness), so V8 grows its
// young generation to the largest semi-space size and keeps the old generation's pages of the
// start's garbage; V8's own memory reducer hands them back only after tens of seconds of
// idleness, or not at all while timers keep the heap's allocation rate above its threshold.
// The young generation grows back under load: what is released is only what an idle server
// holds for no use. Such a collection also leaves the heap sized for an idle process: the young
// generation at its smallest and the old generation's next collection 10 % above what is live
// (V8's factor for a memory-reducing collection); three replicas' first 3,000 creates right
// after it ran about twice the scavenges (83-97 against 40-44) and several times the full
// collections (18-21 against 2-9) of replicas that kept what their start grew. (Not code
// flushing: in Node 20 a forced or low-memory collection neither ages nor flushes bytecode.)
// So the collection keeps the room to grow that a start leaves (keepGrowthRoom): the memory
// goes, the room to grow back into it stays.
// Imports: node only (node:inspector and node:v8 are required when a collection runs).

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

/** Old-generation room above the heap a collection leaves, before the next full collection. */
export const OLD_GENERATION_ROOM_BYTES = 64 * 1024 * 1024;

/**
 * The heap growing percent (V8's --heap-growing-percent) that leaves `roomBytes` above a heap
 * of `usedBytes`, within V8's own range: 10 % (its factor for a memory-reducing collection) to
 * 300 % (the factor it gives a fresh heap's first full collection, whose room a start leaves).
 * A fixed room rather than a fixed factor: 4× of a large heap would let a loaded server
 * pile up hundreds of megabytes of garbage before collecting.
 */
export function growingPercent(usedBytes: number, roomBytes = OLD_GENERATION_ROOM_BYTES): number {
  return Math.min(300, Math.max(10, Math.round((100 * roomBytes) / Math.max(usedBytes, 1))));
}

/**
 * How fast the young generation grows back after a collection shrank it: V8 doubles it from
 * 1 MiB each time more than its size survived since it last grew, so a shrunk one took four
 * steps and tens of extra scavenges (each promoting what was in flight) to reach the 16 MiB it
 * had; with 16 it goes back in one. It grows only when survivors ask for it, as before.
 */
const SEMI_SPACE_GROWTH_FACTOR = 16;

/**
 * The growing percent a collection puts back when it is done: 0, V8's default (the factor it
 * computes from the collector's and the program's speeds), unless the process chose its own
 * (a cluster replica does, see internal/cluster/heap-growth) and said so here.
 */
let restingGrowingPercent = 0;

/** Records the heap growing percent the process set for itself, which a collection restores. */
export function noteRestingGrowingPercent(percent: number): void {
  restingGrowingPercent = percent;
}

/** Whether the operator gave node this V8 flag (then it is theirs: left as they set it). */
export function operatorFlag(name: string, argv: readonly string[] = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]): boolean {
  const canonical = (a: string) => a.replace(/^--(no-)?/, '').split('=')[0]!.replace(/_/g, '-');
  return argv.some((a) => a.startsWith('--') && canonical(a) === name);
}

/**
 * Sets the flags that keep a low-memory collection from shrinking the room to grow (the
 * old generation's next limit, the young generation's growth step); returns what restores
 * the growing percent once the collection is done. The growth factor stays: V8's own memory
 * reducer shrinks the young generation of an idle server too, and load after that is the same
 * case. V8 reads both flags at each collection (Node does not freeze flags after start).
 */
export function keepGrowthRoom(v8: Pick<typeof import('node:v8'), 'setFlagsFromString' | 'getHeapStatistics'>, argv?: readonly string[]): () => void {
  if (!operatorFlag('semi-space-growth-factor', argv)) v8.setFlagsFromString(`--semi-space-growth-factor=${SEMI_SPACE_GROWTH_FACTOR}`);
  if (operatorFlag('heap-growing-percent', argv)) return () => undefined;
  // Sized from what is used before the collection, garbage included, as what is live after
  // is not known yet: the room is then less than asked by the share that was garbage.
  v8.setFlagsFromString(`--heap-growing-percent=${growingPercent(v8.getHeapStatistics().used_heap_size)}`);
  const resting = restingGrowingPercent;
  return () => v8.setFlagsFromString(`--heap-growing-percent=${resting}`);
}

/**
 * A full collection with V8's low-memory notification (what the inspector's
 * HeapProfiler.collectGarbage asks for): collects until nothing more is freed, compacts, and
 * shrinks the young generation to its initial size, leaving the room to grow that the start
 * had (keepGrowthRoom). Resolves when done; resolves at once when the process has no
 * inspector (Node built without it) or the session fails.
 */
export function lowMemoryCollection(): Promise<void> {
  let inspector: typeof import('node:inspector');
  let v8: typeof import('node:v8');
  try {
    const require = createRequire(import.meta.url);
    inspector = require('node:inspector') as typeof import('node:inspector');
    v8 = require('node:v8') as typeof import('node:v8');
  } catch {
    return Promise.resolve();
  }
  // Never throws: the server calls this without waiting, and only memory is at stake.
  return new Promise((resolve) => {
    let restore: () => void = () => undefined;
    try {
      restore = keepGrowthRoom(v8);
      const session = new inspector.Session();
      session.connect();
      session.post('HeapProfiler.collectGarbage', () => {
        restore();
        // Not inside the callback: a session disconnected from its own message's callback
        // blocks the thread for good (Node 20).
        setImmediate(() => {
          session.disconnect();
          resolve();
        });
      });
    } catch {
      restore();
      resolve();
    }
  });
}
