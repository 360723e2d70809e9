import { describe, expect, it } from 'vitest';
import { deliveryTarget, perDeliveryUs, roundsDuring, sustainedRate } from './watch.js';

describe('sustainedRate', () => {
  const cases: { name: string; run: Parameters<typeof sustainedRate>[0]; want: number }[] = [
    // Kept up: every event delivered just after the last was emitted.
    { name: 'all delivered on time', run: { count: 1500, elapsedMs: 3000, watchers: 1000, delivered: 1_500_000, deliveredWithinMs: 3000 }, want: 500 },
    // A tail after the last emission counts against the rate (1,500 events in 3.75 s).
    { name: 'all delivered, with a tail', run: { count: 1500, elapsedMs: 3000, watchers: 1000, delivered: 1_500_000, deliveredWithinMs: 3750 }, want: 400 },
    // The case that motivated it: emitted at 500/s, a fifth delivered by the end of the wait.
    { name: 'fell behind', run: { count: 1500, elapsedMs: 3000, watchers: 1000, delivered: 295_170, deliveredWithinMs: 18_000 }, want: 295.17 / 18 },
    // Delivered before the emitter reported the end: never above the emit rate.
    { name: 'capped at the emit rate', run: { count: 1500, elapsedMs: 3000, watchers: 1000, delivered: 1_500_000, deliveredWithinMs: 2900 }, want: 500 },
    { name: 'nothing emitted', run: { count: 0, elapsedMs: 0, watchers: 1000, delivered: 0, deliveredWithinMs: 15_000 }, want: 0 },
    { name: 'no watchers', run: { count: 1500, elapsedMs: 3000, watchers: 0, delivered: 0, deliveredWithinMs: 3000 }, want: 0 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(sustainedRate(c.run)).toBeCloseTo(c.want, 6);
    });
  }
});

describe('deliveryTarget (fan-out)', () => {
  // clusterd's writer reached 150/s of 500; p99 within twice the ceiling's at 150/s.
  const at = (ceilingSustained: number) =>
    deliveryTarget('fan-out', 40, true, 150, { p99Ms: 25 }, { sustainedPerSec: ceilingSustained }, 500).holds;
  it('holds when the ceiling delivered no faster than the writer wrote', () => {
    expect(at(98)).toBe(true);
  });
  it('fails when the ceiling sustained more than the writer reached', () => {
    expect(at(300)).toBe(false);
  });
  it('fails on p99 above twice the ceiling', () => {
    expect(deliveryTarget('fan-out', 60, true, 150, { p99Ms: 25 }, { sustainedPerSec: 98 }, 500).holds).toBe(false);
  });
});

describe('perDeliveryUs', () => {
  const cases: { name: string; cpuMs: number | undefined; delivered: number; want: number | null }[] = [
    // 1.5 s of CPU over 1,500 writes to 1,000 watchers: 1 µs per delivered event.
    { name: 'per event', cpuMs: 1500, delivered: 1_500_000, want: 1 },
    { name: 'CPU unknown (no /proc)', cpuMs: undefined, delivered: 1_500_000, want: null },
    { name: 'nothing delivered', cpuMs: 1500, delivered: 0, want: null },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(perDeliveryUs(c.cpuMs, c.delivered)).toBe(c.want);
    });
  }
});

describe('roundsDuring', () => {
  const before = { rounds: 10, lagSeconds: 0.01, roundSeconds: 0.005, woken: 30 };
  it('describes the rounds between two readings', () => {
    const after = { rounds: 510, lagSeconds: 0.01 + 500 * 0.014, roundSeconds: 0.005 + 500 * 0.0028, woken: 30 + 500 * 1005 };
    expect(roundsDuring(before, after, 10_000)).toBe('500 rounds (50/s), 1005 streams written per round, mean wait of a change for its round 14.00 ms, mean round 2.80 ms');
  });
  it('says nothing without both readings or without a round between them', () => {
    expect(roundsDuring(undefined, before, 1000)).toBeUndefined();
    expect(roundsDuring(before, undefined, 1000)).toBeUndefined();
    expect(roundsDuring(before, before, 1000)).toBeUndefined();
  });
});
