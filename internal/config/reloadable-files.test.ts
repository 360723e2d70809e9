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

  it('hashes the authorization file: replicas with other authorization files differ (the cluster config-hash check)', () => {
    const d = tmp();
    const a = join(d, 'authn.yaml');
    const z1 = join(d, 'authz1.yaml');
    const z2 = join(d, 'authz2.yaml');
    writeFileSync(a, 'x: 1\n');
    writeFileSync(z1, 'authorizers: [{type: RBAC, name: rbac}]\n');
    writeFileSync(z2, 'authorizers: [{type: Node, name: node}]\n');
    const one = new ReloadableFiles(new Map([['authentication', a], ['authorization', z1]]));
    const other = new ReloadableFiles(new Map([['authentication', a], ['authorization', z2]]));
    const authnOnly = new ReloadableFiles(new Map([['authentication', a]]));
    expect(one.loaded.hash).not.toBe(other.loaded.hash);
    expect(one.loaded.hash).not.toBe(authnOnly.loaded.hash);
    // The role is hashed too: the same bytes as the other file are another configuration.
    expect(new ReloadableFiles(new Map([['authorization', a]])).loaded.hash).not.toBe(authnOnly.loaded.hash);
    expect(one.loaded.contents.get('authorization')!.toString()).toContain('RBAC');
  });

  it('re-reads on a forced check even when the metadata did not change', () => {
    const d = tmp();
    const z = join(d, 'authz.yaml');
    writeFileSync(z, 'a: 1\n');
    const files = new ReloadableFiles(new Map([['authorization', z]]));
    const seen: LoadedFiles[] = [];
    files.onChange((l) => seen.push(l));
    files.check(true);
    expect(seen).toHaveLength(0);
    writeFileSync(z, 'a: 2\n');
    files.check(true);
    expect(seen.map((l) => l.contents.get('authorization')!.toString())).toEqual(['a: 2\n']);
  });

  it('refuses to start on a missing file', () => {
    expect(() => new ReloadableFiles(new Map([['authentication', '/nonexistent/x']]))).toThrow(/cannot read/);
  });
});
