// bench/scenarios/encodings owns the encoding rows (issue 5): a 10,000-pod list from cache in
// JSON, protobuf and CBOR — time per list once warm, bytes, and the cost per object (the first
// list in that encoding divided by the pods: it encodes every object the server has not encoded
// ahead, and the list pods are written just before, so protobuf finds them encoded in idle time
// if the server does that, and CBOR does not) — with JSON as the baseline. An encoding the server does not serve (406) is
// reported as n/a, so the rows light up when it lands. CBOR is alpha (gate
// CBORServingAndStorage, off by default), so it is measured on a second server started with the
// gate, next to JSON on that same server. Every encoding's list is decoded once after its timed
// lists and must hold all the pods, in as many bytes as the timed lists read: a scenario that
// listed an empty or partial collection fails instead of reporting its figures.
// Imports: internal/codec, internal/naming, internal/testserver, context, report/rows,
// scenarios/list, targets/clusterd-process.

import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { decodeCbor, ProtobufCodec } from '../../internal/codec/index.js';
import { createNaming } from '../../internal/naming/naming.js';
import { ApiClient } from '../../internal/testserver/api-client.js';
import { CREATED, type BenchContext } from '../context.js';
import { notAvailable, ratioOf } from '../report/rows.js';
import { ClusterdProcess } from '../targets/clusterd-process.js';
import { ensureListPods, LIST_NAMESPACE } from './list.js';

interface EncodingFigures {
  /** The first full list in this encoding: every object is encoded (or found cached). */
  firstMs: number;
  /** Mean of the lists after it. */
  warmMs: number;
  bytes: number;
}

const NOT_SERVED = new Set([404, 405, 406, 415]);

export async function encodingsScenario(ctx: BenchContext): Promise<void> {
  const count = ctx.plan.listPods;
  const listScenario = `encodings: ${count.toLocaleString('en-US')}-pod list from cache`;
  const costScenario = 'encodings: cost per object (first list / pods)';
  await ensureListPods(ctx);
  const json = await measureList(ctx, ctx.server, 'JSON', 'application/json');
  const protobuf = await measureList(ctx, ctx.server, 'protobuf', 'application/vnd.cluster.protobuf');
  let cbor: EncodingFigures | string;
  let cborJson: EncodingFigures | string = 'no CBOR server';
  if (ctx.plan.cborServer) [cbor, cborJson] = await cborOnGatedServer(ctx);
  else cbor = `not measured in a ${ctx.plan.mode} run (it needs a second server with the CBOR gate)`;

  // Issue 19's targets: warm lists at most `warmBound` × JSON's time (protobuf's bytes are 0.69×
  // JSON's, CBOR's about the same), and the first protobuf list — the one that encodes every
  // object not encoded ahead — at most twice a later one.
  const rows = (name: string, figures: EncodingFigures | string, baseline: EncodingFigures | string, baselineName: string, warmBound?: number, firstBound?: number) => {
    if (typeof figures === 'string') {
      ctx.add(notAvailable(listScenario, `${name} time per list`, 'reported', figures));
      ctx.add(notAvailable(costScenario, `${name} µs per object`, 'reported', figures));
      return;
    }
    const base = typeof baseline === 'string' || name === 'JSON' ? undefined : baseline;
    const versus = (value: number, baseValue: number | undefined) => (base && baseValue !== undefined ? { baseline: { name: baselineName, value: baseValue }, ratio: ratioOf(value, baseValue) } : {});
    const note = `${(figures.bytes / 1e6).toFixed(1)} MB per list (${Math.round(figures.bytes / count)} B per pod)${base ? `; ${baselineName}: ${(base.bytes / 1e6).toFixed(1)} MB` : ''}; the first list took ${figures.firstMs.toFixed(1)} ms`;
    const warm = versus(figures.warmMs, base?.warmMs);
    const warmRatio = 'ratio' in warm ? (warm.ratio ?? null) : null;
    const warmTarget = warmBound === undefined ? { target: 'reported', holds: null } : { target: `≤ ${warmBound} × ${baselineName}`, holds: warmRatio === null ? null : warmRatio <= warmBound };
    ctx.add({ scenario: listScenario, figure: `${name} time per list (after the first)`, unit: 'ms', value: figures.warmMs, ...warm, ...warmTarget, note });
    if (firstBound !== undefined) {
      const firstRatio = ratioOf(figures.firstMs, figures.warmMs);
      ctx.add({ scenario: listScenario, figure: `${name} first list`, unit: 'ms', value: figures.firstMs, baseline: { name: `${name} lists after it`, value: figures.warmMs }, ratio: firstRatio, target: `≤ ${firstBound} × later lists`, holds: firstRatio === null ? null : firstRatio <= firstBound });
    }
    const perObject = (ms: number) => (ms * 1000) / count;
    ctx.add({ scenario: costScenario, figure: `${name} µs per object`, unit: 'µs', value: perObject(figures.firstMs), ...versus(perObject(figures.firstMs), base ? perObject(base.firstMs) : undefined), target: 'reported', holds: null });
  };
  rows('JSON', json, json, 'JSON');
  rows('protobuf', protobuf, json, 'JSON', 0.7, 2);
  rows('CBOR', cbor, cborJson, 'JSON on the CBOR-gated server', 1.0);
}

/** Lists the list scenario's pods in one encoding; a string says why it could not. */
async function measureList(ctx: BenchContext, server: ClusterdProcess, name: string, accept: string, admin: ApiClient = ctx.admin): Promise<EncodingFigures | string> {
  const path = `/api/v1/namespaces/${LIST_NAMESPACE}/pods?resourceVersion=0`;
  const probe = await admin.get(`${path}&limit=1`, { accept });
  if (NOT_SERVED.has(probe.status)) return `feature not served yet (${name}: ${probe.status})`;
  if (probe.status !== 200) return `${name} list answered ${probe.status}: ${probe.text().slice(0, 200)}`;
  const job = (requests: number) => ({
    kind: 'http' as const,
    baseUrl: server.url,
    tls: server.adminTls(),
    connections: 1,
    warmupMs: 0,
    requests,
    // Open the connection first, so the first list's time is the list's alone.
    prime: { method: 'GET', path: '/readyz' },
    request: { method: 'GET', path, headers: { accept } },
    okStatus: [200],
  });
  const first = await ctx.measure(`encodings: ${name} first list`, job(1), server.pid);
  const warm = await ctx.measure(`encodings: ${name} lists`, job(Math.max(1, ctx.plan.listRepeats)), server.pid);
  for (const m of [first, warm]) if (m.result.ok !== m.result.requests) return `${name} lists failed: ${m.result.firstError}`;
  // Checked after the timed lists, so that this read does not encode the items ahead of the first.
  const body = await admin.get(path, { accept });
  if (body.status !== 200) return `${name} list answered ${body.status}: ${body.text().slice(0, 200)}`;
  const items = itemCount(accept, body.body);
  if (items !== ctx.plan.listPods) throw new Error(`encodings: the ${name} list holds ${items} pods, expected ${ctx.plan.listPods}`);
  for (const m of [first, warm]) {
    const perList = m.result.bytesIn / m.result.requests;
    if (perList !== body.body.length) throw new Error(`encodings: the timed ${name} lists read ${perList} bytes each, the checked list is ${body.body.length}`);
  }
  return { firstMs: first.result.latency.meanMs, warmMs: warm.result.latency.meanMs, bytes: warm.result.bytesIn / warm.result.requests };
}

/** The items of a list body in the encoding `accept` asked for, decoded with the project's codecs. */
function itemCount(accept: string, body: Buffer): number {
  let list: unknown;
  if (accept === 'application/json') list = JSON.parse(body.toString('utf8'));
  else if (accept === 'application/cbor') list = decodeCbor(body, { maxArrayElements: Number.MAX_SAFE_INTEGER }).value;
  else list = new ProtobufCodec(createNaming('cluster')).decode(body);
  const items = (list as { items?: unknown }).items;
  if (!Array.isArray(items)) throw new Error(`encodings: the ${accept} list has no items array`);
  return items.length;
}

async function cborOnGatedServer(ctx: BenchContext): Promise<[EncodingFigures | string, EncodingFigures | string]> {
  ctx.progress.step('encodings: starting a second server with CBORServingAndStorage=true');
  let started;
  try {
    started = await ClusterdProcess.start(mkdtempSync(join(ctx.scratchDir, 'cbor-')), ['--storage=memory', '--feature-gates=CBORServingAndStorage=true', '--log-level=error']);
  } catch (e) {
    const why = `the server refused the CBOR gate: ${(e as Error).message.split('\n').slice(0, 3).join(' ')}`;
    return [why, why];
  }
  const server = started.server;
  const t = server.adminTls();
  const admin = new ApiClient(server.url, { caPem: t.ca, certPem: t.cert, keyPem: t.key });
  try {
    const probe = await admin.get('/api/v1/namespaces/default', { accept: 'application/cbor' });
    if (NOT_SERVED.has(probe.status)) {
      const why = `feature not served yet (CBOR: ${probe.status} with the gate on)`;
      return [why, why];
    }
    const ns = await admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: LIST_NAMESPACE } });
    if (!CREATED.includes(ns.status)) throw new Error(`namespace on the CBOR server: ${ns.status}`);
    const fill = await ctx.gen.run({ kind: 'http', baseUrl: server.url, tls: t, connections: 64, warmupMs: 0, requests: ctx.plan.listPods, request: { method: 'POST', path: `/api/v1/namespaces/${LIST_NAMESPACE}/pods`, body: { template: ctx.pod({ namespace: LIST_NAMESPACE, name: 'list-{n}' }) } }, okStatus: CREATED });
    if (fill.ok !== ctx.plan.listPods) throw new Error(`filling the CBOR server: ${fill.firstError}`);
    const json = await measureList(ctx, server, 'JSON (CBOR server)', 'application/json', admin);
    const cbor = await measureList(ctx, server, 'CBOR', 'application/cbor', admin);
    return [cbor, json];
  } finally {
    admin.close();
    await server.stop();
  }
}
