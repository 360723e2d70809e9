// The built server is a bundle (tools/bundle-server): every file a bundled module finds at run
// time relative to itself, every chunk it imports, every package left to node_modules and every
// source its maps name must be there in the built output, or the server fails only when that
// code first runs. Reads dist/ (run `make build` first).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLE_BANNER, EXTERNAL_PACKAGES } from '../tools/bundle-server/main.js';
import { PROJECT_ROOT } from './support/server-process.js';

const OUT = join(PROJECT_ROOT, 'dist', 'cmd', 'clusterd');
const files = existsSync(OUT) ? readdirSync(OUT).filter((f) => f.endsWith('.js')) : [];
const source = (f: string) => readFileSync(join(OUT, f), 'utf8');

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`). */
function packageOf(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** Whether `node_modules/<pkg>` is found walking up from `dir`, as Node resolves it. */
function packageFound(pkg: string, dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules', pkg, 'package.json'))) return true;
    if (dirname(d) === d) return false;
  }
}

/**
 * What a bundled file loads: its import and export-from statements (at the start of a line, as
 * the bundler writes them), dynamic imports and the bundler's require calls outside comments
 * (JSDoc `import('./x').T` type references are in comments).
 */
function loadedSpecifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [
    ...[...code.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gm)].map((m) => m[1]!),
    ...[...code.matchAll(/^import\s*["']([^"']+)["']/gm)].map((m) => m[1]!),
    ...[...code.matchAll(/\b(?:import|__require)\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]!),
  ];
}

describe('the server bundle in dist/cmd/clusterd', () => {
  it('is what the build produced: a bundle entry with chunks beside it', () => {
    expect(files).toContain('main.js');
    expect(source('main.js').startsWith(BUNDLE_BANNER)).toBe(true);
    expect(files.filter((f) => f.startsWith('chunk-')).length).toBeGreaterThan(0);
  });

  it.each(files)('%s is ASCII without JSDoc (its source is held at one byte per character)', (f) => {
    const text = source(f);
    // One character outside Latin-1 and V8 holds the whole module source (kept for lazy
    // compilation) at two bytes per character.
    expect(text.match(/[^\x00-\x7f]/g) ?? []).toEqual([]);
    expect(text.split('/**').length - 1).toBe(0);
  });

  it('a single server start loads no code of the Raft replica (chunks loaded for a cluster only)', () => {
    // main.js and what it imports statically, plus the server chunk and its static imports.
    const server = files.find((f) => f.startsWith('chunk-server-'));
    expect(server).toBeDefined();
    const seen = new Set<string>();
    const visit = (f: string): void => {
      if (seen.has(f)) return;
      seen.add(f);
      for (const m of source(f).matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*["']\.\/([^"']+)["']/gm)) visit(m[1]!);
    };
    visit('main.js');
    visit(server!);
    const bundled = [...seen].flatMap((f) => [...source(f).matchAll(/^\/\/ (dist\/\S+)/gm)].map((m) => m[1]!));
    expect(bundled).toContain('dist/internal/server/server.js');
    expect(bundled.filter((m) => m.startsWith('dist/raft/') || m === 'dist/internal/cluster/replica.js')).toEqual([]);
  });

  it.each(EXTERNAL_PACKAGES)('%s, left to node_modules (some required by name on first use), is installed where the bundle looks for it', (pkg) => {
    expect(packageFound(pkg, OUT)).toBe(true);
  });

  it.each(files)('%s: every relative import is a file of the bundle', (f) => {
    const specs = loadedSpecifiers(source(f)).filter((s) => s.startsWith('./') || s.startsWith('../'));
    if (f === 'main.js') expect(specs.length).toBeGreaterThan(0);
    for (const spec of specs) expect(existsSync(resolve(OUT, spec)), `${f} imports ${spec}`).toBe(true);
  });

  it.each(files)('%s: every package it imports or requires is installed where Node looks for it', (f) => {
    const specs = loadedSpecifiers(source(f)).filter((s) => !s.startsWith('.'));
    const builtins = new Set(builtinModules);
    for (const spec of specs) {
      if (spec.startsWith('node:') || builtins.has(spec) || builtins.has(spec.split('/')[0]!)) continue;
      // Only the packages the bundler leaves out are looked up at run time.
      expect(EXTERNAL_PACKAGES, `${f} loads ${spec}, which the bundle should have held`).toContain(packageOf(spec));
      expect(packageFound(packageOf(spec), OUT), `${f} loads ${spec}`).toBe(true);
    }
  });

  it.each(files)('%s: every file located relative to the module exists, and no other kind of lookup is left unchecked', (f) => {
    const text = source(f);
    const uses = text.split('import.meta.url').length - 1;
    let checked = 0;
    // new URL('<relative path>', import.meta.url): resolved against the chunk's own location.
    for (const m of text.matchAll(/new URL\(\s*["']([^"']+)["']\s*,\s*import\.meta\.url\s*\)/g)) {
      const target = resolve(OUT, m[1]!);
      expect(existsSync(target), `${f} locates ${m[1]} at ${target}`).toBe(true);
      checked++;
    }
    // createRequire(import.meta.url): packages, checked above.
    checked += [...text.matchAll(/createRequire\(\s*import\.meta\.url\s*\)/g)].length;
    // The schema data's lookup walks up from the module to proto/api-resources.json.
    const walks = [...text.matchAll(/no proto\/api-resources\.json above " \+ fileURLToPath\(import\.meta\.url\)/g)].length;
    if (walks > 0) {
      expect(existsSync(join(PROJECT_ROOT, 'proto', 'api-resources.json'))).toBe(true);
      // The walk's start (dirname of the module) and its error message.
      checked += 2 * walks;
    }
    // The pki helper's check that it runs compiled (`.endsWith(".js")`).
    checked += [...text.matchAll(/import\.meta\.url\.endsWith\(/g)].length;
    expect(checked, `${f} uses import.meta.url in a way this test does not check: add a check for it`).toBe(uses);
  });

  it.each(files)('%s: has a source map whose sources all exist', (f) => {
    expect(source(f)).toContain(`//# sourceMappingURL=${f}.map`);
    const map = JSON.parse(readFileSync(join(OUT, `${f}.map`), 'utf8')) as { sources: string[] };
    expect(map.sources.length).toBeGreaterThan(0);
    const missing = map.sources.filter((s) => !existsSync(resolve(OUT, s)));
    expect(missing).toEqual([]);
    // tsc's maps are chained: our own code maps to TypeScript, not to the compiled JavaScript.
    expect(map.sources.filter((s) => resolve(OUT, s).startsWith(join(PROJECT_ROOT, 'dist') + '/'))).toEqual([]);
  });
});
