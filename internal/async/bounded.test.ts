import { describe, expect, it } from 'vitest';
import { settleBounded } from './bounded.js';

/** A job that resolves (or rejects) when the test says so, recording when it started. */
function gate(): { promise: Promise<void>; open: () => void; fail: (e: Error) => void } {
  let open!: () => void;
  let fail!: (e: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('settleBounded', () => {
  it('keeps at most `limit` jobs in flight and starts the next as one finishes, in item order', async () => {
    const gates = Array.from({ length: 5 }, gate);
    const started: number[] = [];
    let inFlight = 0;
    let most = 0;
    const done = settleBounded([0, 1, 2, 3, 4], 2, async (i) => {
      started.push(i);
      most = Math.max(most, ++inFlight);
      await gates[i]!.promise;
      inFlight--;
      return i * 10;
    });
    await turn();
    expect(started).toEqual([0, 1]);
    gates[1]!.open();
    await turn();
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.open();
    gates[2]!.open();
    await turn();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    gates[3]!.open();
    gates[4]!.open();
    expect(await done).toEqual([0, 10, 20, 30, 40]);
    expect(most).toBe(2);
  });

  it('runs every job even when one fails, then throws the first failure in item order', async () => {
    const ran: number[] = [];
    const err = settleBounded([0, 1, 2, 3], 3, async (i) => {
      await turn();
      ran.push(i);
      if (i === 2) throw new Error('second');
      if (i === 1) throw new Error('first');
    }).catch((e: unknown) => e);
    expect(((await err) as Error).message).toBe('first');
    expect(ran.sort()).toEqual([0, 1, 2, 3]);
  });

  it('resolves at once for no items and refuses a limit below one', async () => {
    expect(await settleBounded([], 4, async () => 1)).toEqual([]);
    await expect(settleBounded([1], 0, async () => 1)).rejects.toThrow(/limit must be at least 1/);
  });
});
