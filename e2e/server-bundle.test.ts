// The built server is a bundle (tools/bundle-server): every file a bundled module finds at run
// time relative to itself, every chunk it imports, every package left to node_modules and every
// source its maps name must be there in the built output, or the server fails only when that
// code first runs. The bundle is CommonJS (main.cjs, chunk-*.cjs) run by main.js, the
// code-caching loader (internal/codecache), CommonJS as well. Reads dist/ (run `make build` first).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { builtinModules, createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLE_BANNER, BUNDLE_ENTRY, EXTERNAL_PACKAGES, NATIVE_BINDINGS } from '../tools/bundle-server/main.js';
import { PROJECT_ROOT } from './support/server-process.js';

const OUT = join(PROJECT_ROOT, 'dist', 'cmd', 'clusterd');
const files = existsSync(OUT) ? readdirSync(OUT).filter((f) => /\.c?js$/.test(f)) : [];
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

/** How a CommonJS file of the bundle names its own URL (the bundler's rewrite of import.meta.url). */
const META_URL = String.raw`(?:import\.meta\.url|require\("url"\)\.pathToFileURL\(__filename\)\.href)`;

/**
 * What a bundled file loads: its import and export-from statements (at the start of a line, as
 * the bundler writes them), dynamic imports and require calls outside comments (JSDoc
 * `import('./x').T` type references are in comments).
 */
function loadedSpecifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [
    ...[...code.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gm)].map((m) => m[1]!),
    ...[...code.matchAll(/^import\s*["']([^"']+)["']/gm)].map((m) => m[1]!),
    ...[...code.matchAll(/\b(?:import|__require|require)\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]!),
  ];
}

describe('the server bundle in dist/cmd/clusterd', () => {
  it('is what the build produced: the loader entry, the bundle entry and chunks beside it, all strict', () => {
    expect(files).toContain('main.js');
    expect(files).toContain(BUNDLE_ENTRY);
    for (const f of files) expect(source(f).startsWith(BUNDLE_BANNER), f).toBe(true);
    expect(source('main.js')).toMatch(new RegExp(String.raw`new URL\("\.\./\.\./cmd/clusterd/${BUNDLE_ENTRY.replace('.', '\\.')}", ${META_URL}\)`));
    // main.js is CommonJS too (Node then starts no ES module loader for it): the directory says so.
    expect(JSON.parse(readFileSync(join(OUT, 'package.json'), 'utf8'))).toEqual({ type: 'commonjs' });
    const cjs = files.filter((f) => f.endsWith('.cjs'));
    expect(cjs.filter((f) => f.startsWith('chunk-')).length).toBeGreaterThan(0);
    // Built from ES modules, which are strict: the CommonJS files say so on their second line.
    for (const f of [...cjs, 'main.js']) expect(source(f).split('\n')[1], f).toBe('"use strict";');
  });

  it.each(files)('%s is ASCII without JSDoc (its source is held at one byte per character)', (f) => {
    const text = source(f);
    // One character outside Latin-1 and V8 holds the whole module source (kept for lazy
    // compilation) at two bytes per character.
    expect(text.match(/[^\x00-\x7f]/g) ?? []).toEqual([]);
    expect(text.split('/**').length - 1).toBe(0);
  });

  it('a single server start loads no code of the Raft replica (chunks loaded for a cluster only)', () => {
    // main.cjs and what it requires at its top level, plus the server chunk and its own (a
    // chunk loaded on first use is required inside a function: `.then(() => require(...))`).
    const server = files.find((f) => f.startsWith('chunk-server-'));
    expect(server).toBeDefined();
    const seen = new Set<string>();
    const visit = (f: string): void => {
      if (seen.has(f)) return;
      seen.add(f);
      for (const m of source(f).matchAll(/^(?:(?:const|let|var)\s+[\w$]+\s*=\s*)?require\(["']\.\/([^"']+)["']\)/gm)) visit(m[1]!);
    };
    visit(BUNDLE_ENTRY);
    visit(server!);
    expect(seen.size).toBeGreaterThan(2);
    const bundled = [...seen].flatMap((f) => [...source(f).matchAll(/^\/\/ (dist\/\S+)/gm)].map((m) => m[1]!));
    expect(bundled).toContain('dist/internal/server/server.js');
    expect(bundled.filter((m) => m.startsWith('dist/raft/') || m === 'dist/internal/cluster/replica.js')).toEqual([]);
  });

  it.each(EXTERNAL_PACKAGES)('%s, left to node_modules (some required by name on first use), is installed where the bundle looks for it', (pkg) => {
    expect(packageFound(pkg, OUT)).toBe(true);
  });

  it.each(Object.entries(NATIVE_BINDINGS))('%s (bundled) loads the native addon of %s from its package directory in node_modules', (file, pkg) => {
    const server = files.find((f) => f.startsWith('chunk-server-'))!;
    expect(source(server)).toContain(`require("node-gyp-build")(require("node:path").dirname(require.resolve(${JSON.stringify(pkg)})))`);
    // What that line does at run time, resolved from the bundle's directory: the prebuilt addon.
    const require = createRequire(join(OUT, server));
    const addon = (require('node-gyp-build') as { path(dir: string): string }).path(dirname(require.resolve(pkg)));
    expect(existsSync(addon), addon).toBe(true);
    expect(source(server), file).not.toContain('require("node-gyp-build")(__dirname)');
  });

  it.each(files)('%s: every relative import is a file of the bundle', (f) => {
    const specs = loadedSpecifiers(source(f)).filter((s) => s.startsWith('./') || s.startsWith('../'));
    if (f === BUNDLE_ENTRY) expect(specs.length).toBeGreaterThan(0);
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
    const uses = [...text.matchAll(new RegExp(META_URL, 'g'))].length;
    let checked = 0;
    // new URL('<relative path>', import.meta.url): resolved against the chunk's own location.
    for (const m of text.matchAll(new RegExp(String.raw`new URL\(\s*["']([^"']+)["']\s*,\s*${META_URL}\s*\)`, 'g'))) {
      const target = resolve(OUT, m[1]!);
      expect(existsSync(target), `${f} locates ${m[1]} at ${target}`).toBe(true);
      checked++;
    }
    // createRequire(import.meta.url): packages, checked above.
    checked += [...text.matchAll(new RegExp(String.raw`createRequire\)?\(\s*${META_URL}\s*\)`, 'g'))].length;
    // The schema data's lookup walks up from the module to proto/api-resources.json.
    const walks = [...text.matchAll(new RegExp(String.raw`no proto\/api-resources\.json above " \+ (?:\(0, [\w$]+\.fileURLToPath\)|fileURLToPath)\(${META_URL}\)`, 'g'))].length;
    if (walks > 0) {
      expect(existsSync(join(PROJECT_ROOT, 'proto', 'api-resources.json'))).toBe(true);
      // The walk's start (dirname of the module) and its error message.
      checked += 2 * walks;
    }
    // The pki helper's check that it runs compiled (`.endsWith(".js")`).
    checked += [...text.matchAll(new RegExp(String.raw`${META_URL}\.endsWith\(`, 'g'))].length;
    expect(checked, `${f} uses import.meta.url in a way this test does not check: add a check for it`).toBe(uses);
  });

  it.each(files)('%s: has a source map whose sources all exist', (f) => {
    if (f.startsWith('chunk-rolldown-runtime-')) {
      // The bundler's own helpers (interop for CommonJS packages): no source of ours to map.
      expect(source(f)).not.toMatch(/^\/\/ (dist|node_modules)\//m);
      return;
    }
    expect(source(f)).toContain(`//# sourceMappingURL=${f}.map`);
    const map = JSON.parse(readFileSync(join(OUT, `${f}.map`), 'utf8')) as { sources: string[] };
    expect(map.sources.length).toBeGreaterThan(0);
    const missing = map.sources.filter((s) => !existsSync(resolve(OUT, s)));
    expect(missing).toEqual([]);
    // tsc's maps are chained: our own code maps to TypeScript, not to the compiled JavaScript.
    expect(map.sources.filter((s) => resolve(OUT, s).startsWith(join(PROJECT_ROOT, 'dist') + '/'))).toEqual([]);
  });

  it('a first start of the bundle makes its certificates in the helper process, never loading the certificate library', async () => {
    // The PKI module runs the helper only when it runs compiled; bundled it is a .cjs file.
    const dir = mkdtempSync(join(tmpdir(), 'bundle-pki-'));
    const log = join(dir, 'loads.txt');
    const preload = join(dir, 'record-loads.cjs');
    writeFileSync(preload, `const M = require('node:module'); const fs = require('node:fs'); const load = M._load;
M._load = function (request) { fs.appendFileSync(${JSON.stringify(log)}, request + '\\n'); return load.apply(this, arguments); };\n`);
    const child = spawn(process.execPath, ['--require', preload, join(OUT, 'main.js'), `--data-dir=${join(dir, 'data')}`, '--secure-port=0', '--bind-address=127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      await new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          out += d;
          if (out.includes('clusterd is serving at')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`the server exited (${code}) before serving:\n${err}`)));
      });
      expect(existsSync(join(dir, 'data', 'pki', 'apiserver.crt'))).toBe(true);
      const loads = readFileSync(log, 'utf8').split('\n');
      expect(loads).toContain('node:child_process');
      expect(loads.filter((r) => r.startsWith('@peculiar/'))).toEqual([]);
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
