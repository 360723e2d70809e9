import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The engine comparison stays runnable, and the server's environment (run from dist/, which
// `make test` builds first) never passes fewer cases than the bare engine: the libraries only
// add what the engine lacks.
const root = join(__dirname, '..');
type Result = { passed: number; total: number; failures: Array<{ expr: string }>; missing?: string };

describe('tools/cel-conformance.mjs', () => {
  const out = JSON.parse(execFileSync(process.execPath, [join(root, 'tools', 'cel-conformance.mjs'), '--json'], { encoding: 'utf8' })) as Record<string, Result>;

  it('runs every engine on every case', () => {
    for (const name of ['@marcbachmann/cel-js', '@bufbuild/cel', 'cel-js', 'clusterd (kubernetesCelEnvironment)']) {
      expect(out[name]?.missing, name).toBeUndefined();
      expect(out[name]!.total).toBeGreaterThanOrEqual(140);
    }
  });

  it('the server environment fails no case the engine passes, and passes the most', () => {
    const ours = out['clusterd (kubernetesCelEnvironment)']!;
    const engine = out['@marcbachmann/cel-js']!;
    const engineFails = new Set(engine.failures.map((f) => f.expr));
    expect(ours.failures.filter((f) => !engineFails.has(f.expr))).toEqual([]);
    for (const other of Object.values(out)) expect(ours.passed).toBeGreaterThanOrEqual(other.passed);
  });
});
