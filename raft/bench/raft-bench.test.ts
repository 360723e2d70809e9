// The raft-bench command line (the benchmark itself runs under make bench, not here).
import { describe, expect, it } from 'vitest';
import { parseRaftBenchArgs } from './raft-bench.js';

describe('parseRaftBenchArgs', () => {
  it.each([
    { argv: [], want: { quick: false, spread: false, outFile: undefined } },
    { argv: ['--quick', '--spread'], want: { quick: true, spread: true, outFile: undefined } },
    { argv: ['--out', '/tmp/r.json'], want: { quick: false, spread: false, outFile: '/tmp/r.json' } },
    { argv: ['--out=/tmp/r.json', '--quick'], want: { quick: true, spread: false, outFile: '/tmp/r.json' } },
  ])('$argv', ({ argv, want }) => {
    expect(parseRaftBenchArgs(argv)).toEqual(want);
  });

  it('answers help instead of running', () => {
    expect(parseRaftBenchArgs(['--help'])).toBe('help');
    expect(parseRaftBenchArgs(['--quick', '-h'])).toBe('help');
  });

  it.each([[['--fast']], [['extra']], [['--out']], [['--out=']], [['--quick=yes']]])('refuses %j', (argv) => {
    expect(() => parseRaftBenchArgs(argv)).toThrow();
  });
});
