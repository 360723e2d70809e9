// tools/bundle-server owns the server's built entry point: after tsc has compiled everything to
// dist/, it bundles dist/cmd/clusterd/main.js and what it imports into that same file plus
// chunks beside it (dist/cmd/clusterd/chunk-*.js), so that a start compiles a few large modules
// instead of resolving, reading and linking ~640 small ones (the largest start-up cost).
// Dynamic imports stay chunks loaded on first use. The bundle is CommonJS (main.cjs and
// chunk-*.cjs), strict as the ES modules it was built from, so that main.js — the code-caching
// loader (internal/codecache) bundled on its own — can compile each file as a vm.Script with
// V8's cached data from an earlier start. Source maps chain through tsc's, so a trace run with
// `node --enable-source-maps` (which loads the files through Node's own require) names
// TypeScript lines; the output is not minified, so function names stay readable without them.
// Imports: rolldown (devDependency), internal/codecache (its directory name), node only.

import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type InputOptions, type OutputOptions, type Plugin } from 'rolldown';
import { CODE_CACHE_DIR } from '../../internal/codecache/bundle-loader.js';

/** The first line of every bundled file: what tells a bundle from tsc's output. */
export const BUNDLE_BANNER = '// clusterd server bundle (tools/bundle-server): built from tsc output in dist/';

/**
 * Packages left to node_modules, loaded by Node at run time: the native addon loader
 * (node-gyp-build, see NATIVE_BINDINGS), packages that look for optional native ones (cbor-x),
 * libraries the code requires on first use (internal/lazy: @peculiar/x509 and its
 * reflect-metadata polyfill, which must run before it, protobufjs, re2js, and undici, the
 * outbound webhook client), and the etcd client (loaded only with --storage=etcd).
 */
export const EXTERNAL_PACKAGES = ['node-gyp-build', 'cbor-x', 'etcd3', '@peculiar/x509', 'reflect-metadata', 'protobufjs', 're2js', 'undici'];

/**
 * Native addons whose JavaScript is bundled (so a start compiles it from the code cache instead
 * of resolving and compiling each file): the module that loads the addon with node-gyp-build
 * from its own directory (`__dirname`, which in the bundle would be dist/cmd/clusterd) is
 * replaced by one that names the package's directory in node_modules, where the prebuilt addon is.
 */
export const NATIVE_BINDINGS: Readonly<Record<string, string>> = { 'classic-level/binding.js': 'classic-level' };

function nativeBindings(): Plugin {
  return {
    name: 'native-bindings',
    load(id) {
      const entry = Object.entries(NATIVE_BINDINGS).find(([file]) => id.endsWith(`/node_modules/${file}`));
      if (!entry) return null;
      return `module.exports = require('node-gyp-build')(require('node:path').dirname(require.resolve(${JSON.stringify(entry[1])})));\n`;
    },
  };
}

const CHUNK_PREFIX = 'chunk-';

/**
 * Lines (1-based) of the code that call import(). The bundle runs as vm.Scripts compiled from V8
 * code caches, and Node 20 loses a script's dynamic-import callback when its code comes from a
 * cache written by another process: such an import() fails with "A dynamic import callback was
 * not specified" on every start after the first. So the bundled server must not contain one.
 * Comment lines are skipped; `import(` in a string or a trailing comment is reported too (the safe side).
 */
export function dynamicImportsIn(code: string): number[] {
  const lines: number[] = [];
  code.split('\n').forEach((line, i) => {
    if (/^\s*(?:\/\/|\/\*|\*)/.test(line)) return;
    if (/(?<![\w$.])import\s*\(/.test(line)) lines.push(i + 1);
  });
  return lines;
}

/** The bundled server's entry, beside main.js; main.js loads it (internal/codecache/entry). */
export const BUNDLE_ENTRY = 'main.cjs';

function isExternal(id: string): boolean {
  return id.startsWith('node:') || EXTERNAL_PACKAGES.some((p) => id === p || id.startsWith(`${p}/`));
}

/** Reads each compiled module's tsc source map, so that the bundle's maps lead to the .ts files. */
function tscSourceMaps(distDir: string): Plugin {
  return {
    name: 'tsc-source-maps',
    load(id) {
      if (!id.startsWith(distDir) || !id.endsWith('.js') || !existsSync(`${id}.map`)) return null;
      const code = readFileSync(id, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
      return { code, map: readFileSync(`${id}.map`, 'utf8') };
    },
  };
}

export async function bundleServer(root: string): Promise<string[]> {
  const distDir = join(root, 'dist');
  const outDir = join(distDir, 'cmd', 'clusterd');
  const entry = join(outDir, 'main.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run tsc -p tsconfig.build.json first`);
  // Bundling the bundle would lose the chunks it imports (removed below): tsc must emit first.
  if (readFileSync(entry, 'utf8').startsWith(BUNDLE_BANNER)) throw new Error(`${entry} is already a bundle: run tsc -p tsconfig.build.json first`);
  const loaderEntry = join(distDir, 'internal', 'codecache', 'entry.js');
  if (!existsSync(loaderEntry)) throw new Error(`${loaderEntry} is missing: run tsc -p tsconfig.build.json first`);
  // Chunks of an earlier build (tsc's own output never imports them), and the code caches
  // written by its starts (keyed by content, so never read again: this only frees the space).
  for (const f of readdirSync(outDir)) if (f.startsWith(CHUNK_PREFIX) || f.startsWith(BUNDLE_ENTRY)) rmSync(join(outDir, f));
  // tsc's main.js is an ES module until the loader below replaces it.
  rmSync(join(outDir, 'package.json'), { force: true });
  rmSync(join(outDir, CODE_CACHE_DIR), { recursive: true, force: true });
  const common: InputOptions = {
    platform: 'node',
    external: isExternal,
    plugins: [tscSourceMaps(distDir), nativeBindings()],
    logLevel: 'warn',
  };
  const output: OutputOptions = {
    dir: outDir,
    sourcemap: true,
    // V8 keeps a module's source in the heap for as long as it runs (lazy compilation) and
    // scans all of it at load; a source with one character outside Latin-1 is held at two
    // bytes per character. So: no JSDoc (the source maps lead to the commented .ts) and
    // escapes for what remains outside ASCII. Licence comments and annotations stay.
    charset: 'ascii',
    comments: { legal: true, annotation: true, jsdoc: false },
  };
  const server = await build({
    ...common,
    input: { main: entry },
    output: {
      ...output,
      format: 'cjs',
      // ES modules are strict; the CommonJS files must stay so (a write to a frozen object throws).
      banner: `${BUNDLE_BANNER}\n"use strict";`,
      // Beside the entry: a module locating a file relative to itself (import.meta.url, now
      // __filename) sits at the same depth under dist/ as tsc put it (dist/<dir>/<dir>/).
      entryFileNames: '[name].cjs',
      chunkFileNames: `${CHUNK_PREFIX}[name]-[hash].cjs`,
    },
  });
  for (const o of server.output) {
    if (o.type !== 'chunk') continue;
    const at = dynamicImportsIn(o.code);
    if (at.length > 0) throw new Error(`${o.fileName} keeps a dynamic import() at line ${at.join(', ')}: use a static import, or require() for what must load late`);
  }
  // Last: it replaces tsc's main.js, the server bundle's input. As CommonJS (the directory's
  // package.json says so, against the project's "type": "module"): Node then runs the entry
  // without starting its ES module loader, which a start otherwise spent 10-20 ms on here.
  const loader = await build({
    ...common,
    input: { main: loaderEntry },
    output: { ...output, format: 'cjs', banner: `${BUNDLE_BANNER}\n"use strict";`, entryFileNames: '[name].js' },
  });
  writeFileSync(join(outDir, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
  return [...server.output, ...loader.output].map((o) => join(outDir, o.fileName));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // dist/tools/bundle-server/main.js → the project root.
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  bundleServer(root).then(
    (files) => process.stdout.write(`bundled the server into ${files.filter((f) => /\.c?js$/.test(f)).length} files under dist/cmd/clusterd\n`),
    (e: unknown) => {
      process.stderr.write(`bundle-server: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
