// raft/launch/spawn-module.ts owns starting one of this repository's modules as a child Node
// process. spawnModule runs the child the way the caller runs: from TypeScript sources (vitest,
// a .ts script; the TS loader is preloaded and transpiles every module at start) or from the
// compiled dist/ tree. spawnBuiltModule always runs the compiled JavaScript of dist/ (the output
// of tsconfig.build.json), so children start fast even on a loaded machine; from sources it
// first checks that dist/ is not older than the sources, rather than run stale code.

import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SpawnModuleOptions {
  args?: string[];
  env?: NodeJS.ProcessEnv;
  stdio?: StdioOptions;
}

/**
 * Spawns `relativeTs` (for example '../node/node-process.ts'), resolved against `fromUrl`
 * (the caller's import.meta.url). From a compiled caller the same path with .js is used.
 */
export function spawnModule(fromUrl: string, relativeTs: string, opts: SpawnModuleOptions = {}): ChildProcess {
  const callerIsTs = fromUrl.endsWith('.ts');
  const target = callerIsTs ? relativeTs : relativeTs.replace(/\.ts$/, '.js');
  return spawnPath(fileURLToPath(new URL(target, fromUrl)), opts);
}

/**
 * Spawns the compiled JavaScript of `relativeTs` (resolved against `fromUrl` as in
 * spawnModule): from a compiled caller the sibling .js, from a TypeScript caller the same
 * module under dist/. Throws when that is missing or older than a TypeScript source under the
 * given folders of the repository (`sourceRoots`, default the module's top-level folder):
 * run `make build` (npx tsc -p tsconfig.build.json) first.
 */
export function spawnBuiltModule(fromUrl: string, relativeTs: string, opts: SpawnModuleOptions & { sourceRoots?: string[] } = {}): ChildProcess {
  if (!fromUrl.endsWith('.ts')) return spawnModule(fromUrl, relativeTs, opts);
  const source = fileURLToPath(new URL(relativeTs, fromUrl));
  const root = repositoryRoot(source);
  const rel = relative(root, source);
  const built = join(root, 'dist', rel.replace(/\.ts$/, '.js'));
  assertBuilt(root, opts.sourceRoots ?? [rel.split(/[\\/]/)[0]!]);
  return spawnPath(built, opts);
}

function spawnPath(path: string, opts: SpawnModuleOptions): ChildProcess {
  if (!existsSync(path)) throw new Error(`spawnModule: ${path} does not exist`);
  const nodeArgs: string[] = ['--enable-source-maps'];
  // Extra Node flags for every child, for profiling a multi-process run without editing code
  // (for example RAFT_CHILD_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof").
  const extra = (opts.env ?? process.env).RAFT_CHILD_NODE_FLAGS;
  if (extra) nodeArgs.push(...extra.split(/\s+/).filter((f) => f.length > 0));
  if (path.endsWith('.ts')) nodeArgs.push('--import', fileURLToPath(new URL('./ts-loader.mjs', import.meta.url)));
  return spawn(process.execPath, [...nodeArgs, path, ...(opts.args ?? [])], {
    env: opts.env ?? process.env,
    stdio: opts.stdio ?? ['ignore', 'pipe', 'pipe'],
  });
}

/** The nearest folder above `file` holding tsconfig.build.json. */
function repositoryRoot(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'tsconfig.build.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`spawnBuiltModule: no tsconfig.build.json above ${file}`);
  }
}

/** Every compiled module of the sources under `roots` exists and is at least as new as its source. */
function assertBuilt(root: string, roots: string[]): void {
  const stale: string[] = [];
  for (const r of roots) {
    for (const name of readdirSync(join(root, r), { recursive: true, encoding: 'utf8' })) {
      if (!name.endsWith('.ts') || name.endsWith('.test.ts') || name.endsWith('.d.ts')) continue;
      const src = join(root, r, name);
      const out = join(root, 'dist', r, name.replace(/\.ts$/, '.js'));
      if (!existsSync(out) || statSync(out).mtimeMs < statSync(src).mtimeMs) stale.push(join(r, name));
    }
  }
  if (stale.length > 0) {
    const list = stale.slice(0, 5).join(', ') + (stale.length > 5 ? `, and ${stale.length - 5} more` : '');
    throw new Error(`dist/ is missing or older than ${list}: run \`make build\` (npx tsc -p tsconfig.build.json) first`);
  }
}
