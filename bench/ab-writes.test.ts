import { describe, expect, it } from 'vitest';
import { cpuPerRequestUs, parseAbArgs } from './ab-writes.js';

describe('ab-writes flags', () => {
  const defaults = { base: '/b', slices: 8, sliceMs: 4000, warmupMs: 20_000, inFlight: 32, ops: ['create', 'put'] };
  it.each([
    ['only the base', ['--base', '/b'], defaults],
    ['inline values', ['--base=/b', '--slices=3', '--slice-seconds=0.5', '--warmup-seconds=0'], { ...defaults, slices: 3, sliceMs: 500, warmupMs: 0 }],
    ['one operation, in flight', ['--base', '/b', '--ops', 'put', '--in-flight', '64'], { ...defaults, ops: ['put'], inFlight: 64 }],
    ['operations in the order they must run', ['--base', '/b', '--ops', 'put,create'], defaults],
  ])('%s', (_name, argv, want) => {
    expect(parseAbArgs(argv)).toEqual(want);
  });

  it('answers help before anything else', () => {
    expect(parseAbArgs(['--slices', '2', '--help'])).toBe('help');
  });

  it.each([
    ['no base', [], /--base DIR is required/],
    ['an unknown flag', ['--base', '/b', '--fast'], /unknown flag --fast/],
    ['a missing value', ['--base', '/b', '--slices'], /--slices needs a number of at least 1, not nothing/],
    ['a value that is not a number', ['--base', '/b', '--slice-seconds', 'soon'], /--slice-seconds needs a number/],
    ['zero slices', ['--base', '/b', '--slices', '0'], /--slices needs a number of at least 1, not "0"/],
    ['an unknown operation', ['--base', '/b', '--ops', 'create,patch'], /--ops takes create and put/],
  ])('refuses %s', (_name, argv, message) => {
    expect(() => parseAbArgs(argv)).toThrow(message);
  });
});

describe('ab-writes figures', () => {
  it('gives CPU µs per successful request, none without one', () => {
    expect(cpuPerRequestUs({ cpuMs: 1500, ok: 2000, elapsedMs: 4000, perSlice: [] })).toBe(750);
    expect(cpuPerRequestUs({ cpuMs: 10, ok: 0, elapsedMs: 4000, perSlice: [] })).toBeUndefined();
  });
});
