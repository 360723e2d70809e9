// spawnBuiltModule runs the compiled module of dist/ from a TypeScript caller, and refuses to
// when dist/ is missing it or is older than the sources (stale code would be tested silently).
import { once } from 'node:events';
import { mkdtemp, mkdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnBuiltModule } from './spawn-module.js';

let dir = '';
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = '';
});

/** A repository with raft/a/caller.ts and raft/a/child.ts; dist/ holds child.js unless told otherwise. */
async function repo(opts: { built: boolean; distAgeMs?: number }): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), 'spawn-built-'));
  await writeFile(join(dir, 'tsconfig.build.json'), '{}');
  await mkdir(join(dir, 'raft', 'a'), { recursive: true });
  await writeFile(join(dir, 'raft', 'a', 'caller.ts'), '');
  await writeFile(join(dir, 'raft', 'a', 'child.ts'), "console.log('from source');\n");
  // Tests are not compiled: never required in dist/.
  await writeFile(join(dir, 'raft', 'a', 'child.test.ts'), '');
  if (opts.built) {
    await mkdir(join(dir, 'dist', 'raft', 'a'), { recursive: true });
    for (const m of ['caller', 'child']) {
      const out = join(dir, 'dist', 'raft', 'a', `${m}.js`);
      await writeFile(out, m === 'child' ? "console.log('from dist');\n" : '');
      const at = new Date(Date.now() + (opts.distAgeMs ?? 0));
      await utimes(out, at, at);
    }
  }
  return pathToFileURL(join(dir, 'raft', 'a', 'caller.ts')).href;
}

async function output(child: ReturnType<typeof spawnBuiltModule>): Promise<string> {
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  await once(child, 'exit');
  return out.trim();
}

describe('spawnBuiltModule', () => {
  it('runs the compiled module of dist/ from a TypeScript caller', async () => {
    const caller = await repo({ built: true, distAgeMs: 60_000 });
    expect(await output(spawnBuiltModule(caller, './child.ts'))).toBe('from dist');
  });

  it('refuses when dist/ lacks a module', async () => {
    const caller = await repo({ built: false });
    expect(() => spawnBuiltModule(caller, './child.ts')).toThrow(/dist\/ is missing or older than raft\/a\/caller\.ts, raft\/a\/child\.ts: run `make build`/);
  });

  it('refuses when a source is newer than its compiled module', async () => {
    const caller = await repo({ built: true, distAgeMs: -60_000 });
    expect(() => spawnBuiltModule(caller, './child.ts')).toThrow(/older than raft\/a\/caller\.ts, raft\/a\/child\.ts/);
  });

  it('from a compiled caller, runs the sibling .js', async () => {
    await repo({ built: true });
    const caller = pathToFileURL(join(dir, 'dist', 'raft', 'a', 'caller.js')).href;
    expect(await output(spawnBuiltModule(caller, './child.ts'))).toBe('from dist');
  });
});
