// raft/launch/spawn-module.ts owns starting one of this repository's modules as a child Node
// process, whether the caller runs from TypeScript sources (vitest, a .ts script) or from the
// compiled dist/ tree: the child is named by a URL relative to the caller's own module, and
// when that is a .ts file the TS loader is preloaded.

import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
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
  const path = fileURLToPath(new URL(target, fromUrl));
  if (!existsSync(path)) throw new Error(`spawnModule: ${path} does not exist`);
  const nodeArgs: string[] = ['--enable-source-maps'];
  // Extra Node flags for every child, for profiling a multi-process run without editing code
  // (for example RAFT_CHILD_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof").
  const extra = (opts.env ?? process.env).RAFT_CHILD_NODE_FLAGS;
  if (extra) nodeArgs.push(...extra.split(/\s+/).filter((f) => f.length > 0));
  if (callerIsTs) nodeArgs.push('--import', fileURLToPath(new URL('./ts-loader.mjs', import.meta.url)));
  return spawn(process.execPath, [...nodeArgs, path, ...(opts.args ?? [])], {
    env: opts.env ?? process.env,
    stdio: opts.stdio ?? ['ignore', 'pipe', 'pipe'],
  });
}
