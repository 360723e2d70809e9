import { describe, expect, it } from 'vitest';
import { afterDueRound, deliveryRound, ROUND_STAT_BOUNDS, roundStats, wakeInNextRound, type RoundDistribution } from './delivery-rounds.js';

const nextRound = () => new Promise<void>((resolve) => wakeInNextRound(resolve));

function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin: a round that costs CPU, as a large fan-out does
  }
}

/** Lets the previous test's rounds and gaps pass, then runs one round on a quiet loop. */
async function quiet(): Promise<void> {
  await new Promise((r) => setTimeout(r, 40));
  await nextRound();
}

/** Which comes first: a round asked for now, or a timer shorter than the maximum gap. */
async function roundOrTimer(): Promise<'round' | 'timer' | undefined> {
  let first: 'round' | 'timer' | undefined;
  wakeInNextRound(() => (first ??= 'round'));
  setTimeout(() => (first ??= 'timer'), 6);
  await new Promise((r) => setTimeout(r, 30));
  return first;
}

describe('delivery rounds', () => {
  it('runs every wake once, in call order, together in a later round', async () => {
    const seen: [string, number][] = [];
    const before = deliveryRound();
    for (const name of ['a', 'b', 'c']) wakeInNextRound(() => seen.push([name, deliveryRound()]));
    expect(seen).toEqual([]);
    await nextRound();
    expect(seen.map(([n]) => n)).toEqual(['a', 'b', 'c']);
    const rounds = new Set(seen.map(([, r]) => r));
    expect(rounds.size).toBe(1);
    expect([...rounds][0]).toBeGreaterThan(before);
  });

  it('numbers rounds so that a wake queued during a round runs in a later one', async () => {
    let inner = -1;
    let outer = -1;
    wakeInNextRound(() => {
      outer = deliveryRound();
      wakeInNextRound(() => (inner = deliveryRound()));
    });
    await nextRound();
    await nextRound();
    expect(outer).toBeGreaterThan(0);
    expect(inner).toBeGreaterThan(outer);
  });

  it('after an expensive round, holds the next one back by a multiple of its cost', async () => {
    await quiet();
    let endOfExpensive = 0;
    wakeInNextRound(() => {
      busy(6);
      endOfExpensive = performance.now();
    });
    await nextRound();
    const ranAt = await new Promise<number>((resolve) => wakeInNextRound(() => resolve(performance.now())));
    // 6 ms of work → 18 ms of gap, capped at the 10 ms maximum (timers may fire a millisecond early).
    expect(ranAt - endOfExpensive).toBeGreaterThanOrEqual(8);
  });

  it('spaces wide rounds out while the event loop is busy with other work, even when the rounds are cheap', async () => {
    await quiet();
    // Work outside any round (requests, native sends) keeps the loop busy until the next round.
    await new Promise<void>((resolve) => setImmediate(() => (busy(30), resolve())));
    let endOfCheap = 0;
    // A wide round (a fan-out to many watchers), each wake cheap.
    await new Promise<void>((resolve) => {
      for (let i = 0; i < 300; i++) wakeInNextRound(() => undefined);
      wakeInNextRound(() => ((endOfCheap = performance.now()), resolve()));
    });
    const ranAt = await new Promise<number>((resolve) => wakeInNextRound(() => resolve(performance.now())));
    // The maximum gap (10 ms), less a millisecond a timer may fire early.
    expect(ranAt - endOfCheap).toBeGreaterThanOrEqual(8);
  });

  it('does not hold back narrow rounds (a selective watch) because the loop is busy', async () => {
    await quiet();
    await new Promise<void>((resolve) => setImmediate(() => (busy(30), resolve())));
    await nextRound();
    expect(await roundOrTimer()).toBe('round');
  });

  it('runs the next round at once after cheap ones (idle latency stays one loop turn)', async () => {
    await quiet();
    expect(await roundOrTimer()).toBe('round');
  });

  it('a wake that throws does not keep the others of its round from running', async () => {
    const seen: string[] = [];
    wakeInNextRound(() => {
      throw new Error('consumer bug');
    });
    wakeInNextRound(() => seen.push('after'));
    await nextRound();
    expect(seen).toEqual(['after']);
  });

  describe('afterDueRound (acknowledgements held back by a wide fan-out)', () => {
    it.each([
      ['nothing due', 0, false],
      ['a narrow round due (the server\'s own consumers, a selective watch)', 3, false],
      ['one wake short of a wide round', 255, false],
      ['a wide round due', 256, true],
      ['a wider one', 1_000, true],
    ])('%s (%i wakes): waits %s', async (_what, wakes, waits) => {
      await quiet();
      for (let i = 0; i < wakes; i++) wakeInNextRound(() => undefined);
      const pending = afterDueRound();
      expect(pending !== undefined).toBe(waits);
      await nextRound();
    });

    it('resolves after every wake due has run, and after what those wakes scheduled for the next loop turn', async () => {
      await quiet();
      let ran = 0;
      const flushed: number[] = [];
      for (let i = 0; i < 300; i++)
        wakeInNextRound(() => {
          ran++;
          // As a stream write schedules its session's flush (Node's native immediates run
          // before setImmediate's callbacks; a JS immediate scheduled first stands in for it).
          if (i === 299) setImmediate(() => flushed.push(ran));
        });
      let resolved = false;
      const pending = afterDueRound()!.then(() => (resolved = true));
      expect(ran).toBe(0);
      await new Promise<void>((r) => wakeInNextRound(r));
      // The round has run; the acknowledgement waits for the turn after it.
      expect(ran).toBe(300);
      await pending;
      expect(resolved).toBe(true);
      expect(flushed).toEqual([300]);
    });

    it('a write applied during a round waits for the next wide round, not the one running', async () => {
      await quiet();
      const order: string[] = [];
      let inner: Promise<void> | undefined;
      for (let i = 0; i < 300; i++)
        wakeInNextRound(() => {
          if (i !== 0) return;
          for (let k = 0; k < 300; k++) wakeInNextRound(() => void (k === 0 && order.push('second round')));
          inner = afterDueRound()?.then(() => void order.push('inner'));
        });
      await afterDueRound();
      expect(inner).toBeDefined();
      await inner;
      expect(order).toEqual(['second round', 'inner']);
    });
  });

  it('counts each round: its wakes, its lag from the first wake asked for, and its duration', async () => {
    await quiet();
    const stats = roundStats();
    const before = { lag: snapshot(stats.lag), duration: snapshot(stats.duration), woken: stats.woken };
    // Three wakes asked for, then the loop held for 12 ms before the round can run; the round
    // itself spends 6 ms.
    await new Promise<void>((resolve) => {
      wakeInNextRound(() => undefined);
      wakeInNextRound(() => busy(6));
      wakeInNextRound(resolve);
      busy(12);
    });
    expect(stats.woken - before.woken).toBe(3);
    const lag = added(stats.lag, before.lag);
    const duration = added(stats.duration, before.duration);
    expect(lag.count).toBe(1);
    expect(duration.count).toBe(1);
    expect(lag.sum).toBeGreaterThanOrEqual(0.012);
    expect(duration.sum).toBeGreaterThanOrEqual(0.006);
    // Each observation lands in the first bucket whose bound it does not pass.
    expect(lag.counts[bucketOf(lag.sum)]).toBe(1);
    expect(duration.counts[bucketOf(duration.sum)]).toBe(1);
  });
});

function snapshot(d: RoundDistribution): RoundDistribution {
  return { counts: Float64Array.from(d.counts), sum: d.sum, count: d.count };
}

function added(now: RoundDistribution, before: RoundDistribution): RoundDistribution {
  return { counts: now.counts.map((c, i) => c - before.counts[i]!), sum: now.sum - before.sum, count: now.count - before.count };
}

function bucketOf(seconds: number): number {
  const i = ROUND_STAT_BOUNDS.findIndex((b) => seconds <= b);
  return i < 0 ? ROUND_STAT_BOUNDS.length : i;
}
