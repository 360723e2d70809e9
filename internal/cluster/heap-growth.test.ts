import { describe, expect, it } from 'vitest';
import { operatorChoseGrowth, setReplicaHeapGrowth } from './heap-growth.js';

describe('replica heap growth', () => {
  const cases: Array<{ name: string; execArgv: string[]; nodeOptions?: string; chose: boolean }> = [
    { name: 'no flags', execArgv: [], chose: false },
    { name: 'other node flags', execArgv: ['--max-old-space-size=2048', '--perf-basic-prof'], nodeOptions: '--enable-source-maps', chose: false },
    { name: 'the flag on the command line', execArgv: ['--heap-growing-percent=30'], chose: true },
    { name: 'the flag spelt with underscores', execArgv: ['--heap_growing_percent=30'], chose: true },
    { name: 'the flag in NODE_OPTIONS', execArgv: [], nodeOptions: '--max-old-space-size=512 --heap-growing-percent=50', chose: true },
  ];
  it.each(cases)('$name', ({ execArgv, nodeOptions, chose }) => {
    expect(operatorChoseGrowth(execArgv, nodeOptions)).toBe(chose);
    const set: string[] = [];
    const flag = setReplicaHeapGrowth({ execArgv, nodeOptions, set: (f) => set.push(f) });
    expect(set).toEqual(chose ? [] : ['--heap-growing-percent=100']);
    expect(flag).toBe(chose ? undefined : '--heap-growing-percent=100');
  });
});
