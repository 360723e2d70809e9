// The first collection's effect on optimized code (ServerMetrics.prime). A file of its own:
// vitest runs each file in a fresh process, and what is checked here happens once per process.

import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { ServerMetrics } from './metrics.js';

// V8's intrinsics, allowed from here on; code compiled after this line may call them.
setFlagsFromString('--allow-natives-syntax');
const optimizationStatus = new Function('f', 'return %GetOptimizationStatus(f)') as (f: unknown) => number;
const optimizeNow = new Function('f', 'x', '%PrepareFunctionForOptimization(f); f(x); f(x); %OptimizeFunctionOnNextCall(f); f(x);') as (f: unknown, x: number) => void;
const IS_OPTIMIZED = 1 << 4; // V8's OptimizationStatus::kOptimized
const isOptimized = (f: unknown): boolean => (optimizationStatus(f) & IS_OPTIMIZED) !== 0;

/** What hot code does: an iterator-result-like literal, read back. */
const step = new Function('i', 'const r = { value: i, done: i > 1e9 }; return r.done ? 0 : r.value + 1;') as (i: number) => number;

describe('ServerMetrics.prime', () => {
  it('makes the first collection before anything is optimized: a later scrape deoptimizes no code that uses { value, done } objects', async () => {
    const metrics = new ServerMetrics({ version: { major: 1, minor: 32 }, storedObjects: () => [], resourceOfPrefix: (p) => p });
    try {
      await metrics.prime();
      optimizeNow(step, 1);
      expect(isOptimized(step)).toBe(true);
      // Without prime() this scrape is the process's first collection: prom-client adds to a
      // counter's { value, labels } object, V8 stops treating `value` of that shared map as
      // constant, and `step` is deoptimized.
      expect(await metrics.text()).toContain('process_cpu_user_seconds_total');
      expect(step(2)).toBe(3);
      expect(isOptimized(step)).toBe(true);
    } finally {
      metrics.close();
    }
  });
});
