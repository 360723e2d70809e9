// tools/profile-areas owns summing a V8 CPU profile (node --cpu-prof, as
// BENCH_SERVER_NODE_FLAGS and RAFT_CHILD_NODE_FLAGS produce) by the source area each sample's
// own frame belongs to: a project directory such as raft/transport or internal/watchcache
// (bundled frames are mapped back through the bundle's source map), an npm package, a part of
// Node (tls, http2, http/1.1, net and streams), the garbage collector and V8's unattributed
// native time. Self time by area does not depend on call stacks, which asynchronous code cuts
// at every await, so it answers "what does a replica spend its CPU on" where inclusive
// figures cannot. Run directly it prints a table per profile:
//
//   node dist/tools/profile-areas.js [--per N] FILE.cpuprofile...
//
// --per N divides each area's milliseconds by N (acknowledged writes in the profiled run).
// Imports: node only.

import { readFileSync } from 'node:fs';
import { findSourceMap, SourceMap } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

export interface AreaShare {
  area: string;
  ms: number;
  /** Share of the busy (non-idle) time. */
  share: number;
}

/** Where a frame's source file lies, for bundled frames; undefined: unknown. */
export type SourceOf = (url: string, line: number, column: number) => string | undefined;

const NODE_AREAS: Array<[RegExp, string]> = [
  [/^node:(internal\/)?(_tls|tls|crypto|internal\/tls)/, 'node: tls'],
  [/^node:internal\/http2/, 'node: http2'],
  [/^node:(_http|http|internal\/http)/, 'node: http/1.1'],
  [/^node:(net|internal\/stream_base|internal\/streams|stream)/, 'node: net and streams'],
  [/^node:(internal\/)?(modules|bootstrap|vm|source_map)/, 'node: module loading'],
  [/^node:(internal\/)?buffer/, 'node: buffer'],
  [/^node:(internal\/)?(events|event_target)/, 'node: events'],
  [/^node:(internal\/)?(timers|process|fixed_queue|async_hooks)/, 'node: timers, ticks and async hooks'],
];

/** The area of one frame (pure: table-tested). */
export function areaOf(frame: { functionName: string; url: string }, source: string | undefined): string {
  if (frame.functionName === '(garbage collector)') return 'gc';
  if (frame.functionName === '(program)') return 'native (program)';
  const url = frame.url;
  if (url === '') return `native: ${frame.functionName || '(anonymous)'}`;
  if (url.startsWith('node:')) return NODE_AREAS.find(([re]) => re.test(url))?.[1] ?? 'node: other';
  const path = source ?? url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return `npm: ${pkg[1]}`;
  const project = /^((?:raft|internal|cmd|bench|tools)\/[^/]+)\//.exec(path);
  if (project) return project[1]!;
  return `other: ${path.split('/').pop() ?? path}`;
}

/** Self time by area, busiest first; idle time is left out of the shares. */
export function areaShares(profile: CpuProfile, sourceOf: SourceOf = () => undefined): { busyMs: number; areas: AreaShare[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfMs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const byArea = new Map<string, number>();
  let busyMs = 0;
  for (const [id, ms] of selfMs) {
    const f = byId.get(id)!.callFrame;
    if (f.functionName === '(idle)') continue;
    busyMs += ms;
    const area = areaOf(f, f.url.startsWith('file:') || f.url.startsWith('/') ? sourceOf(f.url, f.lineNumber, f.columnNumber) : undefined);
    byArea.set(area, (byArea.get(area) ?? 0) + ms);
  }
  const areas = [...byArea].map(([area, ms]) => ({ area, ms, share: busyMs > 0 ? ms / busyMs : 0 })).sort((a, b) => b.ms - a.ms);
  return { busyMs, areas };
}

/** Maps bundled frames back to their sources through each file's .map (read once per file). */
export function sourceMapResolver(root: string): SourceOf {
  const maps = new Map<string, SourceMap | null>();
  const load = (file: string): SourceMap | null => {
    let m = maps.get(file);
    if (m !== undefined) return m;
    try {
      m = findSourceMap(file) ?? new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]);
    } catch {
      m = null;
    }
    maps.set(file, m);
    return m;
  };
  return (url, line, column) => {
    const file = url.startsWith('file:') ? fileURLToPath(url) : url;
    const map = load(file);
    if (!map) return relative(root, file);
    const entry = map.findEntry(line, column) as { originalSource?: string };
    if (!entry.originalSource) return relative(root, file);
    const original = entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : resolve(dirname(file), entry.originalSource);
    return relative(root, original);
  };
}

const USAGE = `usage: node dist/tools/profile-areas.js [--per N] FILE.cpuprofile...

Prints each V8 CPU profile's self time by source area (project directory, npm package, part of
Node, garbage collector), the 30 largest areas per profile.

flags:
  --per N    also divide each area's milliseconds by N (e.g. the writes acknowledged in the run)
  --help     this text
`;

/** The command line's files and divisor, or 'help'; throws an Error saying what is wrong. */
export function parseProfileAreasArgs(argv: readonly string[]): { per: number | undefined; files: string[] } | 'help' {
  let per: number | undefined;
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return 'help';
    if (arg === '--per') {
      per = Number(argv[++i]);
      if (!(per > 0)) throw new Error(`--per needs a positive number, not ${JSON.stringify(argv[i] ?? '')}`);
    } else if (arg.startsWith('-')) throw new Error(`unknown flag ${arg}`);
    else files.push(arg);
  }
  if (files.length === 0) throw new Error('no profile named');
  return { per, files };
}

function main(argv: string[]): void {
  let parsed: ReturnType<typeof parseProfileAreasArgs>;
  try {
    parsed = parseProfileAreasArgs(argv);
  } catch (err) {
    process.stderr.write(`profile-areas: ${(err as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (parsed === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const { per, files } = parsed;
  // dist/tools/profile-areas.js: the project is two levels up.
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const sourceOf = sourceMapResolver(root);
  for (const file of files) {
    const { busyMs, areas } = areaShares(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, sourceOf);
    process.stdout.write(`${file}: busy ${busyMs.toFixed(0)} ms${per ? ` (${(busyMs / per).toFixed(3)} ms per write)` : ''}\n`);
    for (const a of areas.slice(0, 30)) {
      process.stdout.write(`  ${(100 * a.share).toFixed(1).padStart(5)} %  ${a.ms.toFixed(0).padStart(7)} ms${per ? `  ${(a.ms / per).toFixed(3).padStart(7)} ms/write` : ''}  ${a.area}\n`);
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main(process.argv.slice(2));
