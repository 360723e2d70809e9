import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ReloadableFiles, type LoadedFiles } from './reloadable-files.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'reload-'));
  dirs.push(d);
  return d;
}

describe('ReloadableFiles', () => {
  it('hashes nothing as none', () => {
    expect(new ReloadableFiles(new Map()).loaded.hash).toBe('none');
  });

  it('gives identical contents the same hash and notices a replaced file', () => {
    const d = tmp();
    const a = join(d, 'authn.yaml');
    const z = join(d, 'authz.yaml');
    writeFileSync(a, 'x: 1\n');
    writeFileSync(z, 'y: 2\n');
    const files = new ReloadableFiles(new Map([['authentication', a], ['authorization', z]]));
    const again = new ReloadableFiles(new Map([['authorization', z], ['authentication', a]]));
    expect(files.loaded.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(again.loaded.hash).toBe(files.loaded.hash);
    const seen: LoadedFiles[] = [];
    files.onChange((l) => seen.push(l));
    // Replaced by rename, as editors and ConfigMap volumes do.
    writeFileSync(join(d, 'new'), 'x: 2\n');
    renameSync(join(d, 'new'), a);
    files.check();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.hash).not.toBe(again.loaded.hash);
    expect(seen[0]!.contents.get('authentication')!.toString()).toBe('x: 2\n');
  });

  it('keeps the loaded contents when a file disappears, and reports why', () => {
    const d = tmp();
    const a = join(d, 'authn.yaml');
    writeFileSync(a, 'x: 1\n');
    const files = new ReloadableFiles(new Map([['authentication', a]]));
    const before = files.loaded.hash;
    rmSync(a);
    files.check();
    expect(files.loaded.hash).toBe(before);
    expect(files.loaded.error).toMatch(/cannot read the authentication configuration/);
  });

  it('refuses to start on a missing file', () => {
    expect(() => new ReloadableFiles(new Map([['authentication', '/nonexistent/x']]))).toThrow(/cannot read/);
  });
});
