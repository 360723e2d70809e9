// bench/scenarios/startup-memory owns the startup and memory rows: spawn to the first /readyz
// 200 with nothing stored and with the stored pods (exactly 50,000 in a full run, on a server
// of its own), the idle RSS after start, and the RSS with those pods (per pod over the pod's
// own size). Imports: context, report/rows, support/proc-stats, targets/clusterd-process.

import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext } from '../context.js';
import { ratioOf } from '../report/rows.js';
import { readMemory, type MemorySample } from '../support/proc-stats.js';
import { ClusterdProcess } from '../targets/clusterd-process.js';

const MB = 1024 * 1024;

/** Call right after the first start (which generated the PKI): restarts with nothing stored. */
export async function startupEmptyScenario(ctx: BenchContext, firstStartMs: number): Promise<void> {
  const restarts = ctx.plan.startupRestarts;
  ctx.progress.step(`startup: restarting ${restarts} times with nothing stored`);
  const times: number[] = [];
  for (let i = 0; i < restarts; i++) times.push(await ctx.restartServer());
  const readyMs = [...times].sort((a, b) => a - b)[Math.floor(restarts / 2)]!;
  const idle = await settledMemory(ctx);
  ctx.idleRssBytes = idle?.rssBytes;
  ctx.raw.startupEmpty = { firstStartMs, times, idle };
  ctx.add({ scenario: 'startup to /readyz 200, nothing stored', figure: 'seconds', unit: 's', value: readyMs / 1000, target: '≤ 0.5 s', holds: readyMs <= 500, note: `median of ${restarts} restarts (${times.map((t) => (t / 1000).toFixed(2)).join(', ')} s), from spawning node to the first 200; the very first start (generating the CA and certificates) took ${(firstStartMs / 1000).toFixed(2)} s` });
  ctx.add({ scenario: 'idle RSS after start', figure: 'MB', unit: 'MB', value: idle ? idle.rssBytes / MB : null, target: '≤ 80 MB', holds: idle ? idle.rssBytes <= 80 * MB : null, note: `VmRSS ${ctx.plan.settleMs / 1000} s after the server went idle (see settledMemory) once /readyz answered 200` });
}

/**
 * The startup and memory rows with stored pods. With a count in the plan (50,000 in a full run,
 * `--stored-pods N`) they are measured on a server of their own: a fresh data directory (the
 * main server's PKI copied in, so the bench's credentials hold), restarted once with nothing
 * stored for its idle RSS, then filled with exactly that many pods and restarted. The main
 * server holds whatever the earlier scenarios left (109,802 pods in a full run), which topping
 * it up to the count could not take away. The fresh server replaces the main one for the rest
 * of the run (this scenario comes last). With no count (quick and tiny runs) the rows measure
 * the main server with whatever it holds.
 */
export async function storedObjectsScenario(ctx: BenchContext): Promise<void> {
  const { plan } = ctx;
  const own = plan.storedPods > 0;
  let idle = ctx.idleRssBytes;
  if (own) {
    ctx.progress.step(`startup: a server of its own on a fresh data directory for ${plan.storedPods.toLocaleString('en-US')} pods`);
    const dataDir = join(ctx.scratchDir, 'stored');
    const main = ctx.server;
    await main.stop();
    mkdirSync(dataDir, { recursive: true });
    cpSync(main.pkiDir, join(dataDir, 'pki'), { recursive: true });
    const { server } = await ClusterdProcess.start(dataDir, main.args, main.port);
    ctx.replaceServer(server);
    // Its idle RSS after a restart with nothing stored, as the empty startup row measures it.
    await ctx.restartServer();
    idle = (await settledMemory(ctx))?.rssBytes;
    const before = await countPods(ctx);
    if (before !== 0) throw new Error(`a fresh data directory holds ${before} pods`);
    await ctx.fillPods('bench-fill', 'fill-', plan.storedPods);
  }
  const stored = await countPods(ctx);
  if (own && stored !== plan.storedPods) throw new Error(`the stored pods' server holds ${stored} pods, not ${plan.storedPods}`);
  const label = stored.toLocaleString('en-US');
  ctx.progress.step(`startup: restarting with ${label} pods stored`);
  const readyMs = await ctx.restartServer();
  const mem = await settledMemory(ctx);
  const perPod = mem && idle !== undefined && stored > 0 ? (mem.rssBytes - idle) / stored : null;
  const overObject = perPod === null ? null : perPod - ctx.podBytes;
  ctx.raw.storedObjects = { stored, ownServer: own, readyMs, mem, idle, podBytes: ctx.podBytes, perPod };
  const fullSize = stored === 50_000;
  const where = own
    ? `on a server of its own (a fresh data directory holding these ${label} pods and what a start creates)`
    : `on the main server with what the earlier scenarios left`;
  const scaleNote = fullSize ? '' : ` (the target is for 50,000)`;
  ctx.add({ scenario: `startup to /readyz 200 with ${label} pods stored`, figure: 'seconds', unit: 's', value: readyMs / 1000, target: '≤ 3 s with 50,000', holds: fullSize ? readyMs <= 3000 : null, note: `restart of the server on its LevelDB data, ${where}${scaleNote}` });
  ctx.add({ scenario: `RSS with ${label} pods`, figure: 'MB', unit: 'MB', value: mem ? mem.rssBytes / MB : null, target: 'reported', holds: null, note: `VmRSS ${plan.settleMs / 1000} s after the server went idle after the restart (see settledMemory), ${where}` });
  ctx.add({
    scenario: `RSS with ${label} pods`,
    figure: 'bytes per pod over its own size',
    unit: 'B',
    value: overObject,
    baseline: { name: 'pod JSON size', value: ctx.podBytes },
    ratio: ratioOf(perPod, ctx.podBytes),
    target: '≤ 2,000 B over the object size per object',
    holds: overObject === null || !fullSize ? null : overObject <= 2000,
    note: `(RSS with pods − idle RSS${own ? ' of the same server before it was filled' : ''}) / pods = ${perPod === null ? '?' : Math.round(perPod)} B per pod; a pod is ${ctx.podBytes} B of JSON${scaleNote}`,
  });
}

/**
 * The server's memory once the work that follows its start is done: after /readyz a server
 * still builds the garbage collector's graph and gives back what its start grew at its first
 * idle moment (internal/heap), which on the loaded two-core machine takes seconds of wall
 * time. Read at a fixed delay after /readyz, the RSS swung with the machine's load (242 MB
 * with 50,000 pods on a quieter moment, 283-297 MB during a bench run). So: once the server
 * uses under 15 % of a core (BenchContext.quiesce, 20 s at most), then the settle time.
 */
async function settledMemory(ctx: BenchContext): Promise<MemorySample | undefined> {
  await ctx.quiesce();
  await new Promise((r) => setTimeout(r, ctx.plan.settleMs));
  return readMemory(ctx.server.pid);
}

/** Pods stored, from a one-item list's remainingItemCount, else the bench's own count. */
async function countPods(ctx: BenchContext): Promise<number> {
  const r = await ctx.admin.get('/api/v1/pods?limit=1');
  const counted = r.status === 200 ? podCount(r.json()) : undefined;
  if (counted === undefined) throw new Error(`counting pods: ${r.status} ${r.text().slice(0, 200)}`);
  return counted;
}

/**
 * The pods a one-item list (`?limit=1`) says are stored: its item plus remainingItemCount
 * (absent on the last page: then the items are all there is). Undefined when the body is not
 * a list.
 */
export function podCount(list: unknown): number | undefined {
  if (typeof list !== 'object' || list === null) return undefined;
  const { items, metadata } = list as { items?: unknown; metadata?: { remainingItemCount?: unknown; continue?: unknown } };
  if (!Array.isArray(items) || typeof metadata !== 'object' || metadata === null) return undefined;
  const remaining = metadata.remainingItemCount;
  if (typeof remaining === 'number') return Number.isInteger(remaining) && remaining >= 0 ? items.length + remaining : undefined;
  // More pages but no count: the server would not say how many (it always does for a plain list).
  if (typeof metadata.continue === 'string' && metadata.continue !== '') return undefined;
  return items.length;
}
