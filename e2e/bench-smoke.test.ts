// `make bench`'s harness end to end in its tiny mode (seconds, not minutes): the server, the
// ceiling, etcd when installed, the generator processes and every scenario run, and the table
// and the JSON file come out with a row per figure. It asserts on the shape of the output, never
// on the numbers (issue 7: figures stay out of tests).
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess, type ProcessRun } from './support/run-process.js';
import { PROJECT_ROOT } from './support/server-process.js';

interface BenchJson {
  mode: string;
  machine: { cores: number };
  note: string;
  failures: string[];
  rows: { scenario: string; figure: string; value: number | null; baseline?: { name: string; value: number | null }; target: string; holds: boolean | null; note?: string }[];
}

/** Runs one of the bench's built entry points (`dist/bench/<script>`) to its end. */
function runBench(script: string, args: string[]): Promise<ProcessRun> {
  return runProcess(process.execPath, [join(PROJECT_ROOT, 'dist', 'bench', script), ...args]);
}

describe('make bench harness (tiny mode)', () => {
  it('runs every scenario against the server and its baselines and writes the table and the JSON', async () => {
    const outDir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
    const run = await runBench('run.js', ['--tiny', '--jit-warmup', '0.2', '--out-dir', outDir]);
    expect(run.stderr).toMatch(/^\[00:\d\d\] clusterd bench \(tiny\)/m);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('share this machine');
    // --jit-warmup: each compared system of the write rows gets its unmeasured load first.
    for (const phase of ['create: clusterd', 'update: clusterd']) expect(run.stderr).toContain(`${phase}, JIT warm-up (not measured): 0.2 s`);
    expect(run.stdout).toContain('| scenario | figure | clusterd | baseline | ratio | target | holds? |');
    for (const scenario of [
      'startup to /readyz 200, nothing stored',
      'idle RSS after start',
      'get one object (2 KB pod), 64 connections',
      'get one object (2 KB pod) over HTTP/2, 16 streams per connection',
      'authenticated GETs: service-account token vs client certificate',
      'authorized reads: RoleBinding user among RBAC objects vs system:masters',
      'create pods, 32 in flight, fsync on',
      'create pods through a ValidatingAdmissionPolicy (3 CEL rules) vs plain creates',
      'update (PUT), 32 in flight',
      'delete, 32 in flight',
      'creates through a no-op validating webhook on loopback vs plain creates',
      'LIST 100 pods from cache',
      'watch fan-out',
      'watch selective',
      'encodings: 100-pod list from cache',
      'server-side apply of a Deployment with three managers',
      'startup to /readyz 200 with',
      'RSS with',
      'Raft: 3 members on loopback',
    ]) {
      expect(run.stdout).toContain(`| ${scenario}`);
    }
    expect(run.stdout).not.toContain('scenario failed');

    const files = readdirSync(outDir);
    expect(files.filter((f) => f.endsWith('.md'))).toHaveLength(1);
    const json = JSON.parse(readFileSync(join(outDir, files.find((f) => f.endsWith('.json'))!), 'utf8')) as BenchJson;
    expect(json.mode).toBe('tiny');
    expect(json.failures).toEqual([]);
    expect(json.machine.cores).toBeGreaterThan(0);
    // Every row has a figure or says why it has none.
    for (const row of json.rows) {
      if (row.value === null) expect(row.note, `${row.scenario} / ${row.figure}`).toMatch(/^n\/a: /);
      else expect(Number.isFinite(row.value), `${row.scenario} / ${row.figure}`).toBe(true);
    }
    const measured = (scenario: string, figure: string) => json.rows.find((r) => r.scenario.startsWith(scenario) && r.figure === figure)?.value;
    expect(measured('get one object', 'requests/s')).toBeGreaterThan(0);
    // Both sides of the HTTP/2 row answered (only successful requests count).
    const h2 = json.rows.find((r) => r.scenario.startsWith('get one object (2 KB pod) over HTTP/2') && r.figure === 'requests/s');
    expect(h2?.value).toBeGreaterThan(0);
    expect(h2?.baseline?.value).toBeGreaterThan(0);
    expect(measured('authenticated GETs', 'requests/s (token, cache hit)')).toBeGreaterThan(0);
    expect(measured('authorized reads', 'GET one pod: requests/s (RBAC user)')).toBeGreaterThan(0);
    expect(measured('authorized reads', 'LIST of 10 pods: requests/s (RBAC user)')).toBeGreaterThan(0);
    expect(measured('create pods', 'creates/s')).toBeGreaterThan(0);
    expect(measured('creates through a no-op validating webhook', 'creates/s (through the webhook)')).toBeGreaterThan(0);
    expect(measured('create pods through a ValidatingAdmissionPolicy', 'creates/s through the policy')).toBeGreaterThan(0);
    expect(measured('LIST 100 pods', 'time per list (mean)')).toBeGreaterThan(0);
    expect(measured('watch fan-out', 'delivery p99 (from write ack)')).toBeGreaterThanOrEqual(0);
    // The fan-out is measured side by side with the bare HTTP/2 ceiling serving the same events.
    const fanOut = json.rows.find((r) => r.scenario.startsWith('watch fan-out') && r.figure === 'delivery p99 (from write ack)');
    expect(fanOut?.baseline?.name).toBe('ceiling');
    expect(fanOut?.baseline?.value).toBeGreaterThanOrEqual(0);
    // By default the watchers are the native client (bench/native/h2watch).
    const fanOutNote = json.rows.find((r) => r.scenario.startsWith('watch fan-out') && r.figure === 'delivery p50 (from write ack)')?.note;
    expect(fanOutNote).toContain('(native client)');
  }, 90_000);

  it.each([
    [['--watch-rate', '0'], '--watch-rate: 0 is not a positive whole number'],
    [['--watch-client', 'go'], '--watch-client: go is neither native nor node'],
    [['--watch-client'], '--watch-client needs a value'],
    [['--jit-warmup', 'soon'], '--jit-warmup: soon is not a number of seconds'],
    [['--jit-warmup', '-1'], '--jit-warmup: -1 is not a number of seconds'],
  ])('refuses %j before starting anything', async (args, message) => {
    const run = await runBench('run.js', args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it('compares two builds side by side (ab-writes, this checkout against itself)', async () => {
    const run = await runBench('ab-writes.js', ['--base', PROJECT_ROOT, '--slices', '2', '--slice-seconds', '0.3', '--warmup-seconds', '0.2', '--in-flight', '4']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^put: slice 2\/2: base \d+ µs, this \d+ µs$/m);
    // One row per operation: both servers' CPU per request, their ratio and rates, every slice.
    for (const op of ['create', 'put']) expect(run.stdout).toMatch(new RegExp(`^\\| ${op} \\| \\d+ µs \\| \\d+ µs \\| \\d+\\.\\d{3}× \\| \\d+/s \\| \\d+/s \\| \\d+ \\d+; \\d+ \\d+ \\|$`, 'm'));
  }, 60_000);
});
