import { describe, expect, it } from 'vitest';
import { canonicalQuantity, compareQuantities, formatQuantity, parseQuantity, roundUpQuantity } from './quantity.js';

describe('quantity canonical form', () => {
  it.each([
    ['1', '1'],
    ['0.5', '500m'],
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['1.5', '1500m'],
    ['2000', '2k'],
    ['1500', '1500'],
    ['100', '100'],
    ['0', '0'],
    ['-0.5', '-500m'],
    ['.5', '500m'],
    ['1Gi', '1Gi'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['0.5Ki', '512'],
    ['1000Mi', '1000Mi'],
    ['1e3', '1e3'],
    ['1.5e3', '1500'],
    ['1E6', '1e6'],
    ['100M', '100M'],
    ['0.1n', '1n'],
    ['1000E', '1000E'],
    [1, '1'],
    [0.25, '250m'],
    [2048, '2048'],
  ] as Array<[string | number, string]>)('%s → %s', (input, out) => {
    expect(canonicalQuantity(input)).toBe(out);
  });

  it.each(['', 'abc', '1.2.3', '1Kb', '1 Gi', ' 1', '--1', '1e', 'e3', '.', 'Mi'])('rejects %j', (bad) => {
    expect(parseQuantity(bad)).toBeUndefined();
  });

  it('compares exactly across suffixes', () => {
    const q = (s: string) => parseQuantity(s)!;
    expect(compareQuantities(q('1'), q('1000m'))).toBe(0);
    expect(compareQuantities(q('500m'), q('1'))).toBe(-1);
    expect(compareQuantities(q('1Gi'), q('1G'))).toBe(1);
    expect(compareQuantities(q('135M'), q('128Mi'))).toBe(1);
  });

  it('rounds up to milli like resource-list defaulting', () => {
    expect(formatQuantity(roundUpQuantity(parseQuantity('0.0001')!, -3))).toBe('1m');
    expect(formatQuantity(roundUpQuantity(parseQuantity('1.0001')!, -3))).toBe('1001m');
    expect(formatQuantity(roundUpQuantity(parseQuantity('250m')!, -3))).toBe('250m');
  });
});

describe('parseQuantity remembers what it parsed', () => {
  it.each(['100m', '128Mi', '1.5', 'abc', '', ' 1', '1e400'])('gives the same answer the second time for %j', (text) => {
    const first = parseQuantity(text);
    const second = parseQuantity(text);
    expect(second).toEqual(first);
    if (first) expect(formatQuantity(second!)).toBe(formatQuantity(first));
  });

  it('shares only immutable quantities', () => {
    const q = parseQuantity('250m')!;
    expect(Object.isFrozen(q)).toBe(true);
    expect(() => {
      (q as { nanos: bigint }).nanos = 1n;
    }).toThrow(TypeError);
    expect(parseQuantity('250m')!.nanos).toBe(250_000_000n);
  });

  it('keeps answering correctly past its bound', () => {
    for (let i = 0; i < 3000; i++) expect(parseQuantity(`${i}m`)!.nanos).toBe(BigInt(i) * 1_000_000n);
    expect(formatQuantity(parseQuantity('1024Mi')!)).toBe('1Gi');
  });
});
