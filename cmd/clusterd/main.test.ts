import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { spawnModule } from '../../raft/launch/spawn-module.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The packages `entry` loads at start-up: its static, non-type imports, followed through the
 * project's own modules (`await import()` is not followed: that is how modules defer loading).
 * Returns each package with the chain of project files that reaches it.
 */
function staticPackages(entry: string): Map<string, string[]> {
  const seen = new Set<string>();
  const packages = new Map<string, string[]>();
  const walk = (file: string, chain: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
    for (const st of source.statements) {
      let spec: string | undefined;
      if (ts.isImportDeclaration(st) && !st.importClause?.isTypeOnly) spec = (st.moduleSpecifier as ts.StringLiteral).text;
      else if (ts.isExportDeclaration(st) && st.moduleSpecifier && !st.isTypeOnly) spec = (st.moduleSpecifier as ts.StringLiteral).text;
      if (spec === undefined) continue;
      const here = [...chain, file.slice(ROOT.length + 1)];
      if (spec.startsWith('.')) walk(resolve(dirname(file), spec).replace(/\.js$/, '.ts'), here);
      else if (!packages.has(spec)) packages.set(spec, here);
    }
  };
  walk(resolve(ROOT, entry), []);
  return packages;
}

describe('start-up imports', () => {
  // internal/pki/pki.ts: the certificate library costs about 11 MB once loaded; the server
  // (and the operator commands until they generate) must not load it.
  it.each(['cmd/clusterd/main.ts', 'internal/pki/cluster-pki.ts', 'internal/pki/join-token.ts', 'internal/cluster-cli/subcommands.ts'])(
    '%s does not load the certificate library',
    (entry) => {
      const packages = staticPackages(entry);
      for (const heavy of ['@peculiar/x509', 'reflect-metadata']) expect(packages.get(heavy), `${heavy} via ${packages.get(heavy)?.join(' -> ')}`).toBeUndefined();
    },
  );

  it('the entry point loads the server only to serve', () => {
    const packages = staticPackages('cmd/clusterd/main.ts');
    for (const serverOnly of ['hono', '@hono/node-server', 'level', 'protobufjs']) expect(packages.has(serverOnly), serverOnly).toBe(false);
  });
});

describe('the built entry point (dist/cmd/clusterd/main.js, from make build)', () => {
  it('runs as CommonJS, without starting Node\'s ES module loader, and serves --help', () => {
    const entry = resolve(ROOT, 'dist/cmd/clusterd/main.js');
    expect(existsSync(entry), `${entry}: run make build`).toBe(true);
    expect(JSON.parse(readFileSync(resolve(ROOT, 'dist/cmd/clusterd/package.json'), 'utf8'))).toEqual({ type: 'commonjs' });
    const dir = mkdtempSync(join(tmpdir(), 'entry-format-'));
    try {
      // Reports, as the process ends, which of Node's ES-module loader modules it loaded.
      const probe = join(dir, 'probe.cjs');
      writeFileSync(probe, "process.on('exit', () => process.stderr.write('esm-modules:' + process.moduleLoadList.filter((m) => m.includes('internal/modules/esm/')).join(',') + '\\n'));\n");
      const run = spawnSync(process.execPath, ['--require', probe, entry, '--help'], { encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain('Usage: clusterd');
      const loadedEsm = /esm-modules:(.*)/.exec(run.stderr)?.[1];
      expect(loadedEsm, run.stderr).toBeDefined();
      // An ES module entry loads the module job, the resolver and the translators before any of its code runs.
      for (const m of ['module_job', 'resolve', 'translators']) expect(loadedEsm, m).not.toContain(`internal/modules/esm/${m}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('cmd/clusterd subcommand dispatch', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-main-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolveRun, reject) => {
      const child = spawnModule(import.meta.url, './main.ts', { args });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += String(d)));
      child.stderr!.on('data', (d: Buffer) => (stderr += String(d)));
      child.on('error', reject);
      child.on('exit', (code) => resolveRun({ code, stdout, stderr }));
    });

  it('runs subcommands by their first argument and keeps the server flags as they were', async () => {
    const out = join(dir, 'pki');
    const [pkiHelp, membersBad, pki, serverBad, serverHelp] = await Promise.all([
      run(['pki', '--help']),
      run(['members', '-o', 'yaml']),
      run(['pki', '--out', out, '--replica', 'a=127.0.0.1']),
      run(['--bogus']),
      run(['--help']),
    ]);
    expect(pkiHelp).toMatchObject({ code: 0, stderr: '' });
    expect(pkiHelp.stdout).toMatch(/^Usage: clusterd pki --out DIR --replica/);
    expect(membersBad).toEqual({ code: 2, stdout: '', stderr: 'clusterd members: invalid value "yaml" for --output: must be one of json, wide\n' });
    expect(pki.stderr).toBe('');
    expect(pki.code).toBe(0);
    expect(pki.stdout).toContain('  wrote replicas/a/peer.crt\n');
    expect(existsSync(join(out, 'replicas', 'a', 'apiserver.key'))).toBe(true);
    expect(serverBad).toEqual({ code: 2, stdout: '', stderr: 'clusterd: unknown flag: --bogus (see --help)\n' });
    expect(serverHelp.code).toBe(0);
    expect(serverHelp.stdout).toMatch(/^Usage: clusterd \[flags\]\n/);
    expect(serverHelp.stdout).toContain('--data-dir=path');
    expect(serverHelp.stdout).toContain('\nSubcommands (each has --help):\n  clusterd pki\n');
  }, 120_000);

  // A replica's data directory started without its cluster flags served as a single server
  // and took writes its cluster never saw (they stayed on that replica after it rejoined).
  it('refuses to serve a replica\'s data directory without the cluster flags (exit 2, before anything is opened)', async () => {
    const data = join(dir, 'replica-a');
    mkdirSync(join(data, 'raft'), { recursive: true });
    writeFileSync(join(data, 'replica-name'), 'a\n');
    const child = spawnModule(import.meta.url, './main.ts', { args: [`--data-dir=${data}`, '--secure-port=0', '--bind-address=127.0.0.1'] });
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += String(d)));
    const code = await new Promise<number | null | 'served'>((resolveRun) => {
      child.stdout!.on('data', (d: Buffer) => {
        stdout += String(d);
        // Serving is the failure this test is about: stop it rather than wait.
        if (stdout.includes('clusterd is serving')) {
          child.kill('SIGKILL');
          resolveRun('served');
        }
      });
      child.on('exit', (c) => resolveRun(c));
    });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`clusterd: --data-dir ${data} holds the Raft log of cluster replica "a"`);
    expect(existsSync(join(data, 'store')), 'no store was opened').toBe(false);
  }, 120_000);
});
