// bench/support/project-root owns finding the repository root and the compiled entry points
// the bench spawns, whether the caller runs from dist/ (make bench) or from source (vitest).
// Imports: node only.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory holding clusterd's package.json, found by walking up from this module. */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'clusterd') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('bench: cannot find the clusterd package.json above this module');
    dir = up;
  }
}

/** A compiled module under dist/, by its path relative to dist (`bench/load/generator-main.js`). */
export function distModule(relative: string): string {
  const path = join(projectRoot(), 'dist', relative);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`make build\` first`);
  return path;
}
