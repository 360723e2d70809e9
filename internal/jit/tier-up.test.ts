import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { SERVER_INTERRUPT_BUDGET, setServerTierUp } from './tier-up.js';

describe('server tier-up', () => {
  const ours = `--interrupt-budget=${SERVER_INTERRUPT_BUDGET}`;
  const cases: Array<{ name: string; execArgv: string[]; set: string[] }> = [
    { name: 'no flags', execArgv: [], set: [ours] },
    { name: 'other node flags', execArgv: ['--max-old-space-size=2048', '--cpu-prof'], set: [ours] },
    { name: 'a flag that only starts alike', execArgv: ['--interrupt-budget-for-feedback-allocation=100'], set: [ours] },
    { name: 'the flag on the command line', execArgv: ['--interrupt-budget=67584'], set: [] },
    { name: 'the flag spelt with underscores', execArgv: ['--interrupt_budget=1000'], set: [] },
    { name: 'the flag among others', execArgv: ['--max-old-space-size=512', '--interrupt-budget=50000', '--cpu-prof'], set: [] },
  ];
  it.each(cases)('$name', ({ execArgv, set }) => {
    const got: string[] = [];
    const flag = setServerTierUp({ execArgv, set: (f) => got.push(f) });
    expect(got).toEqual(set);
    expect(flag).toBe(set[0]);
  });

  it('gets a hot function optimized sooner when set at run time', () => {
    // How many calls V8 takes to optimize a function, in a fresh node whose budget is set as
    // the server sets it (after start). Compiled on the main thread, so the count is exact.
    const script = `
      const v8 = require('node:v8');
      if (process.argv[1]) v8.setFlagsFromString(process.argv[1]);
      function work(a) { let s = 0; for (let i = 0; i < 8; i++) s += (a * i) ^ (s >>> 1); return s; }
      let n = 0;
      while ((%GetOptimizationStatus(work) & 16) === 0 && n < 1e6) { work(n); n++; }
      process.stdout.write(String(n));`;
    const callsToOptimize = (flag: string) =>
      Number(execFileSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', '-e', script, flag], { encoding: 'utf8' }));
    const byDefault = callsToOptimize('');
    const tuned = callsToOptimize(`--interrupt-budget=${SERVER_INTERRUPT_BUDGET}`);
    expect(byDefault).toBeLessThan(1e6);
    expect(tuned).toBeGreaterThan(0);
    expect(tuned * 3).toBeLessThan(byDefault);
  });
});
