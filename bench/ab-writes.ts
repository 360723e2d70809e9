// bench/ab-writes owns comparing the write path of two builds side by side: this checkout's
// server and another checkout's (`--base DIR`, built with `make build`) run at once on fresh data
// directories. Each is warmed up, then short slices of pod creates (then unconditional PUTs of
// those pods) alternate between them, the order swapped every slice, and each server's CPU per
// request is summed from /proc over its own slices. A change of a few per cent is below the
// throughput noise of a shared machine whose speed drifts by tens of per cent within minutes;
// interleaved slices put both builds under the same drift, and CPU per request does not depend
// on what else ran meanwhile the way a rate does. Imports: context (CREATED), load/http-load,
// scenarios/fixtures, support/proc-stats, targets/clusterd-process.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runHttpLoad } from './load/http-load.js';
import { CREATED } from './context.js';
import type { HttpJob, RequestTemplate } from './load/protocol.js';
import { podTemplate } from './scenarios/fixtures.js';
import { readCpuMs } from './support/proc-stats.js';
import { ClusterdProcess } from './targets/clusterd-process.js';

export interface AbOptions {
  base: string;
  slices: number;
  sliceMs: number;
  warmupMs: number;
  inFlight: number;
  ops: AbOp[];
}

export type AbOp = 'create' | 'put';

const HELP = `usage: node dist/bench/ab-writes.js --base DIR [flags]

Runs this checkout's server and the one built in DIR side by side (both at once, fresh data
directories, fsync on) and compares their CPU per write: after a warm-up of each, short slices
of 32-in-flight pod creates, then unconditional PUTs of those pods, alternate between the two
servers (the order swapped every slice). Prints each server's CPU per request (user + system,
from /proc, summed over its slices), its rate, and the ratio this / base. Meant for changes too
small for make bench's rates to show on a shared machine.

flags:
  --base DIR            a checkout of the build to compare with, built (DIR/dist/cmd/clusterd/main.js)
  --slices N            measured slices per server and operation (default 8)
  --slice-seconds S     length of each slice (default 4)
  --warmup-seconds S    unmeasured load on each server before each operation's slices (default 20)
  --in-flight N         requests in flight (default 32, as make bench's write rows)
  --ops LIST            create,put (default both; put needs the creates before it)
  --help                this text
`;

/** Parses the flags; throws an Error with what is wrong. */
export function parseAbArgs(argv: readonly string[]): AbOptions | 'help' {
  const o: AbOptions = { base: '', slices: 8, sliceMs: 4000, warmupMs: 20_000, inFlight: 32, ops: ['create', 'put'] };
  const number = (flag: string, v: string | undefined, min: number): number => {
    const n = Number(v);
    if (v === undefined || v === '' || !Number.isFinite(n) || n < min) throw new Error(`${flag} needs a number of at least ${min}, not ${v === undefined ? 'nothing' : JSON.stringify(v)}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.includes('=') ? (argv[i]!.split(/=(.*)/s, 2) as [string, string]) : [argv[i]!, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case '--help':
      case '-h':
        return 'help';
      case '--base':
        o.base = value() ?? '';
        break;
      case '--slices':
        o.slices = Math.round(number(flag, value(), 1));
        break;
      case '--slice-seconds':
        o.sliceMs = number(flag, value(), 0.1) * 1000;
        break;
      case '--warmup-seconds':
        o.warmupMs = number(flag, value(), 0) * 1000;
        break;
      case '--in-flight':
        o.inFlight = Math.round(number(flag, value(), 1));
        break;
      case '--ops': {
        const ops = (value() ?? '').split(',').filter(Boolean);
        const unknown = ops.filter((op) => op !== 'create' && op !== 'put');
        if (ops.length === 0 || unknown.length > 0) throw new Error(`--ops takes create and put, comma-separated, not ${JSON.stringify(ops.join(','))}`);
        o.ops = ['create', 'put'].filter((op) => ops.includes(op)) as AbOp[];
        break;
      }
      default:
        throw new Error(`unknown flag ${flag} (see --help)`);
    }
  }
  if (o.base === '') throw new Error('--base DIR is required: a checkout of the build to compare with');
  return o;
}

interface Side {
  name: 'base' | 'this';
  server: ClusterdProcess;
  job: Pick<HttpJob, 'kind' | 'baseUrl' | 'tls'>;
  next: Record<AbOp, number>;
}

export interface AbSliceTotals {
  cpuMs: number;
  ok: number;
  elapsedMs: number;
  /** CPU µs per request of each slice, in order. */
  perSlice: number[];
}

/** CPU µs per request over the totals; undefined when nothing succeeded. */
export function cpuPerRequestUs(t: AbSliceTotals): number | undefined {
  return t.ok > 0 ? (t.cpuMs * 1000) / t.ok : undefined;
}

const NAMESPACE = 'ab';
const POD_PATH = `/api/v1/namespaces/${NAMESPACE}/pods`;

const REQUESTS: Record<AbOp, RequestTemplate> = {
  create: { method: 'POST', path: POD_PATH, body: { template: podTemplate({ namespace: NAMESPACE, name: 'ab-{n}', padding: 0 }) } },
  put: { method: 'PUT', path: `${POD_PATH}/ab-{m}`, body: { template: podTemplate({ namespace: NAMESPACE, name: 'ab-{m}', annotations: { 'bench/update': '{n}' }, padding: 0 }) } },
};

const log = (msg: string): void => void process.stderr.write(`${msg}\n`);

async function slice(side: Side, op: AbOp, ms: number, o: AbOptions, modulo: number): Promise<{ cpuMs: number; ok: number; elapsedMs: number; errors: Record<string, number>; firstError?: string }> {
  const before = readCpuMs(side.server.pid);
  const r = await runHttpLoad({
    ...side.job,
    connections: o.inFlight,
    warmupMs: 0,
    durationMs: ms,
    startIndex: side.next[op],
    ...(op === 'put' ? { modulo } : {}),
    request: REQUESTS[op],
    okStatus: op === 'create' ? CREATED : [200],
  });
  const after = readCpuMs(side.server.pid);
  if (before === undefined || after === undefined) throw new Error('cannot read the servers’ CPU time from /proc');
  side.next[op] = r.nextIndex;
  return { cpuMs: after - before, ok: r.ok, elapsedMs: r.elapsedMs, errors: r.errors, ...(r.firstError ? { firstError: r.firstError } : {}) };
}

export async function runAb(o: AbOptions): Promise<string> {
  const baseEntry = join(resolve(o.base), 'dist', 'cmd', 'clusterd', 'main.js');
  if (!existsSync(baseEntry)) throw new Error(`${baseEntry} is missing: build the base checkout first (make build)`);
  const scratch = mkdtempSync(join(tmpdir(), 'clusterd-ab-'));
  const sides: Side[] = [];
  try {
    for (const [name, entry] of [['base', baseEntry], ['this', undefined]] as const) {
      const { server } = await ClusterdProcess.start(join(scratch, name), [], undefined, entry);
      sides.push({ name, server, job: { kind: 'http', baseUrl: server.url, tls: server.adminTls() }, next: { create: 0, put: 1_000_000_000 } });
      log(`${name}: ${entry ?? 'this checkout'} serving at ${server.url}`);
    }
    for (const side of sides) {
      const ns = await runHttpLoad({ ...side.job, connections: 1, warmupMs: 0, requests: 1, request: { method: 'POST', path: '/api/v1/namespaces', body: { template: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"${NAMESPACE}"}}` } }, okStatus: CREATED });
      if (ns.ok !== 1) throw new Error(`${side.name}: creating namespace ${NAMESPACE}: ${ns.firstError ?? JSON.stringify(ns.errors)}`);
    }
    const rows: string[] = ['| operation | base CPU per request | this CPU per request | this / base | base rate | this rate | per slice (µs, base; this) |', '|---|---:|---:|---:|---:|---:|---|'];
    for (const op of o.ops) {
      // PUTs go round the pods every server has created (its warm-up creates included).
      const modulo = Math.max(1, Math.min(...sides.map((s) => s.next.create)));
      for (const side of sides) {
        log(`${op}: warming ${side.name} up for ${o.warmupMs / 1000} s`);
        await slice(side, op, o.warmupMs, o, modulo);
      }
      const totals = new Map<Side, AbSliceTotals>(sides.map((s) => [s, { cpuMs: 0, ok: 0, elapsedMs: 0, perSlice: [] }]));
      for (let i = 0; i < o.slices; i++) {
        for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
          const r = await slice(side, op, o.sliceMs, o, modulo);
          if (Object.keys(r.errors).length > 0) throw new Error(`${side.name}: ${op} failed: ${JSON.stringify(r.errors)} ${r.firstError ?? ''}`);
          const t = totals.get(side)!;
          t.cpuMs += r.cpuMs;
          t.ok += r.ok;
          t.elapsedMs += r.elapsedMs;
          t.perSlice.push(Math.round((r.cpuMs * 1000) / Math.max(1, r.ok)));
        }
        log(`${op}: slice ${i + 1}/${o.slices}: ${sides.map((s) => `${s.name} ${totals.get(s)!.perSlice.at(-1)} µs`).join(', ')}`);
      }
      const [b, t] = sides.map((s) => totals.get(s)!) as [AbSliceTotals, AbSliceTotals];
      const bu = cpuPerRequestUs(b);
      const tu = cpuPerRequestUs(t);
      const rate = (x: AbSliceTotals) => `${Math.round((x.ok * 1000) / Math.max(1, x.elapsedMs))}/s`;
      const us = (v: number | undefined) => (v === undefined ? '—' : `${Math.round(v)} µs`);
      rows.push(`| ${op} | ${us(bu)} | ${us(tu)} | ${bu && tu ? `${(tu / bu).toFixed(3)}×` : '—'} | ${rate(b)} | ${rate(t)} | ${b.perSlice.join(' ')}; ${t.perSlice.join(' ')} |`);
    }
    return rows.join('\n');
  } finally {
    await Promise.all(sides.map((s) => s.server.kill()));
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  let options: AbOptions | 'help';
  try {
    options = parseAbArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`ab-writes: ${(e as Error).message}\n`);
    process.exit(2);
  }
  if (options === 'help') {
    process.stdout.write(HELP);
    return;
  }
  process.stdout.write(`${await runAb(options)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((e: unknown) => {
    process.stderr.write(`ab-writes: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
