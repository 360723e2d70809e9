// Metric lifecycle rules (spec §9.3): when a deprecated metric is hidden, the help text, and the
// only value --show-hidden-metrics-for-version accepts.
import { describe, expect, it } from 'vitest';
import { decoratedHelp, isHiddenIn, showHiddenMetrics, type MetricLifecycle } from './stability.js';

const v = (minor: number) => ({ major: 1, minor });

describe('metric stability', () => {
  it.each<[MetricLifecycle, number, boolean]>([
    [{ stability: 'STABLE' }, 35, false],
    [{ stability: 'ALPHA', deprecatedVersion: '1.34' }, 34, false],
    [{ stability: 'ALPHA', deprecatedVersion: '1.34' }, 35, true],
    [{ stability: 'BETA', deprecatedVersion: '1.34' }, 35, true],
    [{ stability: 'STABLE', deprecatedVersion: '1.34' }, 36, false],
    [{ stability: 'STABLE', deprecatedVersion: '1.34' }, 37, true],
    [{ stability: 'ALPHA', deprecatedVersion: '1.23' }, 35, true],
  ])('%j in 1.%i: hidden %s', (lifecycle, minor, hidden) => {
    expect(isHiddenIn(lifecycle, v(minor))).toBe(hidden);
  });

  it('a metric of an older major release is hidden in a newer one', () => {
    expect(isHiddenIn({ stability: 'STABLE', deprecatedVersion: '1.40' }, { major: 2, minor: 0 })).toBe(true);
  });

  it('help names the stability, then the deprecation', () => {
    expect(decoratedHelp('Counts.', { stability: 'STABLE' })).toBe('[STABLE] Counts.');
    expect(decoratedHelp('Counts.', { stability: 'ALPHA', deprecatedVersion: '1.23' })).toBe('[ALPHA] (Deprecated from 1.23) Counts.');
  });

  it.each([
    [undefined, false],
    ['', false],
    ['1.34', true],
  ])('--show-hidden-metrics-for-version=%s in 1.35 shows hidden metrics: %s', (value, shown) => {
    expect(showHiddenMetrics(value, v(35))).toBe(shown);
  });

  it.each(['1.33', '1.35', '1.36', '2.34', '0.34'])('--show-hidden-metrics-for-version=%s in 1.35 is refused', (value) => {
    expect(() => showHiddenMetrics(value, v(35))).toThrow("must be omitted or have the value '1.34'");
  });
});
