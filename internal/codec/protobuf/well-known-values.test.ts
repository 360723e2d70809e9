import { describe, expect, it } from 'vitest';
import {
  compareGoStrings,
  formatGoDuration,
  formatRfc3339,
  isQuantity,
  parseGoDuration,
  parsePlainUtcSeconds,
  parseRfc3339,
  sortedKeys,
} from './well-known-values.js';

describe('RFC 3339', () => {
  it.each([
    ['1970-01-01T00:00:00Z', 0, 0],
    ['2024-02-29T12:00:00Z', 1709208000, 0],
    ['2024-01-01T00:00:00.5+01:00', 1704063600, 500000000],
    ['0001-01-01T00:00:00Z', -62135596800, 0],
    ['1969-12-31T23:59:59.999999999Z', -1, 999999999],
  ])('parses %s', (s, seconds, nanos) => {
    expect(parseRfc3339(s)).toEqual({ seconds, nanos });
  });

  it.each(['2023-02-29T00:00:00Z', '2024-13-01T00:00:00Z', '2024-01-01T24:00:00Z', '2024-01-01 00:00:00Z', '2024-01-01T00:00:60Z', '2024-01-01T00:00:00', 'yesterday', '2024-01-01t00:00:00z'])(
    'rejects %s',
    (s) => {
      expect(parseRfc3339(s)).toBeUndefined();
    },
  );

  it('formats Time (seconds) and MicroTime (microseconds) in UTC, normalizing nanos', () => {
    expect(formatRfc3339(1709208000, 123456789, false)).toBe('2024-02-29T12:00:00Z');
    expect(formatRfc3339(1709208000, 123456789, true)).toBe('2024-02-29T12:00:00.123456Z');
    expect(formatRfc3339(0, -1, true)).toBe('1969-12-31T23:59:59.999999Z');
    expect(formatRfc3339(-62135596800, 0, false)).toBe('0001-01-01T00:00:00Z');
    expect(formatRfc3339(253402300800, 0, false)).toBeUndefined(); // year 10000
  });
});

describe('Go durations', () => {
  it.each([
    ['0s', 0n],
    ['1h0m0s', 3600000000000n],
    ['1m30s', 90000000000n],
    ['1.5s', 1500000000n],
    ['300ms', 300000000n],
    ['1.5µs', 1500n],
    ['7ns', 7n],
    ['-2m3.004s', -123004000000n],
    ['2562047h47m16.854775807s', 9223372036854775807n],
  ])('%s ⇄ %s ns', (text, ns) => {
    expect(formatGoDuration(ns)).toBe(text);
    expect(parseGoDuration(text)).toBe(ns);
  });

  it('parses the forms Go accepts and rejects the rest', () => {
    expect(parseGoDuration('1h30m')).toBe(5400000000000n);
    expect(parseGoDuration('.5s')).toBe(500000000n);
    expect(parseGoDuration('1us')).toBe(1000n);
    expect(parseGoDuration('0')).toBe(0n);
    for (const bad of ['', '1', 'h', '1d', '1.s.', '-', '9999999999999h']) expect(parseGoDuration(bad)).toBeUndefined();
  });
});

describe('quantities and key order', () => {
  it('recognizes quantity syntax', () => {
    for (const q of ['1', '100m', '1.5Gi', '1e3', '-2', '+.5', '0.1Ki', '12E']) expect(isQuantity(q)).toBe(true);
    for (const q of ['', 'abc', '1 Gi', '1GiB', '--1', '1e']) expect(isQuantity(q)).toBe(false);
  });

  it('orders map keys bytewise in UTF-8 as Go does', () => {
    const supplementary = '\u{1F600}'; // UTF-16 D83D DE00, UTF-8 F0 9F 98 80
    const privateUse = '\uE000'; // UTF-8 EE 80 80
    expect(compareGoStrings(privateUse, supplementary)).toBeLessThan(0);
    expect(privateUse < supplementary).toBe(false); // JavaScript's order differs here
    expect(sortedKeys({ [supplementary]: 1, [privateUse]: 2, b: 3, a: 4, B: 5 })).toEqual(['B', 'a', 'b', privateUse, supplementary]);
  });
});

describe('parsePlainUtcSeconds', () => {
  it.each([
    ['2024-01-02T03:04:05Z', true],
    ['0001-01-01T00:00:00Z', true],
    ['2024-02-29T23:59:59Z', true],
    ['9999-12-31T23:59:59Z', true],
    ['2023-02-29T00:00:00Z', false],
    ['2024-13-01T00:00:00Z', false],
    ['2024-01-01T24:00:00Z', false],
    ['2024-01-01T00:60:00Z', false],
    ['2024-01-01T00:00:60Z', false],
    ['2024-01-0xT00:00:00Z', false],
    ['2024-01-01t00:00:00Z', false],
    ['2024-01-02T03:04:05.5Z', false],
    ['2024-01-02T03:04:05+01:00', false],
  ])('%s', (text, plain) => {
    const bytes = Buffer.from(`"${text}"`);
    const seconds = parsePlainUtcSeconds(bytes, 1, bytes.length - 1);
    // The plain form gives parseRfc3339's seconds; anything else is left to parseRfc3339.
    if (plain) expect(seconds).toBe(parseRfc3339(text)!.seconds);
    else expect(seconds).toBeUndefined();
  });
});
