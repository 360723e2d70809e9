import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { SERVER_INTERRUPT_BUDGET, setServerJitFlags } from './tier-up.js';

describe('server tier-up', () => {
  const budget = `--interrupt-budget=${SERVER_INTERRUPT_BUDGET}`;
  const inlineTotal = '--max-inlined-bytecode-size-cumulative=300';
  const inlineOne = '--max-inlined-bytecode-size=200';
  // In the order they are set: the inlining limits at start, the budget once ready.
  const all = [inlineTotal, inlineOne, budget];
  const cases: Array<{ name: string; execArgv: string[]; set: string[] }> = [
    { name: 'no flags', execArgv: [], set: all },
    { name: 'other node flags', execArgv: ['--max-old-space-size=2048', '--cpu-prof'], set: all },
    { name: 'a flag that only starts alike', execArgv: ['--interrupt-budget-for-feedback-allocation=100'], set: all },
    { name: 'the budget on the command line', execArgv: ['--interrupt-budget=67584'], set: [inlineTotal, inlineOne] },
    { name: 'the budget spelt with underscores', execArgv: ['--interrupt_budget=1000'], set: [inlineTotal, inlineOne] },
    { name: 'the budget among others', execArgv: ['--max-old-space-size=512', '--interrupt-budget=50000', '--cpu-prof'], set: [inlineTotal, inlineOne] },
    { name: 'one inlining limit (the other only starts alike)', execArgv: ['--max-inlined-bytecode-size-cumulative=920'], set: [inlineOne, budget] },
    { name: 'the other inlining limit', execArgv: ['--max_inlined_bytecode_size=460'], set: [inlineTotal, budget] },
    { name: 'all three', execArgv: ['--interrupt-budget=1', '--max-inlined-bytecode-size=1', '--max-inlined-bytecode-size-cumulative=1'], set: [] },
  ];
  it.each(cases)('$name', ({ execArgv, set }) => {
    const got: string[] = [];
    const flags = [...setServerJitFlags('start', { execArgv, set: (f) => got.push(f) }), ...setServerJitFlags('ready', { execArgv, set: (f) => got.push(f) })];
    expect(got).toEqual(set);
    expect(flags).toEqual(set);
  });

  it("inlines a callee of 272 bytes of bytecode by default, and not once the server's start limits are set at run time", () => {
    // A fresh node compiles `caller` on the main thread and traces its inlining decisions;
    // the flags are set from within, after start, as the server sets them.
    const script = `
      const v8 = require('node:v8');
      for (const f of process.argv.slice(1)) v8.setFlagsFromString(f);
      function callee(a) { let s = 0; for (let i = 0; i < 4; i++) { s += (a * i) ^ (s >>> 1); s -= (a + i) | 0; s ^= (s << 3) + a; s += (a % 7) * (i + 1); s = (s & 0xffff) + (s >>> 16); s += (a * 3 + i * 5) ^ (s >> 2); s -= (a >> 1) + (i << 2); s = (s ^ a) + (i * a) % 11; s += ((a | i) & 0xff) - ((a & i) | 1); s = (s * 31 + a) | 0; s ^= (a >>> 3) + (i * 7); s += (s & 7) * (a & 15); } return s; }
      function caller(a) { return callee(a) + callee(a + 1); }
      %PrepareFunctionForOptimization(callee); %PrepareFunctionForOptimization(caller);
      for (let i = 0; i < 100; i++) caller(i);
      %OptimizeFunctionOnNextCall(caller); caller(1);`;
    const trace = (flags: string[]) =>
      execFileSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', '--trace-turbo-inlining', '-e', script, ...flags], { encoding: 'utf8' });
    const inlinesCallee = (out: string) => /Inlining .*<SharedFunctionInfo callee>} into .*<SharedFunctionInfo caller>/.test(out);
    const serverFlags = setServerJitFlags('start', { execArgv: [], set: () => undefined });
    expect(inlinesCallee(trace([]))).toBe(true);
    expect(inlinesCallee(trace(serverFlags))).toBe(false);
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
