import { describe, it, expect } from 'vitest';
import { getHeapSpaceStatistics } from 'node:v8';
import { lowMemoryCollection, releaseWhenIdle } from './release-memory.js';

/** A hand-driven clock: `schedule` queues, `tick` runs the next queued callback. */
function fakeScheduler() {
  const queue: Array<{ fn: () => void; ms: number; cancelled: boolean }> = [];
  return {
    schedule(fn: () => void, ms: number) {
      const item = { fn, ms, cancelled: false };
      queue.push(item);
      return () => {
        item.cancelled = true;
      };
    },
    /** Runs every pending callback in order until none is left; returns how many ran. */
    drain(): number {
      let ran = 0;
      for (let item = queue.shift(); item; item = queue.shift()) {
        if (item.cancelled) continue;
        ran++;
        item.fn();
      }
      return ran;
    },
    pendingDelays: () => queue.filter((q) => !q.cancelled).map((q) => q.ms),
  };
}

describe('releaseWhenIdle', () => {
  // Each row: what the sampler answers at each look (the first answer is the baseline taken
  // at the start, which never releases), and the look at which the release happens.
  it.each([
    { name: 'idle at the first window', answers: [true, true], releasedAfterLooks: 1 },
    { name: 'busy, then idle', answers: [false, false, false, true], releasedAfterLooks: 3 },
    { name: 'the start baseline does not count', answers: [true, false, true], releasedAfterLooks: 2 },
    { name: 'busy through every window: gives up', answers: [false, false, false, false], releasedAfterLooks: undefined },
  ])('$name', ({ answers, releasedAfterLooks }) => {
    const clock = fakeScheduler();
    let calls = 0;
    let releases = 0;
    let releasedAt: number | undefined;
    releaseWhenIdle({
      idleSinceLastCall: () => answers[calls++] ?? false,
      schedule: clock.schedule,
      release: async () => {
        releases++;
        releasedAt = calls - 1;
      },
      windowMs: 100,
      maxWindows: 3,
    });
    expect(clock.pendingDelays()).toEqual([100]);
    clock.drain();
    expect(releasedAt).toBe(releasedAfterLooks);
    expect(releases).toBe(releasedAfterLooks === undefined ? 0 : 1);
    // Never more than maxWindows looks after the baseline.
    expect(calls - 1).toBeLessThanOrEqual(3);
  });

  it('stops looking when cancelled (shutdown)', () => {
    const clock = fakeScheduler();
    let releases = 0;
    const stop = releaseWhenIdle({
      idleSinceLastCall: () => true,
      schedule: clock.schedule,
      release: async () => void releases++,
      windowMs: 100,
      maxWindows: 10,
    });
    stop();
    expect(clock.drain()).toBe(0);
    expect(releases).toBe(0);
  });

  it('a failed release is not thrown', async () => {
    const clock = fakeScheduler();
    let rejected = false;
    releaseWhenIdle({
      idleSinceLastCall: () => true,
      schedule: clock.schedule,
      release: () => {
        rejected = true;
        return Promise.reject(new Error('no inspector'));
      },
      windowMs: 100,
      maxWindows: 1,
    });
    clock.drain();
    await new Promise((r) => setImmediate(r));
    expect(rejected).toBe(true);
  });
});

describe('lowMemoryCollection', () => {
  it('resolves, and leaves the young generation at its smallest size', async () => {
    // Grow the young generation as a start does: many short-lived objects, some surviving.
    const kept: object[] = [];
    for (let i = 0; i < 400_000; i++) {
      const o = { i, s: `x${i}` };
      if (i % 4 === 0) kept.push(o);
    }
    const youngBefore = newSpaceCommitted();
    await lowMemoryCollection();
    const youngAfter = newSpaceCommitted();
    expect(kept.length).toBe(100_000);
    // The collection ran and shrank it (a plain full collection leaves it as it grew).
    expect(youngAfter).toBeLessThan(youngBefore);
    // And a second call works (the session of the first was disconnected, not left blocking).
    await lowMemoryCollection();
  });
});

function newSpaceCommitted(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.physical_space_size;
}
