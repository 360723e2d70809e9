import { describe, expect, it } from 'vitest';
import {
  CelCostLimitError,
  DYN,
  MAX_REQUEST_SIZE_BYTES,
  PER_CALL_LIMIT,
  SCALAR,
  STATIC_ESTIMATED_COST_LIMIT,
  type Shape,
  compileExpression,
  kubernetesCelEnvironment,
  listShape,
  mapShape,
  newCostMeter,
  stringShape,
} from './cel.js';

const env = kubernetesCelEnvironment({ self: 'dyn' });
const estimate = (source: string, self: Shape) => compileExpression(env, source, 'p').estimateCost({ self });

describe('static cost estimate', () => {
  it.each<[string, string, Shape, number]>([
    ['a literal', '1 + 2 == 3', DYN, 2],
    ['a variable read', 'self', DYN, 1],
    ['a field read', 'self.spec', mapShape({ spec: SCALAR }), 2],
    ['size()', 'self.size()', listShape(SCALAR, 10), 2],
    ['a comprehension: receiver + items × (body + 1)', 'self.all(x, x > 0)', listShape(SCALAR, 10), 1 + 10 * (1 + 2)],
    ['a regex: 0.25 × input × pattern', "self.matches('^[a-z]+$')", stringShape(100), 1 + 1 + Math.ceil(0.25 * 100 * 8)],
    ['a string function: 0.1 per character', "self.contains('ab')", stringShape(100), 1 + 1 + Math.ceil(0.1 * 102)],
    ['isSorted: 1 per element', 'self.isSorted()', listShape(SCALAR, 50), 1 + 1 + 50],
  ])('%s', (_what, source, shape, want) => {
    expect(estimate(source, shape)).toBe(want);
  });

  it('multiplies nested comprehensions, and grows with maxItems and maxLength', () => {
    const list = (n?: number, len?: number) => listShape(stringShape(len), n);
    const rule = "self.all(x, x.matches('^[a-z]+$'))";
    expect(estimate(rule, list(20, 10))).toBeGreaterThan(estimate(rule, list(10, 10)));
    expect(estimate(rule, list(10, 100))).toBeGreaterThan(estimate(rule, list(10, 10)));
    const nested = estimate('self.all(x, self.all(y, x == y))', list(100, 5));
    expect(nested).toBeGreaterThan(100 * 100);
  });

  it('bounds an unbounded list and string by the largest request, over upstream limit for a regex per item', () => {
    const unbounded = listShape(stringShape());
    expect(unbounded.maxSize).toBe(Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / 3));
    expect(estimate("self.all(x, x.matches('^[a-z]+$'))", unbounded)).toBeGreaterThan(STATIC_ESTIMATED_COST_LIMIT);
    expect(estimate("self.all(x, x.matches('^[a-z]+$'))", listShape(stringShape(64), 100))).toBeLessThan(STATIC_ESTIMATED_COST_LIMIT);
  });
});

describe('runtime cost', () => {
  const items = (n: number) => Array.from({ length: n }, (_, i) => BigInt(i));

  it('counts element reads, and grows with the data', () => {
    const e = compileExpression(env, 'self.all(x, x >= 0)', 'p', ['bool']);
    const small = newCostMeter();
    const large = newCostMeter();
    expect(e.run({ self: items(10) }, { meter: small })).toBe(true);
    expect(e.run({ self: items(1000) }, { meter: large })).toBe(true);
    expect(small.used).toBeGreaterThanOrEqual(10);
    expect(large.used).toBeGreaterThanOrEqual(1000);
    expect(large.used).toBeGreaterThan(small.used * 50);
  });

  it('stops an evaluation over its limit with upstream message', () => {
    const e = compileExpression(env, 'self.all(x, self.all(y, x == y || x != y))', 'p', ['bool']);
    const meter = newCostMeter();
    expect(() => e.run({ self: items(1100) }, { meter })).toThrow(CelCostLimitError);
    expect(() => e.run({ self: items(1100) }, { meter: newCostMeter() })).toThrow('operation cancelled: actual cost limit exceeded');
    expect(meter.used).toBeGreaterThan(PER_CALL_LIMIT);
    // The same expression on small data is within the limit.
    expect(e.run({ self: items(30) }, { meter: newCostMeter() })).toBe(true);
  });

  it('charges library calls by their arguments’ sizes', () => {
    const e = compileExpression(env, "self.find('b+') == ''", 'p', ['bool']);
    const short = newCostMeter();
    const long = newCostMeter();
    e.run({ self: 'a'.repeat(10) }, { meter: short });
    e.run({ self: 'a'.repeat(100_000) }, { meter: long });
    expect(long.used - short.used).toBeGreaterThanOrEqual(Math.ceil(0.25 * 2 * 100_000) - Math.ceil(0.25 * 2 * 10));
    expect(() => e.run({ self: 'a'.repeat(100_000) }, { meter: newCostMeter(1000) })).toThrow(CelCostLimitError);
  });

  it('meters only the variables an expression names, each read once per field', () => {
    const e = compileExpression(env, 'self.a == 1 && self.a == 1', 'p', ['bool']);
    const variables = {
      self: { a: 1n },
      get other(): unknown {
        throw new Error('a variable the expression does not name was read');
      },
    };
    const meter = newCostMeter();
    expect(e.run(variables, { meter })).toBe(true);
    // Two reads of self.a, plus one unit per node: the same for the same expression.
    const again = newCostMeter();
    e.run({ self: { a: 1n } }, { meter: again });
    expect(meter.used).toBe(again.used);
    expect(meter.used).toBeGreaterThanOrEqual(2);
  });

  it('counts nothing without a meter', () => {
    const e = compileExpression(env, 'self.all(x, self.all(y, true))', 'p', ['bool']);
    expect(e.run({ self: items(1100) })).toBe(true);
  });
});
