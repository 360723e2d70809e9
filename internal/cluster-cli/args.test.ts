import { describe, it, expect } from 'vitest';
import { parseArgs, UsageError } from './args.js';

const defs = { out: {}, replica: { repeated: true }, output: { short: 'o' } };
const parse = (...argv: string[]) => parseArgs(argv, defs, 'clusterd test');

describe('parseArgs', () => {
  it('reads --name=value, --name value, -o value, -o=value, -ovalue, repeats, positionals and --', () => {
    const a = parse('remove', '--out=/x', '--replica', 'a=1.2.3.4', '--replica=b', '-o', 'json', 'b', '--', '--not-a-flag');
    expect(a.positionals).toEqual(['remove', 'b', '--not-a-flag']);
    expect(a.flags.get('out')).toEqual(['/x']);
    expect(a.flags.get('replica')).toEqual(['a=1.2.3.4', 'b']);
    expect(a.flags.get('output')).toEqual(['json']);
    expect(a.help).toBe(false);
    expect(parse('-o=wide').flags.get('output')).toEqual(['wide']);
    expect(parse('-owide').flags.get('output')).toEqual(['wide']);
    expect(parse('--out=').flags.get('out')).toEqual(['']);
    expect(parse('x', '-h').help).toBe(true);
    expect(parse('--help').help).toBe(true);
  });

  it.each([
    [['--bogus'], 'unknown flag: --bogus (see clusterd test --help)'],
    [['-x'], 'unknown flag: -x (see clusterd test --help)'],
    [['--out'], 'flag needs an argument: --out'],
    [['--out', '--replica=a'], 'flag needs an argument: --out'],
    [['-o'], 'flag needs an argument: --output'],
    [['--out=a', '--out=b'], '--out given twice (see clusterd test --help)'],
  ])('refuses %j', (argv, message) => {
    expect(() => parse(...argv)).toThrow(UsageError);
    expect(() => parse(...argv)).toThrow(message);
  });
});
