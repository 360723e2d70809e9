import { describe, expect, it } from 'vitest';
import { wakeInNextRound } from '../watchcache/delivery-rounds.js';
import type { CacheEntry, CacheEvent, WatchOutput } from '../watchcache/types.js';
import { sharedBatch } from './watch-batches.js';

const event = (name: string, revision: number): CacheEvent => {
  const entry: CacheEntry = { key: `/registry/core/pods/ns/${name}`, namespace: 'ns', name, revision, bytes: Buffer.from(`{"metadata":{"name":"${name}"}}`), labels: {}, fields: {} };
  return { type: 'ADDED', revision, entry };
};

/** Runs `fn` inside one delivery round, as watch pumps do. */
const inRound = <T>(fn: () => T) => new Promise<T>((resolve) => wakeInNextRound(() => resolve(fn())));

function counter() {
  let builds = 0;
  const build = (outs: readonly WatchOutput[]) => () => {
    builds++;
    return Buffer.concat(outs.map((o) => ('entry' in o ? o.entry.bytes : Buffer.alloc(0))));
  };
  return { build, get builds() { return builds; } };
}

describe('shared watch batches', () => {
  const a = event('a', 1);
  const b = event('b', 2);

  it('builds once per round for streams that drain the same outputs, and hands all of them the same Buffer', async () => {
    const c = counter();
    const [x, y, z] = await inRound(() => {
      const drained = () => [a, b] as WatchOutput[];
      return [0, 1, 2].map(() => {
        const outs = drained();
        return sharedBatch('json', outs, c.build(outs));
      });
    });
    expect(c.builds).toBe(1);
    expect(x).toBe(y);
    expect(y).toBe(z);
    expect(x!.toString()).toBe('{"metadata":{"name":"a"}}{"metadata":{"name":"b"}}');
  });

  it('builds separately for other outputs, for a copy of an event that is not the same object, and for another format', async () => {
    const c = counter();
    const results = await inRound(() => {
      const run = (format: string, outs: WatchOutput[]) => sharedBatch(format, outs, c.build(outs));
      return [
        run('json', [a, b]),
        run('json', [a]),
        run('json', [a, { type: 'ADDED', entry: b.entry }]),
        run('protobuf', [a, b]),
        run('json', [a, b]),
      ];
    });
    expect(c.builds).toBe(4);
    expect(results[4]).toBe(results[0]);
    expect(results[1]!.toString()).toBe('{"metadata":{"name":"a"}}');
  });

  it('forgets between rounds', async () => {
    const c = counter();
    await inRound(() => sharedBatch('json', [a, b], c.build([a, b])));
    await inRound(() => sharedBatch('json', [a, b], c.build([a, b])));
    expect(c.builds).toBe(2);
  });

  it('returns nothing for an empty batch without building', () => {
    const c = counter();
    expect(sharedBatch('json', [], c.build([]))).toBeUndefined();
    expect(c.builds).toBe(0);
  });
});

describe('shared watch batches: memory', () => {
  it('does not remember a batch larger than a megabyte (a watch starting with a large collection)', async () => {
    const big: CacheEvent = {
      type: 'ADDED',
      revision: 9,
      entry: { key: '/registry/core/pods/ns/big', namespace: 'ns', name: 'big', revision: 9, bytes: Buffer.alloc(2 * 1024 * 1024, 32), labels: {}, fields: {} },
    };
    let builds = 0;
    const build = () => {
      builds++;
      return Buffer.from(big.entry.bytes);
    };
    const [x, y] = await inRound(() => [sharedBatch('json', [big], build), sharedBatch('json', [big], build)]);
    expect(builds).toBe(2);
    // Identity compared by hand: a failing toBe on two 2 MB Buffers makes the matcher compare
    // them element by element for its hint, which took 24–40 s here.
    expect(x === y).toBe(false);
    expect(x!.equals(y!)).toBe(true);
  });
});
