// Lint: the consensus core stays pure. Practice 1 of CONVENTIONS.md: no timers, clock,
// randomness, file system or sockets inside raft/core, and nothing from internal/ anywhere in
// the Raft code this test owns. Test files are exempt (they may read golden files).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = fileURLToPath(new URL('.', import.meta.url));
const raftDir = join(here, '..');

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const FORBIDDEN_IN_CORE: [RegExp, string][] = [
  [/from\s+['"](node:)?fs(\/promises)?['"]/, 'file system import'],
  [/from\s+['"](node:)?(net|tls|http|https|dgram|child_process|worker_threads)['"]/, 'network/process import'],
  [/from\s+['"](node:)?timers(\/promises)?['"]/, 'timers import'],
  [/\b(setTimeout|setInterval|setImmediate|queueMicrotask)\s*\(/, 'timer'],
  [/Math\.random/, 'Math.random (inject a RandomSource)'],
  [/Date\.now|new Date\(|performance\.now/, 'wall clock (time is tick())'],
  [/process\.(env|hrtime)/, 'process environment/clock'],
  [/\bawait\b|\basync\b/, 'asynchrony (the core is synchronous)'],
  [/internal\//, 'import from internal/'],
];

describe('raft/core has no I/O, clocks or randomness', () => {
  const files = sourceFiles(here);
  it('finds the core sources', () => {
    expect(files.length).toBeGreaterThan(10);
  });
  for (const f of files) {
    it(relative(raftDir, f), () => {
      const lines = readFileSync(f, 'utf8').split('\n');
      const problems: string[] = [];
      lines.forEach((line, i) => {
        // Comments may mention these words; only code counts.
        const code = /^\s*(\*|\/\*)/.test(line) ? '' : line.replace(/\/\/.*$/, '');
        for (const [re, what] of FORBIDDEN_IN_CORE) if (re.test(code)) problems.push(`${i + 1}: ${what}: ${line.trim()}`);
      });
      expect(problems).toEqual([]);
    });
  }
});

describe('raft simulation and checker do not depend on internal/', () => {
  for (const sub of ['sim', 'linearizability']) {
    for (const f of sourceFiles(join(raftDir, sub))) {
      it(relative(raftDir, f), () => {
        expect(readFileSync(f, 'utf8')).not.toMatch(/from\s+['"][^'"]*internal\//);
      });
    }
  }
});
