// bench/scenarios/watch owns the row "watch: 1,000 watchers, 500 writes/s": delivery latency
// p50/p99 from the writer's acknowledgement to receipt. Two shapes: fan-out (every watcher
// watches the whole collection and receives every write: watchers × writes deliveries) and
// selective (each watcher selects its own label, as kubelets watch their node's pods: one
// delivery per write). Watchers run over HTTP/2 (as client-go multiplexes watches), split
// between two generator processes so that receiving a gigabyte a second of fan-out is not
// bounded by one client thread; the paced writer runs in a third.
// Imports: context, load/*, support/proc-stats.

import { CREATED, pct, type BenchContext } from '../context.js';
import { ratioOf } from '../report/rows.js';
import { cpuMeter, machineMeter } from '../support/proc-stats.js';
import { SENT_AT_ANNOTATION } from '../load/watch-load.js';
import { mergeWatchResults } from '../load/merge.js';
import { wallClockMs, type WatchResult, type WriterResult } from '../load/protocol.js';
import { parseExposition, valueOf } from '../../internal/testserver/prometheus-text.js';

type Shape = 'fan-out' | 'selective';

export async function watchScenario(ctx: BenchContext): Promise<void> {
  for (const shape of ['fan-out', 'selective'] as const) await watchShape(ctx, shape);
}

async function watchShape(ctx: BenchContext, shape: Shape): Promise<void> {
  const { plan } = ctx;
  const namespace = `bench-watch-${shape}`;
  await ctx.ensureNamespace(namespace);
  const collection = `/api/v1/namespaces/${namespace}/pods`;
  const rv = await ctx.listResourceVersion(collection);
  const selector = shape === 'selective' ? '&labelSelector=bench-watcher%3Dw-{w}' : '';
  const scenario = `watch ${shape}: ${plan.watchers.toLocaleString('en-US')} watchers, ${plan.watchWritesPerSec} writes/s`;

  ctx.progress.step(`watch ${shape}: opening ${plan.watchers} watchers in ${ctx.watchGens.length} processes`);
  const { split, openedEach, opened } = await openFleet(ctx, ctx.server.url, `${collection}?watch=1&resourceVersion=${rv}${selector}`);

  const body = ctx.pod({ namespace, name: 'w-{n}', labels: { 'bench-watcher': 'w-{m}' }, annotations: { [SENT_AT_ANNOTATION]: '{ts}' } });
  ctx.progress.step(`watch ${shape}: writing ${plan.watchWritesPerSec}/s for ${plan.watchDurationMs / 1000} s`);
  ctx.gen.onAcks = (acks) => {
    for (const g of ctx.watchGens) g.relayAcks(acks);
  };
  // The first moments warm up every party (JIT, connection windows): counted, not measured.
  const warmUntil = wallClockMs() + plan.warmupMs;
  for (const g of ctx.watchGens) g.warmUntil(warmUntil);
  const roundsBefore = await deliveryRounds(ctx);
  const serverCpu = cpuMeter(ctx.server.pid);
  const cpuFrom = performance.now();
  const machineCpu = machineMeter();
  let writer: WriterResult;
  try {
    writer = await ctx.gen.run({
      kind: 'writer',
      baseUrl: ctx.server.url,
      tls: ctx.tls,
      ratePerSec: plan.watchWritesPerSec,
      durationMs: plan.watchDurationMs,
      maxInFlight: 64,
      modulo: plan.watchers,
      request: { method: 'POST', path: collection, body: { template: body } },
      okStatus: CREATED,
      ackIntervalMs: 20,
    });
  } finally {
    ctx.gen.onAcks = undefined;
  }
  ctx.storedPods += writer.ok;
  // Write n goes to watcher n mod watchers (selective); every watcher gets every write (fan-out).
  const expectedOf = (i: number) =>
    shape === 'fan-out' ? writer.ok * openedEach[i]!.established : writesTo(split[i]!, writer.ok, plan.watchers) * (openedEach[i]!.established / split[i]!.count);
  const expected = ctx.watchGens.reduce((n, _, i) => n + expectedOf(i), 0);
  ctx.progress.step(`watch ${shape}: ${writer.ok} writes acknowledged (p99 ${writer.latency.p99Ms} ms); waiting for ${Math.round(expected)} deliveries`);
  const watched: WatchResult = mergeWatchResults(await Promise.all(ctx.watchGens.map((g, i) => g.finishWatchers(Math.round(expectedOf(i)), 15_000))));
  const server = serverCpu.stop();
  const deliveredWithinMs = performance.now() - cpuFrom;
  const serverCpuMs = server === undefined ? undefined : server * deliveredWithinMs;
  const machine = machineCpu.stop();
  const rounds = roundsDuring(roundsBefore, await deliveryRounds(ctx), deliveredWithinMs);
  ctx.raw[`watch ${shape}`] = { opened, writer, watched, rounds };
  ctx.progress.step(`  delivered ${watched.delivered}/${watched.expected}, p50 ${watched.fromAck.p50Ms} ms, p99 ${watched.fromAck.p99Ms} ms`);

  const achievedRate = (writer.ok * 1000) / writer.elapsedMs;
  const complete = watched.delivered >= watched.expected && opened.failed === 0;
  const errors = Object.entries(writer.errors).map(([k, v]) => `${k}×${v}`).join(', ');
  const events = Object.entries(watched.events).map(([k, v]) => `${k} ${v}`).join(', ');
  const note =
    `${opened.established}/${plan.watchers} watchers over HTTP/2 (${plan.watchClient} client); ${writer.ok} writes at ${achievedRate.toFixed(0)}/s ` +
    `(write p99 ${writer.latency.p99Ms} ms${errors ? `, errors ${errors}: ${writer.firstError}` : ''}${writer.late ? `, writer held back at ${writer.late} ticks` : ''}); ` +
    `delivered ${watched.delivered} of ${watched.expected} expected (${events}; ${watched.closedEarly} streams closed by the server); ` +
    `CPU from the first write to the last delivery: clusterd ${pct(server)}${perDelivery(serverCpuMs, watched.delivered)}, watcher processes ${pct(watched.generatorCpu)} together, writer ${pct(writer.generatorCpu)}, whole machine ${machine === undefined ? '?' : `${machine.toFixed(2)} cores`}` +
    (rounds ? `; clusterd's delivery rounds (its /metrics): ${rounds}` : '');
  const p99 = watched.fromAck.count ? watched.fromAck.p99Ms : null;
  // The ceiling runs twice: at the rate clusterd's writer achieved (the same load, for the
  // ratio) and, when that fell short, at the target rate (can this machine do it at all?).
  const ceiling = shape === 'fan-out' && p99 !== null ? await ceilingFanOut(ctx, collection, writer.ok, Math.min(plan.watchWritesPerSec, achievedRate)) : undefined;
  const ceilingAtTarget =
    ceiling && achievedRate < plan.watchWritesPerSec * 0.95 ? await ceilingFanOut(ctx, collection, Math.round((plan.watchWritesPerSec * plan.watchDurationMs) / 1000), plan.watchWritesPerSec) : ceiling;
  const p99Note = [complete ? '' : `incomplete delivery counts as missing the target: ${watched.delivered} of ${watched.expected} events arrived`, ceiling?.note ?? ''].filter(Boolean).join('; ');
  const got = watched.fromSend.count > 0;
  ctx.add({
    scenario,
    figure: 'delivery p50 (from write ack)',
    unit: 'ms',
    value: watched.fromAck.count ? watched.fromAck.p50Ms : null,
    target: 'reported',
    holds: null,
    note: `${note}. Events written in the first ${plan.warmupMs} ms are delivered but not measured (warm-up). An event that reaches its watcher before the writer has read its own response counts as 0 ms from the acknowledgement`,
  });
  ctx.add({
    scenario,
    figure: 'delivery p99 (from write ack)',
    unit: 'ms',
    value: p99,
    ...(ceiling ? { baseline: { name: 'ceiling', value: ceiling.p99Ms }, ratio: ratioOf(p99!, ceiling.p99Ms) } : {}),
    ...deliveryTarget(shape, p99, complete, achievedRate, ceiling, ceilingAtTarget, plan.watchWritesPerSec),
    ...(p99Note ? { note: p99Note } : {}),
  });
  if (ceiling) {
    // The CPU each server spent per event it delivered, at the same rate: on a machine shared
    // with other work the latencies swing with the load, while this compares the work itself.
    const clusterdUs = perDeliveryUs(serverCpuMs, watched.delivered);
    ctx.add({
      scenario,
      figure: 'server CPU per delivered event',
      unit: 'µs',
      value: clusterdUs,
      baseline: { name: 'ceiling', value: ceiling.cpuPerDeliveryUs },
      ratio: ratioOf(clusterdUs, ceiling.cpuPerDeliveryUs),
      target: 'reported',
      holds: null,
      note: "CPU time of the server process (/proc, all threads) from the first write to the last delivery, over the events its watchers received; clusterd's includes serving the writes (about one POST per 1,000 deliveries here)",
    });
  }
  if (ceilingAtTarget) {
    ctx.add({
      scenario,
      figure: `ceiling's delivery p99 at ${plan.watchWritesPerSec} events/s`,
      unit: 'ms',
      value: ceilingAtTarget.p99Ms,
      target: 'reported',
      holds: null,
      note: `the bare node:http2 server with the same watchers and event bytes at the target rate: what this machine allows at all. ${ceilingAtTarget.note}`,
    });
  }
  ctx.add({ scenario, figure: 'delivery p50 (from send time in the object)', unit: 'ms', value: got ? watched.fromSend.p50Ms : null, target: 'reported', holds: null });
  ctx.add({ scenario, figure: 'delivery p99 (from send time in the object)', unit: 'ms', value: got ? watched.fromSend.p99Ms : null, target: 'reported', holds: null, note: 'includes the write itself (fsync) before the event exists' });
}

/** clusterd's delivery-round figures from its /metrics (undefined when it does not serve them). */
async function deliveryRounds(ctx: BenchContext): Promise<RoundFigures | undefined> {
  const res = await ctx.admin.get('/metrics');
  if (res.status !== 200) return undefined;
  const e = parseExposition(res.text());
  const read = (name: string) => valueOf(e, name, {});
  const rounds = read('clusterd_watch_delivery_lag_seconds_count');
  const lagSeconds = read('clusterd_watch_delivery_lag_seconds_sum');
  const roundSeconds = read('clusterd_watch_delivery_round_duration_seconds_sum');
  const woken = read('clusterd_watch_delivery_woken_total');
  if (rounds === undefined || lagSeconds === undefined || roundSeconds === undefined || woken === undefined) return undefined;
  return { rounds, lagSeconds, roundSeconds, woken };
}

interface RoundFigures {
  rounds: number;
  lagSeconds: number;
  roundSeconds: number;
  woken: number;
}

/**
 * What the rounds did between two readings, in words: how many and how often, how many streams
 * each wrote, the mean wait of a change for its round and the mean round. (Readings are made
 * outside the measured phase; the /metrics request itself wakes nobody.)
 */
export function roundsDuring(before: RoundFigures | undefined, after: RoundFigures | undefined, elapsedMs: number): string | undefined {
  if (!before || !after) return undefined;
  const rounds = after.rounds - before.rounds;
  if (rounds <= 0 || elapsedMs <= 0) return undefined;
  const ms = (seconds: number) => ((seconds * 1000) / rounds).toFixed(2);
  return (
    `${rounds} rounds (${((rounds * 1000) / elapsedMs).toFixed(0)}/s), ${Math.round((after.woken - before.woken) / rounds)} streams written per round, ` +
    `mean wait of a change for its round ${ms(after.lagSeconds - before.lagSeconds)} ms, mean round ${ms(after.roundSeconds - before.roundSeconds)} ms`
  );
}

/** Opens the scenario's watchers on `path` at `baseUrl`, split between the watcher processes. */
async function openFleet(ctx: BenchContext, baseUrl: string, path: string) {
  const split = splitWatchers(ctx.plan.watchers, ctx.watchGens.length);
  const openedEach = await Promise.all(
    ctx.watchGens.map((g, i) =>
      g.openWatchers({ kind: 'watch', baseUrl, tls: ctx.tls, watchers: split[i]!.count, firstIndex: split[i]!.first, path, protocol: 'http2', streamsPerSession: 100, client: ctx.plan.watchClient }),
    ),
  );
  const opened = {
    established: openedEach.reduce((n, o) => n + o.established, 0),
    failed: openedEach.reduce((n, o) => n + o.failed, 0),
    firstError: openedEach.find((o) => o.firstError)?.firstError,
  };
  if (opened.failed > 0) ctx.progress.step(`  ${opened.failed} watchers failed to open: ${opened.firstError}`);
  return { split, openedEach, opened };
}

/**
 * The same fan-out from the ceiling: a bare node:http2 server with the same certificates sends
 * events made from one of the pods just written (as clusterd served it, framed as clusterd
 * frames it) to the same watcher processes, `events` of them at `ratePerSec`,
 * writing each batch once to every stream as soon as its loop is free. Its latency counts from
 * the moment an event is built, clusterd's from the writer's acknowledgement.
 */
async function ceilingFanOut(
  ctx: BenchContext,
  collection: string,
  events: number,
  ratePerSec: number,
): Promise<{ p99Ms: number; sustainedPerSec: number; cpuPerDeliveryUs: number | null; note: string }> {
  const { plan } = ctx;
  const served = await ctx.admin.get(`${collection}/w-0`);
  if (served.status !== 200) throw new Error(`get ${collection}/w-0: ${served.status}`);
  const pod = served
    .text()
    .replace(/"resourceVersion":"\d+"/, '"resourceVersion":"{rv}"')
    .replace(/("bench\/sent-at":")[^"]*"/, '$1{ts}"');
  if (!pod.includes('{rv}') || !pod.includes('{ts}')) throw new Error('ceiling fan-out: the served pod lacks resourceVersion or the send-time annotation');
  const url = await ctx.ceiling.http2Url();
  ctx.progress.step(`watch fan-out, ceiling: opening ${plan.watchers} watchers on a bare node:http2 server`);
  const { openedEach } = await openFleet(ctx, url, `${collection}?watch=1`);
  ctx.progress.step(`watch fan-out, ceiling: emitting ${events} events at ${ratePerSec.toFixed(0)}/s`);
  const warmUntil = wallClockMs() + plan.warmupMs;
  for (const g of ctx.watchGens) g.warmUntil(warmUntil);
  const ceilingCpu = cpuMeter(ctx.ceiling.pid);
  const cpuFrom = performance.now();
  const emitted = await ctx.ceiling.emitWatchEvents(
    { eventTemplate: `{"type":"ADDED","object":${pod}}\n`, ratePerSec, durationMs: (events * 1000) / ratePerSec, firstRevision: 1, ackIntervalMs: 20 },
    (acks) => {
      for (const g of ctx.watchGens) g.relayAcks(acks);
    },
  );
  const watched = mergeWatchResults(await Promise.all(ctx.watchGens.map((g, i) => g.finishWatchers(emitted.count * openedEach[i]!.established, 15_000))));
  // The watcher processes report as soon as the last expected event arrives (or the wait ends).
  const deliveredWithinMs = performance.now() - cpuFrom;
  const cpu = ceilingCpu.stop();
  const cpuMs = cpu === undefined ? undefined : cpu * (performance.now() - cpuFrom);
  ctx.raw[`watch fan-out ceiling at ${ratePerSec.toFixed(0)}/s`] = { emitted, watched, deliveredWithinMs };
  ctx.progress.step(`  ceiling delivered ${watched.delivered}/${watched.expected}, p50 ${watched.fromAck.p50Ms} ms, p99 ${watched.fromAck.p99Ms} ms`);
  const watchers = openedEach.reduce((n, o) => n + o.established, 0);
  const sustainedPerSec = sustainedRate({ ...emitted, watchers, delivered: watched.delivered, deliveredWithinMs });
  return {
    p99Ms: watched.fromAck.p99Ms,
    sustainedPerSec,
    cpuPerDeliveryUs: perDeliveryUs(cpuMs, watched.delivered),
    note:
      `ceiling at ${ratePerSec.toFixed(0)} events/s: ${emitted.count} events in ${(emitted.elapsedMs / 1000).toFixed(1)} s, delivered ${watched.delivered} of ${watched.expected} ` +
      `within ${(deliveredWithinMs / 1000).toFixed(1)} s of the first (sustained ${sustainedPerSec.toFixed(0)} events/s to every watcher), ` +
      `p50 ${watched.fromAck.p50Ms} ms, p99 ${watched.fromAck.p99Ms} ms from the event's creation; CPU: ceiling ${pct(cpu)}${perDelivery(cpuMs, watched.delivered)}, watcher processes ${pct(watched.generatorCpu)} together`,
  };
}

/**
 * Issue 19's target for fan-out: p99 at most twice the ceiling's at the rate clusterd's writer
 * reached, and that rate not held back below what the ceiling sustains (the target rate, or,
 * when the ceiling cannot keep up with it on this machine, the rate it delivered at: see
 * sustainedRate). Selective watches keep an
 * absolute bound: one delivery per write has no fan-out for a ceiling to be measured on.
 */
export function deliveryTarget(
  shape: Shape,
  p99: number | null,
  complete: boolean,
  achievedRate: number,
  ceiling: { p99Ms: number } | undefined,
  ceilingAtTarget: { sustainedPerSec: number } | undefined,
  targetRate: number,
): { target: string; holds: boolean | null } {
  if (shape === 'selective') return { target: 'p99 ≤ 100 ms', holds: p99 === null ? null : p99 <= 100 && complete };
  const target = 'p99 ≤ 2 × ceiling at the same rate; writer ≥ 0.95 × the rate the ceiling sustains';
  if (p99 === null || ceiling === undefined || ceilingAtTarget === undefined) return { target, holds: p99 === null ? null : false };
  const sustained = Math.min(targetRate, ceilingAtTarget.sustainedPerSec);
  return { target, holds: complete && p99 <= 2 * ceiling.p99Ms && achievedRate >= 0.95 * sustained };
}

/**
 * The rate a fan-out server sustained: events delivered to each watcher over the time from the
 * first emission to the last delivery (or the end of the wait for them), at most the rate it
 * emitted at. Emitting is not delivering: a server that falls behind emits on schedule and
 * leaves the events queued (the ceiling once emitted 1,500 events at 500/s and delivered
 * 295,170 of the 1,500,000 expected before the wait ended), and its emit rate would hold
 * clusterd's writer to a rate nothing on the machine reached.
 */
export function sustainedRate(run: { count: number; elapsedMs: number; watchers: number; delivered: number; deliveredWithinMs: number }): number {
  if (run.count === 0 || run.watchers === 0 || run.elapsedMs <= 0) return 0;
  const emittedPerSec = (run.count * 1000) / run.elapsedMs;
  const perWatcher = Math.min(run.count, run.delivered / run.watchers);
  return Math.min(emittedPerSec, (perWatcher * 1000) / Math.max(run.elapsedMs, run.deliveredWithinMs));
}

/**
 * A server's CPU per delivered event: on a machine shared with other work, the wall-clock
 * latencies swing with the load but this compares clusterd's cost with the ceiling's.
 */
function perDelivery(cpuMs: number | undefined, delivered: number): string {
  const us = perDeliveryUs(cpuMs, delivered);
  return us === null ? '' : ` (${us.toFixed(1)} µs per delivered event)`;
}

/** CPU microseconds per delivered event; null when the CPU is unknown or nothing arrived. */
export function perDeliveryUs(cpuMs: number | undefined, delivered: number): number | null {
  return cpuMs === undefined || delivered <= 0 ? null : (cpuMs * 1000) / delivered;
}

/** Contiguous ranges of watcher indices, one per watcher process. */
function splitWatchers(watchers: number, processes: number): { first: number; count: number }[] {
  const out: { first: number; count: number }[] = [];
  let first = 0;
  for (let i = 0; i < processes; i++) {
    const count = Math.floor(watchers / processes) + (i < watchers % processes ? 1 : 0);
    out.push({ first, count });
    first += count;
  }
  return out;
}

/** How many of writes 0..writes-1 land on watchers [first, first + count) when write n goes to n mod watchers. */
function writesTo(range: { first: number; count: number }, writes: number, watchers: number): number {
  const full = Math.floor(writes / watchers) * range.count;
  const rest = writes % watchers;
  return full + Math.max(0, Math.min(rest, range.first + range.count) - range.first);
}
