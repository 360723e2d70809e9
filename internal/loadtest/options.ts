// internal/loadtest/options owns the load tool's command line (`clusterd-load`, `make load`):
// the flags, their defaults, their validation (a UsageError, exit 2, for anything wrong) and the
// --help text that explains each of them. Imports: cluster-cli/args (flag syntax), config/duration.

import { parseArgs, UsageError, type FlagDef } from '../cluster-cli/args.js';
import { formatDuration, parseDuration } from '../config/duration.js';

export const REQUEST_OPS = ['create', 'update', 'get', 'list', 'delete'] as const;
export type RequestOp = (typeof REQUEST_OPS)[number];

/** Relative weights of the request operations; watchers are a count, not a weight. */
export type Mix = Record<RequestOp, number>;

export interface LoadOptions {
  kubeconfigs: string[];
  context: string | undefined;
  durationMs: number;
  processes: number;
  /** Requests in flight at once, over all processes (watches not counted). */
  concurrency: number;
  mix: Mix;
  /** Watch connections open for the whole run, over all processes and targets. */
  watchers: number;
  /** Target requests per second over all processes; 0 = closed loop. */
  rate: number;
  objectSize: number;
  namespace: string;
  keep: boolean;
  listLimit: number;
  timeoutMs: number;
  output: 'text' | 'json';
  progressIntervalMs: number;
}

export const DEFAULT_MIX = 'create=40,update=30,get=10,list=10,delete=10,watch=10';
const MAX_OBJECT_SIZE = 1_000_000;

export const HELP = `Usage: clusterd-load --kubeconfig FILE[,FILE...] [flags]
       make load ARGS="--kubeconfig FILE ... [flags]"

Drives a running clusterd (one replica or a cluster) with a mix of ConfigMap creates, updates,
gets, lists and deletes from several client processes for a fixed time, while watchers
receive the namespace's events. It prints a progress line while it runs and, at the end,
throughput, latency percentiles and errors per operation: the figures to size a deployment.

Targets:
  --kubeconfig FILE      A kubeconfig to reach one target (its current context, or --context).
                         Repeat it or give a comma list to name several targets (each replica's
                         <data-dir>/admin.kubeconfig); requests and watchers are spread over all.
                         Default: $KUBECONFIG when set. The server URL, its CA and the client
                         certificate (or bearer token) come from the kubeconfig.
  --context NAME         The context to use in every kubeconfig (default: its current-context).

Load:
  --duration D           How long to send requests (default 30s; 500ms, 90s, 5m, 1h30m...).
                         Requests still in flight at the end are waited for and counted.
  --processes N          Client processes generating the load (default 2). Each has its own
                         connections, so several processes use several cores.
  --concurrency N        Requests in flight at once over all processes (default 16, at least
                         --processes); each process keeps its share of keep-alive connections.
  --rate R               Open loop: start R requests per second in total, on schedule, whether
                         or not earlier ones have been answered (at most --concurrency in flight;
                         requests that could not start on time are reported as late).
                         Default 0: closed loop, each connection sends its next request as soon
                         as the previous one is answered (the server's capacity at --concurrency).
  --mix LIST             op=number pairs, comma-separated (default ${DEFAULT_MIX}).
                         create, update, get, list, delete are relative weights: each request is
                         drawn at random with those odds (omitted ones are 0; they need not add up
                         to 100). watch is not a weight: it is the number of watch connections kept
                         open on the namespace for the whole run (0 for none).
                           create  POST a new ConfigMap (--object-size bytes of data)
                           update  PUT an object this process created, with its last known
                                   resourceVersion as precondition; a 409 Conflict (another
                                   connection updated it first) is counted as a conflict, not an error
                           get     GET an object this process created
                           list    one page (--list-limit) of the namespace's ConfigMaps
                           delete  DELETE an object this process created and nothing else is using
                         update, get and delete need an object: while the process has none, a
                         create is sent instead (reported as creates).
  --object-size BYTES    Bytes of data in each ConfigMap (default 1024; 512, 4Ki, 1Mi...; at most ${MAX_OBJECT_SIZE}).
  --list-limit N         Objects per list request (default 100; 0 = the whole namespace in one answer).
  --timeout D            A request not answered within D is an error "timeout" (default 30s).

Namespace:
  --namespace NAME       Where the objects go (default clusterd-load); created when missing.
  --keep                 Keep what the run made. Without it, a namespace the tool created is
                         deleted at the end; in a namespace that existed, only the objects of
                         this run are deleted (by their clusterd-load/run label).

Output:
  -o, --output FORMAT    text (default) or json: one JSON document on stdout for scripts
                         (kind LoadSummary; the same figures as the text).
  --progress D           Print a progress line on stderr every D (default 2s; 0 = none): elapsed
                         time, requests and requests/s so far, errors, conflicts, watch events.
  -h, --help             This text.

Figures: throughput is successful requests per second over the run; latency percentiles
(p50/p90/p99/max, milliseconds) are of successful requests, measured from sending the request
to receiving the whole answer. Errors are counted by HTTP status and Status reason (or the
network error). Watchers report the events they received and the watch lag: the time from the
answer to one of this run's writes to that write's event arriving, over every watcher.

Exit status: 0 when the run completed (request errors are part of the results), 1 when it
could not run (a target unreachable or refusing the credentials, the namespace not usable),
2 for a bad command line.
`;

const FLAGS: Record<string, FlagDef> = {
  kubeconfig: { repeated: true },
  context: {},
  duration: {},
  processes: {},
  concurrency: {},
  rate: {},
  mix: {},
  'object-size': {},
  'list-limit': {},
  timeout: {},
  namespace: {},
  keep: {},
  output: { short: 'o' },
  progress: {},
};

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The options of `argv`, or 'help'. Throws UsageError for anything it cannot accept. */
export function parseLoadArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): LoadOptions | 'help' {
  // --keep takes no value: turned into --keep=true so the shared parser reads it.
  const args = parseArgs(
    argv.map((a) => (a === '--keep' ? '--keep=true' : a)),
    FLAGS,
    'clusterd-load',
  );
  if (args.help) return 'help';
  if (args.positionals.length) throw new UsageError(`unexpected argument "${args.positionals[0]}" (see clusterd-load --help)`);
  const one = (name: string) => args.flags.get(name)?.[0];

  const kubeconfigs = (args.flags.get('kubeconfig') ?? []).flatMap((v) => v.split(',')).map((v) => v.trim());
  if (kubeconfigs.some((k) => k === '')) throw new UsageError('--kubeconfig: empty file name');
  if (!kubeconfigs.length && env['KUBECONFIG']) kubeconfigs.push(env['KUBECONFIG']);
  if (!kubeconfigs.length) throw new UsageError('no target: give --kubeconfig FILE (each replica writes <data-dir>/admin.kubeconfig) or set KUBECONFIG');

  const durationMs = duration('duration', one('duration') ?? '30s');
  if (durationMs < 100) throw new UsageError('--duration must be at least 100ms');
  const processes = integer('processes', one('processes') ?? '2', 1, 64);
  const concurrency = integer('concurrency', one('concurrency') ?? '16', 1, 10_000);
  if (concurrency < processes) throw new UsageError(`--concurrency (${concurrency}) must be at least --processes (${processes}): each process needs a connection`);
  const rate = number('rate', one('rate') ?? '0');
  const { mix, watchers } = parseMix(one('mix') ?? DEFAULT_MIX);
  const objectSize = byteSize(one('object-size') ?? '1024');
  const listLimit = integer('list-limit', one('list-limit') ?? '100', 0, 1_000_000);
  const timeoutMs = duration('timeout', one('timeout') ?? '30s');
  if (timeoutMs < 1) throw new UsageError('--timeout must be above 0');
  const namespace = one('namespace') ?? 'clusterd-load';
  if (namespace.length > 63 || !DNS_LABEL.test(namespace)) {
    throw new UsageError(`--namespace "${namespace}" is not a valid namespace name (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit)`);
  }
  const keepValue = one('keep');
  if (keepValue !== undefined && keepValue !== 'true' && keepValue !== 'false') throw new UsageError('--keep takes no value (or --keep=true|false)');
  const output = one('output') ?? 'text';
  if (output !== 'text' && output !== 'json') throw new UsageError(`--output must be text or json, not "${output}"`);
  const progressIntervalMs = duration('progress', one('progress') ?? '2s');
  return {
    kubeconfigs,
    context: one('context'),
    durationMs,
    processes,
    concurrency,
    mix,
    watchers,
    rate,
    objectSize,
    namespace,
    keep: keepValue === 'true',
    listLimit,
    timeoutMs,
    output,
    progressIntervalMs,
  };
}

/** `create=40,update=30,...,watch=10` → weights and the watcher count. */
export function parseMix(text: string): { mix: Mix; watchers: number } {
  const mix: Mix = { create: 0, update: 0, get: 0, list: 0, delete: 0 };
  let watchers = 0;
  const seen = new Set<string>();
  for (const part of text.split(',')) {
    const m = /^\s*([a-z]+)\s*=\s*([^\s]*)\s*$/.exec(part);
    if (!m) throw new UsageError(`--mix: "${part}" is not op=number (example: ${DEFAULT_MIX})`);
    const [, op, value] = m as unknown as [string, string, string];
    if (seen.has(op)) throw new UsageError(`--mix: ${op} given twice`);
    seen.add(op);
    if (op === 'watch') {
      watchers = integer('mix watch', value, 0, 100_000);
      continue;
    }
    if (!(REQUEST_OPS as readonly string[]).includes(op)) throw new UsageError(`--mix: unknown operation "${op}" (known: ${REQUEST_OPS.join(', ')}, watch)`);
    const weight = Number(value);
    if (value === '' || !Number.isFinite(weight) || weight < 0) throw new UsageError(`--mix: ${op}=${value} is not a weight (a number, 0 or more)`);
    mix[op as RequestOp] = weight;
  }
  if (REQUEST_OPS.every((op) => mix[op] === 0)) throw new UsageError(`--mix: at least one of ${REQUEST_OPS.join(', ')} needs a weight above 0`);
  return { mix, watchers };
}

/** `1024`, `4k`/`4K` (1000s), `4Ki` (1024s), `1M`, `1Mi`. */
export function byteSize(text: string): number {
  const m = /^(\d+)(k|K|Ki|M|Mi)?$/.exec(text.trim());
  const scale: Record<string, number> = { k: 1000, K: 1000, Ki: 1024, M: 1_000_000, Mi: 1 << 20 };
  const bytes = m ? Number(m[1]) * (m[2] ? scale[m[2]]! : 1) : NaN;
  if (!Number.isSafeInteger(bytes)) throw new UsageError(`--object-size: "${text}" is not a size in bytes (examples: 512, 4Ki, 1Mi)`);
  if (bytes > MAX_OBJECT_SIZE) throw new UsageError(`--object-size ${bytes} is above ${MAX_OBJECT_SIZE} bytes (a ConfigMap holds at most 1 MiB in all)`);
  return bytes;
}

function integer(name: string, text: string, min: number, max: number): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`--${name}: "${text}" must be a whole number from ${min} to ${max}`);
  return n;
}

function number(name: string, text: string): number {
  const n = /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isFinite(n)) throw new UsageError(`--${name}: "${text}" must be a number, 0 or more`);
  return n;
}

function duration(name: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (e) {
    throw new UsageError(`--${name}: ${(e as Error).message}`);
  }
}

/** One line describing the run's settings, for the text summary. */
export function describeOptions(o: LoadOptions): string {
  const loop = o.rate > 0 ? `open loop at ${o.rate} requests/s` : 'closed loop';
  return `${formatDuration(o.durationMs)}, ${o.processes} process${o.processes === 1 ? '' : 'es'}, concurrency ${o.concurrency} (${loop}), ${o.watchers} watcher${o.watchers === 1 ? '' : 's'}, objects of ${o.objectSize} bytes in namespace ${o.namespace}`;
}
