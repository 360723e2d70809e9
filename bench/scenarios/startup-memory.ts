// bench/scenarios/startup-memory owns the startup and memory rows: spawn to the first /readyz
// 200 with nothing stored and with the stored pods (50,000 in a full run), the idle RSS after
// start, and the RSS with those pods (per pod over the pod's own size).
// Imports: context, report/rows, support/proc-stats.

import type { BenchContext } from '../context.js';
import { ratioOf } from '../report/rows.js';
import { readMemory } from '../support/proc-stats.js';

const MB = 1024 * 1024;

/** Call right after the first start (which generated the PKI): restarts with nothing stored. */
export async function startupEmptyScenario(ctx: BenchContext, firstStartMs: number): Promise<void> {
  const restarts = ctx.plan.startupRestarts;
  ctx.progress.step(`startup: restarting ${restarts} times with nothing stored`);
  const times: number[] = [];
  for (let i = 0; i < restarts; i++) times.push(await ctx.restartServer());
  const readyMs = [...times].sort((a, b) => a - b)[Math.floor(restarts / 2)]!;
  await new Promise((r) => setTimeout(r, ctx.plan.settleMs));
  const idle = readMemory(ctx.server.pid);
  ctx.idleRssBytes = idle?.rssBytes;
  ctx.raw.startupEmpty = { firstStartMs, times, idle };
  ctx.add({ scenario: 'startup to /readyz 200, nothing stored', figure: 'seconds', unit: 's', value: readyMs / 1000, target: '≤ 0.5 s', holds: readyMs <= 500, note: `median of ${restarts} restarts (${times.map((t) => (t / 1000).toFixed(2)).join(', ')} s), from spawning node to the first 200; the very first start (generating the CA and certificates) took ${(firstStartMs / 1000).toFixed(2)} s` });
  ctx.add({ scenario: 'idle RSS after start', figure: 'MB', unit: 'MB', value: idle ? idle.rssBytes / MB : null, target: '≤ 80 MB', holds: idle ? idle.rssBytes <= 80 * MB : null, note: `VmRSS ${ctx.plan.settleMs / 1000} s after /readyz answered 200` });
}

/** Tops the stored pods up to the plan's count, restarts, and measures startup and RSS. */
export async function storedObjectsScenario(ctx: BenchContext): Promise<void> {
  const { plan } = ctx;
  const before = await countPods(ctx);
  if (plan.storedPods > before) await ctx.fillPods('bench-fill', 'fill-', plan.storedPods - before);
  const stored = await countPods(ctx);
  const label = stored.toLocaleString('en-US');
  ctx.progress.step(`startup: restarting with ${label} pods stored`);
  const readyMs = await ctx.restartServer();
  await new Promise((r) => setTimeout(r, ctx.plan.settleMs));
  const mem = readMemory(ctx.server.pid);
  const idle = ctx.idleRssBytes;
  const perPod = mem && idle !== undefined ? (mem.rssBytes - idle) / stored : null;
  const overObject = perPod === null ? null : perPod - ctx.podBytes;
  ctx.raw.storedObjects = { stored, readyMs, mem, idle, podBytes: ctx.podBytes, perPod };
  const fullSize = plan.storedPods >= 50_000;
  const scaleNote = fullSize ? '' : ` (this ${plan.mode} run stores ${label} pods; the target is for 50,000)`;
  ctx.add({ scenario: `startup to /readyz 200 with ${label} pods stored`, figure: 'seconds', unit: 's', value: readyMs / 1000, target: '≤ 3 s with 50,000', holds: fullSize ? readyMs <= 3000 : null, note: `restart of the server on its LevelDB data${scaleNote}` });
  ctx.add({ scenario: `RSS with ${label} pods`, figure: 'MB', unit: 'MB', value: mem ? mem.rssBytes / MB : null, target: 'reported', holds: null, note: `VmRSS ${ctx.plan.settleMs / 1000} s after /readyz after the restart` });
  ctx.add({
    scenario: `RSS with ${label} pods`,
    figure: 'bytes per pod over its own size',
    unit: 'B',
    value: overObject,
    baseline: { name: 'pod JSON size', value: ctx.podBytes },
    ratio: ratioOf(perPod, ctx.podBytes),
    target: '≤ 2,000 B over the object size per object',
    holds: overObject === null ? null : overObject <= 2000,
    note: `(RSS with pods − idle RSS) / pods = ${perPod === null ? '?' : Math.round(perPod)} B per pod; a pod is ${ctx.podBytes} B of JSON${scaleNote}`,
  });
}

/** Pods stored, from a one-item list's remainingItemCount, else the bench's own count. */
async function countPods(ctx: BenchContext): Promise<number> {
  const r = await ctx.admin.get('/api/v1/pods?limit=1');
  if (r.status === 200) {
    const list = r.json<{ items: unknown[]; metadata: { remainingItemCount?: number } }>();
    if (typeof list.metadata.remainingItemCount === 'number') return list.metadata.remainingItemCount + list.items.length;
  }
  return ctx.storedPods;
}
