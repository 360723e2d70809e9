// internal/codecache/bundle-loader owns loading the server bundle (CommonJS files written by
// tools/bundle-server) through V8 code caches, what Node 22's module compile cache does and Node
// 20 lacks: each bundled file is compiled as a vm.Script with the cached data a previous start
// wrote, so a start skips parsing and compiling the ~2 MB of bundled JavaScript. Once the server
// is ready the caches are written from the running scripts (so the functions compiled lazily
// during start-up are in them). A cache is keyed by its file's content hash, the Node version,
// architecture and flags: a new build never reads an old build's cache, and a cache V8 rejects
// or that fails its checksum (truncated, corrupt) is ignored and rewritten. Writes are atomic
// (temporary file, then rename). With source maps enabled (--enable-source-maps) the files
// are required through Node's own loader instead, which is what maps their stack traces.
// Imports: codecache/hook, node only (this runs before the bundle: the built entry point's body).

import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { Script, constants as vmConstants } from 'node:vm';
import { setBundleLoaderHook, type BundleLoaderHook } from './hook.js';

/** The directory, beside the bundle or in the data directory, holding the code caches. */
export const CODE_CACHE_DIR = '.code-cache';

/** First bytes of a cache file: format tag, then the payload's SHA-256, then V8's cached data. */
const MAGIC = Buffer.from('clusterd-v8-cache-1\n', 'latin1');
const DIGEST_BYTES = 32;

/** What happened to one bundled file's cache at load, for tests and the write decision. */
export type CacheOutcome = 'accepted' | 'missing' | 'rejected' | 'corrupt' | 'disabled';

interface LoadedFile {
  path: string;
  script: Script | undefined;
  key: string;
  outcome: CacheOutcome;
}

type WrappedModule = (exports: unknown, require: NodeJS.Require, module: { exports: unknown }, filename: string, dirname: string) => void;

/**
 * The wrapper every bundled file is compiled in (as Node's own CommonJS wrapper), on the file's
 * first line so that line numbers in stack traces stay the file's. The bundle was ES modules,
 * strict throughout: tools/bundle-server writes "use strict" at the top of every file.
 */
const WRAP_HEAD = '(function (exports, require, module, __filename, __dirname) { ';
const WRAP_TAIL = '\n})';

/** What makes V8's cached data unusable besides the source: the Node build and its flags. */
function runtimeKey(): string {
  return createHash('sha256')
    .update([process.version, process.arch, process.platform, ...process.execArgv, process.env.NODE_OPTIONS ?? ''].join('\0'))
    .digest('hex')
    .slice(0, 16);
}

function cacheName(file: string, contentKey: string, runtime: string): string {
  return `${basename(file)}.${contentKey}.${runtime}.v8`;
}

/** The cached data in a cache file, or undefined when it is missing, truncated or corrupt. */
export function readCacheFile(path: string): Buffer | 'missing' | 'corrupt' {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return 'missing';
  }
  if (bytes.length <= MAGIC.length + DIGEST_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return 'corrupt';
  const digest = bytes.subarray(MAGIC.length, MAGIC.length + DIGEST_BYTES);
  const payload = bytes.subarray(MAGIC.length + DIGEST_BYTES);
  if (!createHash('sha256').update(payload).digest().equals(digest)) return 'corrupt';
  return payload;
}

/** Writes a cache file atomically: a reader sees the old file, no file, or the whole new one. */
export function writeCacheFile(path: string, data: Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    writeFileSync(tmp, Buffer.concat([MAGIC, createHash('sha256').update(data).digest(), data]));
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

export interface BundleLoaderOptions {
  /** Directories holding caches, searched in order; the first writable one gets new caches. */
  cacheDirs?: string[];
  /** False: no code cache at all (Node's own require), as with --enable-source-maps. */
  useCache?: boolean;
  /** Told when a cache could not be written (both places read-only): start-up goes on. */
  onWriteError?: (file: string, error: unknown) => void;
}

/**
 * Loads the bundle's CommonJS files: the entry and every `./…` file the bundle requires from
 * its own directory go through code caches; packages and Node built-ins through Node's require.
 */
export class BundleLoader implements BundleLoaderHook {
  private readonly modules = new Map<string, { exports: unknown }>();
  private readonly loaded: LoadedFile[] = [];
  private readonly cacheDirs: string[];
  private readonly runtime = runtimeKey();
  private written = false;

  constructor(
    readonly bundleDir: string,
    private readonly options: BundleLoaderOptions = {},
  ) {
    this.cacheDirs = [...(options.cacheDirs ?? [join(bundleDir, CODE_CACHE_DIR)])];
  }

  /** What each loaded file's cache did (in load order). */
  outcomes(): Array<{ file: string; outcome: CacheOutcome }> {
    return this.loaded.map((f) => ({ file: basename(f.path), outcome: f.outcome }));
  }

  useDataDir(dir: string): void {
    const d = resolve(dir, CODE_CACHE_DIR);
    if (!this.cacheDirs.includes(d)) this.cacheDirs.push(d);
  }

  /** Runs one bundled file (by path) and returns its exports. */
  load(file: string): unknown {
    const path = resolve(file);
    const known = this.modules.get(path);
    if (known) return known.exports;
    const module = { exports: {} as unknown };
    // Registered before it runs, as Node does: the bundle's files require each other in cycles.
    this.modules.set(path, module);
    const nodeRequire = createRequire(path);
    if (this.options.useCache === false) {
      module.exports = nodeRequire(path);
      this.loaded.push({ path, script: undefined, key: '', outcome: 'disabled' });
      return module.exports;
    }
    // Hashed as the file's bytes: hashing the string would encode a transient UTF-8 copy of
    // it (1.8 MB for the server chunk), which glibc's heap kept resident after it was freed
    // (about 2.8 MB more idle RSS). The bundle is ASCII: Latin-1 decoding is the text.
    const bytes = readFileSync(path);
    const key = createHash('sha256').update(WRAP_HEAD).update(bytes).digest('hex').slice(0, 16);
    const source = bytes.toString('latin1');
    let cachedData: Buffer | undefined;
    let outcome: CacheOutcome = 'missing';
    for (const dir of this.cacheDirs) {
      const read = readCacheFile(join(dir, cacheName(path, key, this.runtime)));
      if (read === 'missing') continue;
      if (read === 'corrupt') outcome = 'corrupt';
      else cachedData = read;
      break;
    }
    const script = new Script(WRAP_HEAD + source + WRAP_TAIL, {
      filename: path,
      cachedData,
      importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    if (cachedData) outcome = script.cachedDataRejected ? 'rejected' : 'accepted';
    this.loaded.push({ path, script, key, outcome });
    const fn = script.runInThisContext() as WrappedModule;
    const bundleRequire = ((spec: string) => (this.isBundled(spec) ? this.load(join(this.bundleDir, spec)) : nodeRequire(spec))) as NodeJS.Require;
    Object.assign(bundleRequire, { resolve: nodeRequire.resolve, cache: nodeRequire.cache, main: nodeRequire.main });
    fn.call(module.exports, module.exports, bundleRequire, module, path, dirname(path));
    return module.exports;
  }

  /** A file of the bundle: `./name.cjs` beside the bundle's files. */
  private isBundled(spec: string): boolean {
    return spec.startsWith('./') && spec.endsWith('.cjs') && !spec.slice(2).includes('/');
  }

  /**
   * Writes the caches of the files loaded without an accepted one, from their scripts as they
   * are now (with the functions start-up compiled). Once per process. The entry's cache is
   * only read beside the bundle, so it is not written into the data directory.
   */
  started(): void {
    if (this.written) return;
    this.written = true;
    for (const f of this.loaded) {
      if (!f.script || f.outcome === 'accepted') continue;
      const data = f.script.createCachedData();
      const name = cacheName(f.path, f.key, this.runtime);
      let lastError: unknown;
      for (const dir of this.cacheDirs) {
        try {
          writeCacheFile(join(dir, name), data);
          this.removeStale(dir, f.path, f.key);
          lastError = undefined;
          break;
        } catch (e) {
          lastError = e;
        }
      }
      if (lastError !== undefined) this.options.onWriteError?.(f.path, lastError);
    }
  }

  /** Caches of earlier builds of the same file (another content key): never read again. */
  private removeStale(dir: string, file: string, key: string): void {
    const prefix = `${basename(file)}.`;
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(prefix) || name.startsWith(`${prefix}${key}.`)) continue;
      // Chunk names carry their own hash, so only a rebuilt file of the same name matches.
      if (name.slice(prefix.length).split('.').length !== 3) continue;
      rmSync(join(dir, name), { force: true });
    }
  }
}

/** The built entry point: loads `entry` (a bundled .cjs file) with caches, exposing the hook. */
export function runBundle(entry: string): unknown {
  const bundleDir = dirname(resolve(entry));
  // Node maps stack traces only for the files its own loader compiled.
  const useCache = !process.sourceMapsEnabled;
  const loader = new BundleLoader(bundleDir, { useCache });
  setBundleLoaderHook(loader);
  return loader.load(entry);
}
