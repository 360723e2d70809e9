import { describe, it, expect } from 'vitest';
import { parseGoDuration } from './go-duration.js';

describe('parseGoDuration (Go time.ParseDuration)', () => {
  it.each([
    ['0', 0n],
    ['-0', 0n],
    ['1s', 1_000_000_000n],
    ['+1s', 1_000_000_000n],
    ['-5s', -5_000_000_000n],
    ['1m30s', 90_000_000_000n],
    ['1.5h', 5_400_000_000_000n],
    ['.5s', 500_000_000n],
    ['1.s', 1_000_000_000n],
    ['250ms', 250_000_000n],
    ['3us', 3_000n],
    ['3µs', 3_000n],
    ['3μs', 3_000n],
    ['7ns', 7n],
    ['2562047h', 9_223_369_200_000_000_000n],
  ])('%s → %s ns', (text, ns) => {
    expect(parseGoDuration(text)).toEqual({ ok: true, nanoseconds: ns });
  });

  it.each([
    ['', 'time: invalid duration ""'],
    ['garbage', 'time: invalid duration "garbage"'],
    ['-', 'time: invalid duration "-"'],
    ['.s', 'time: invalid duration ".s"'],
    ['5', 'time: missing unit in duration "5"'],
    ['1s5', 'time: missing unit in duration "1s5"'],
    ['5d', 'time: unknown unit "d" in duration "5d"'],
    ['5 s', 'time: unknown unit " s" in duration "5 s"'],
    ['9999999999999h', 'time: invalid duration "9999999999999h"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
  ])('%j is refused with %s', (text, error) => {
    expect(parseGoDuration(text)).toEqual({ ok: false, error });
  });
});
