import { describe, expect, it } from 'vitest';
import { CatchUp } from './catch-up.js';

/** A store whose consistent revision the test sets, counting the rounds asked of it. */
function fakes(initial: { consistent: number; cache: number }) {
  const state = { ...initial, rounds: 0, fail: false };
  const waiters: Array<{ revision: number; resolve: () => void }> = [];
  const store = {
    consistentRevision: async () => {
      state.rounds++;
      if (state.fail) throw new Error('no leader');
      return state.consistent;
    },
  };
  const cache = {
    waitForRevision: (revision: number) =>
      state.cache >= revision ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ revision, resolve })),
  };
  const applyTo = (revision: number) => {
    state.cache = revision;
    for (const w of waiters.splice(0)) if (w.revision <= revision) w.resolve();
  };
  /** The cacher's consistent wait over them: the consistent revision, then the cache there. */
  const fresh = async (): Promise<void> => cache.waitForRevision(await store.consistentRevision());
  return { state, fresh, applyTo };
}

describe('CatchUp', () => {
  it('resolves once the cache reached the consistent revision, after the followers drained', async () => {
    const f = fakes({ consistent: 10, cache: 7 });
    const c = new CatchUp(f.fresh);
    const drained: number[] = [];
    c.register(() => drained.push(f.state.cache));
    let done: boolean | undefined;
    const p = c.wait().then((v) => (done = v));
    await new Promise((r) => setImmediate(r));
    expect(done).toBeUndefined();
    expect(drained).toEqual([]);
    f.applyTo(10);
    await p;
    expect(done).toBe(true);
    expect(drained).toEqual([10]);
  });

  it('answers false when the consistent revision cannot be had, or the cache does not reach it in time', async () => {
    const failing = fakes({ consistent: 3, cache: 3 });
    failing.state.fail = true;
    expect(await new CatchUp(failing.fresh).wait()).toBe(false);
    const stuck = fakes({ consistent: 9, cache: 3 });
    expect(await new CatchUp(stuck.fresh, { timeoutMs: 20 }).wait()).toBe(false);
  });

  it('shares rounds: callers arriving while one runs share the next one, which starts after it', async () => {
    const f = fakes({ consistent: 5, cache: 4 });
    const c = new CatchUp(f.fresh);
    const first = c.wait();
    await new Promise((r) => setImmediate(r));
    // Written meanwhile: the running round may have read its revision before this.
    f.state.consistent = 6;
    const second = c.wait();
    const third = c.wait();
    expect(second).toBe(third);
    f.applyTo(5);
    expect(await first).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(f.state.rounds).toBe(2);
    f.applyTo(6);
    expect(await second).toBe(true);
    expect(f.state.rounds).toBe(2);
  });

  it('stops draining an unregistered follower', async () => {
    const f = fakes({ consistent: 1, cache: 1 });
    const c = new CatchUp(f.fresh);
    let drains = 0;
    const off = c.register(() => drains++);
    await c.wait();
    off();
    await c.wait();
    expect(drains).toBe(1);
  });
});
