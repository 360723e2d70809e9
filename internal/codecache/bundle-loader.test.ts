// The code-caching loader on small generated bundles in a temporary directory: the files run as
// CommonJS with a require that reaches the bundle's other files and Node's packages; a second
// loader reads the caches the first wrote; a truncated or corrupt cache, one V8 rejects and one
// of an earlier build are ignored and (the stale one) replaced; an unwritable cache directory
// falls through to the next one.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BundleLoader, CODE_CACHE_DIR, readCacheFile, writeCacheFile } from './bundle-loader.js';

// Each start here stands for a new process: without this, V8 finds a source compiled by an
// earlier "start" in the isolate's own compilation cache and never looks at the cached data.
setFlagsFromString('--no-compilation-cache');

let dir: string;
let cacheDir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'codecache-'));
  cacheDir = join(dir, CODE_CACHE_DIR);
  writeFileSync(
    join(dir, 'main.cjs'),
    [
      '"use strict";',
      'const helper = require("./chunk-helper.cjs");',
      'const { basename } = require("node:path");',
      'exports.answer = () => helper.double(21);',
      'exports.file = basename(__filename);',
      // Strict as the ES modules the bundle is built from: a write to a frozen object throws.
      'exports.strict = (() => { try { Object.freeze({ a: 1 }).a = 2; return false; } catch { return true; } })();',
      'exports.later = () => import("node:os").then((m) => typeof m.tmpdir);',
    ].join('\n'),
  );
  // Requires main back (a cycle, as the bundle's chunks do): gets main's exports so far.
  writeFileSync(join(dir, 'chunk-helper.cjs'), '"use strict";\nconst main = require("./main.cjs");\nexports.double = (n) => n * 2;\nexports.main = main;\n');
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface Main {
  answer(): number;
  file: string;
  strict: boolean;
  later(): Promise<string>;
}

/** One "process": loads main.cjs, runs it, writes the caches as after readiness. */
function start(options: ConstructorParameters<typeof BundleLoader>[1] = {}): { loader: BundleLoader; main: Main } {
  const loader = new BundleLoader(dir, options);
  const main = loader.load(join(dir, 'main.cjs')) as Main;
  expect(main.answer()).toBe(42);
  loader.started();
  return { loader, main };
}

const cacheFiles = (d = cacheDir) => readdirSync(d).filter((f) => f.endsWith('.v8')).sort();

describe('BundleLoader', () => {
  it('runs the bundle as strict CommonJS with its own files, packages and dynamic import', async () => {
    const { main } = start();
    expect(main.file).toBe('main.cjs');
    expect(main.strict).toBe(true);
    expect(await main.later()).toBe('function');
  });

  it('writes a cache per file after start and the next start accepts them', () => {
    const first = start();
    expect(first.loader.outcomes()).toEqual([
      { file: 'main.cjs', outcome: 'missing' },
      { file: 'chunk-helper.cjs', outcome: 'missing' },
    ]);
    expect(cacheFiles()).toHaveLength(2);
    const second = start();
    expect(second.loader.outcomes().map((o) => o.outcome)).toEqual(['accepted', 'accepted']);
  });

  it.each([
    ['truncated', (b: Buffer) => b.subarray(0, b.length - 7)],
    ['corrupt in its payload', (b: Buffer) => Buffer.from(b).fill(0x5a, b.length - 40, b.length - 20)],
    ['empty', () => Buffer.alloc(0)],
    ['of another format', (b: Buffer) => Buffer.concat([Buffer.from('garbage'), b])],
  ])('a %s cache is ignored and rewritten', (_name, damage) => {
    start();
    const name = cacheFiles().find((f) => f.startsWith('main.cjs.'))!;
    const path = join(cacheDir, name);
    const good = readFileSync(path);
    writeFileSync(path, damage(good));
    expect(readCacheFile(path)).toBe('corrupt');
    const second = start();
    expect(second.loader.outcomes()).toEqual([
      { file: 'main.cjs', outcome: 'corrupt' },
      { file: 'chunk-helper.cjs', outcome: 'accepted' },
    ]);
    // Rewritten whole: the next start accepts it.
    expect(readCacheFile(path)).toBeInstanceOf(Buffer);
    expect(start().loader.outcomes().map((o) => o.outcome)).toEqual(['accepted', 'accepted']);
  });

  it('a cache V8 rejects (its checksum intact) is ignored and rewritten', () => {
    start();
    const name = cacheFiles().find((f) => f.startsWith('chunk-helper.cjs.'))!;
    // Well-formed to our header, but not V8's cached data for this source.
    writeCacheFile(join(cacheDir, name), Buffer.alloc(256, 7));
    const second = start();
    expect(second.loader.outcomes()).toEqual([
      { file: 'main.cjs', outcome: 'accepted' },
      { file: 'chunk-helper.cjs', outcome: 'rejected' },
    ]);
    expect(start().loader.outcomes().map((o) => o.outcome)).toEqual(['accepted', 'accepted']);
  });

  it('a rebuilt file never reads the earlier build cache, which is replaced by its own', () => {
    start();
    const before = cacheFiles();
    writeFileSync(join(dir, 'chunk-helper.cjs'), '"use strict";\nexports.double = (n) => n + n;\n');
    const second = start();
    expect(second.loader.outcomes()).toEqual([
      { file: 'main.cjs', outcome: 'accepted' },
      { file: 'chunk-helper.cjs', outcome: 'missing' },
    ]);
    const after = cacheFiles();
    expect(after).toHaveLength(2);
    expect(after.find((f) => f.startsWith('main.cjs.'))).toBe(before.find((f) => f.startsWith('main.cjs.')));
    expect(after.find((f) => f.startsWith('chunk-helper.cjs.'))).not.toBe(before.find((f) => f.startsWith('chunk-helper.cjs.')));
  });

  it('writes into the next directory when the first cannot be written, and reads it from there', () => {
    // A file where the directory should be: unwritable even for root.
    writeFileSync(cacheDir, 'not a directory');
    const dataDir = join(dir, 'data');
    const loader = new BundleLoader(dir);
    loader.useDataDir(dataDir);
    expect((loader.load(join(dir, 'main.cjs')) as Main).answer()).toBe(42);
    loader.started();
    expect(cacheFiles(join(dataDir, CODE_CACHE_DIR))).toHaveLength(2);
    const again = new BundleLoader(dir);
    again.useDataDir(dataDir);
    again.load(join(dir, 'main.cjs'));
    expect(again.outcomes().map((o) => o.outcome)).toEqual(['accepted', 'accepted']);
  });

  it('goes on without caches when no directory can be written, telling why', () => {
    writeFileSync(cacheDir, 'not a directory');
    const failed: string[] = [];
    start({ onWriteError: (file) => failed.push(file) });
    expect(failed.map((f) => f.slice(dir.length + 1))).toEqual(['main.cjs', 'chunk-helper.cjs']);
  });

  it('with the cache off, loads through Node own require and writes nothing', () => {
    const { loader } = start({ useCache: false });
    expect(loader.outcomes()).toEqual([{ file: 'main.cjs', outcome: 'disabled' }]);
    expect(readdirSync(dir)).not.toContain(CODE_CACHE_DIR);
  });
});
