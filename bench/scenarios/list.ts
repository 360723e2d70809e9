// bench/scenarios/list owns the row "LIST 10,000 pods from cache": time per full list
// (resourceVersion=0, so the watch cache answers as it is), bytes/s, and the server's peak RSS
// above its idle RSS during the lists, next to the ceiling sending the same bytes.
// Imports: context, report/rows, support/proc-stats.

import { cpuNote, type BenchContext } from '../context.js';
import { ratioOf } from '../report/rows.js';
import { readMemory, resetPeakRss, RssSampler } from '../support/proc-stats.js';

export const LIST_NAMESPACE = 'bench-list';

/**
 * Fills the list namespace with the plan's pods unless it already holds them: the list and
 * encodings scenarios list the same pods, and either may run without the other (--only).
 * Anything but none or all of them is an error, so no scenario lists a collection of the wrong size.
 */
export async function ensureListPods(ctx: BenchContext): Promise<void> {
  const count = ctx.plan.listPods;
  const probe = await ctx.admin.get(`/api/v1/namespaces/${LIST_NAMESPACE}/pods?limit=1`);
  if (probe.status !== 200) throw new Error(`counting the list pods: ${probe.status} ${probe.text().slice(0, 300)}`);
  const page = probe.json<{ items: unknown[]; metadata: { remainingItemCount?: number } }>();
  const have = page.items.length + (page.metadata.remainingItemCount ?? 0);
  if (have === 0) await ctx.fillPods(LIST_NAMESPACE, 'list-', count);
  else if (have !== count) throw new Error(`namespace ${LIST_NAMESPACE} holds ${have} pods, expected none or ${count}`);
}

export async function listScenario(ctx: BenchContext): Promise<void> {
  const { plan } = ctx;
  const count = plan.listPods;
  const scenario = `LIST ${count.toLocaleString('en-US')} pods from cache`;
  await ensureListPods(ctx);
  const path = `/api/v1/namespaces/${LIST_NAMESPACE}/pods?resourceVersion=0`;
  const headers = { accept: 'application/json' };
  const real = await ctx.admin.get(path, headers);
  if (real.status !== 200) throw new Error(`list: ${real.status} ${real.text().slice(0, 300)}`);
  const items = real.json<{ items: unknown[] }>().items.length;
  if (items !== count) throw new Error(`list returned ${items} pods, expected ${count}`);
  const body = real.body.length;
  await ctx.ceiling.route('GET', path, real.status, real.headers, real.body);
  // Let the fill's garbage settle before taking the idle figure.
  await new Promise((r) => setTimeout(r, plan.settleMs));

  const job = { connections: 1, warmupMs: 0, requests: Math.ceil(plan.listRepeats / plan.rounds), request: { method: 'GET', path, headers }, okStatus: [200] };
  const idle = readMemory(ctx.server.pid);
  const hwmReset = resetPeakRss(ctx.server.pid);
  const sampler = new RssSampler(ctx.server.pid).start();
  const [ours, ceiling] = await ctx.alternate(plan.rounds, [
    (r) => ctx.measure(`list: clusterd, round ${r + 1}`, ctx.serverJob(job), ctx.server.pid),
    (r) => ctx.measure(`list: ceiling, round ${r + 1}`, { kind: 'http', baseUrl: ctx.ceiling.url, tls: ctx.tls, ...job }, ctx.ceiling.pid),
  ]);
  const sampledPeak = sampler.stop();
  const after = readMemory(ctx.server.pid);

  const peak = hwmReset && after ? Math.max(after.peakRssBytes, sampledPeak) : sampledPeak;
  const aboveIdle = idle ? peak - idle.rssBytes : null;
  const o = ours!.result;
  const c = ceiling!.result;
  const timeRatio = ratioOf(o.latency.meanMs, c.latency.meanMs);
  ctx.raw.list = { bodyBytes: body, idleRss: idle?.rssBytes, peakRss: peak, hwmReset, sampledPeak };
  const mb = (b: number) => b / (1024 * 1024);
  ctx.add({
    scenario,
    figure: 'time per list (mean)',
    unit: 'ms',
    value: o.latency.meanMs,
    baseline: { name: 'ceiling', value: c.latency.meanMs },
    ratio: timeRatio,
    target: 'time ≤ 2 × ceiling',
    holds: timeRatio === null ? null : timeRatio <= 2,
    note: `${o.requests} lists of ${(body / 1e6).toFixed(1)} MB each, one at a time over one connection, in ${plan.rounds} alternating rounds; p99 ${o.latency.p99Ms} ms vs ${c.latency.p99Ms} ms; ${cpuNote('clusterd', ours!)}; ${cpuNote('ceiling', ceiling!)}`,
  });
  ctx.add({ scenario, figure: 'bytes/s', unit: 'MB/s', value: (o.bytesIn / 1e6) / (o.elapsedMs / 1000), baseline: { name: 'ceiling', value: (c.bytesIn / 1e6) / (c.elapsedMs / 1000) }, ratio: ratioOf(o.bytesIn / o.elapsedMs, c.bytesIn / c.elapsedMs), target: 'reported', holds: null });
  ctx.add({
    scenario,
    figure: 'peak RSS above idle',
    unit: 'MB',
    value: aboveIdle === null ? null : mb(aboveIdle),
    baseline: { name: 'response body', value: mb(body) },
    ratio: ratioOf(aboveIdle, body),
    target: 'RSS ≤ 2 × body',
    holds: aboveIdle === null ? null : aboveIdle <= 2 * body,
    note: `idle ${idle ? mb(idle.rssBytes).toFixed(0) : '?'} MB before the lists; peak from ${hwmReset ? 'VmHWM (reset through clear_refs) and' : ''} VmRSS sampled every 5 ms`,
  });
}
