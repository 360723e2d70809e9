// internal/schema/data-files owns finding the committed schema data (proto/*.json) at run time,
// whether the code runs from TypeScript sources (tests) or from dist/ (the built server).
// Imports: node only.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cachedRoot: string | undefined;

/** The project root: the nearest ancestor of this module holding proto/api-resources.json. */
export function projectRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'proto', 'api-resources.json'))) return (cachedRoot = dir);
    const parent = dirname(dir);
    if (parent === dir) throw new Error('schema data not found: no proto/api-resources.json above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export function readDataFile(name: string): string {
  return readFileSync(join(projectRoot(), 'proto', name), 'utf8');
}
