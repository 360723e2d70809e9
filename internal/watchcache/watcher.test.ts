import { describe, expect, it } from 'vitest';
import type { CacheEntry, CacheEvent } from './types.js';
import { CacheWatcher } from './watcher.js';

const entry = (name: string, revision: number): CacheEntry => ({
  key: `/registry/core/configmaps/ns/${name}`,
  namespace: 'ns',
  name,
  revision,
  bytes: Buffer.from(`{"metadata":{"name":"${name}"}}`),
  labels: {},
  fields: {},
});
const added = (name: string, revision: number): CacheEvent => ({ type: 'ADDED', revision, entry: entry(name, revision) });

describe('watcher wakeups', () => {
  it('hands a waiting consumer every event pushed before the loop finished its I/O, in one drain', async () => {
    const w = new CacheWatcher(() => true, 100, 0, () => {});
    const drains: string[][] = [];
    const consumer = (async () => {
      await w.ready();
      drains.push(w.drain().map((o) => ('entry' in o ? o.entry.name : o.type)));
    })();
    // Two batches applied in separate callbacks of one loop turn; a wakeup per event would let
    // the consumer drain between them (Node runs microtasks after each immediate).
    await new Promise<void>((resolve) => {
      setImmediate(() => w.deliver(added('a', 1)));
      setImmediate(() => {
        w.deliver(added('b', 2));
        resolve();
      });
    });
    await consumer;
    expect(drains).toEqual([['a', 'b']]);
    expect(drains).toHaveLength(1);
  });

  it('wakes a consumer promptly when a single event arrives on an idle loop', async () => {
    const w = new CacheWatcher(() => true, 100, 0, () => {});
    const woke = w.ready().then(() => w.drain());
    setTimeout(() => w.deliver(added('x', 5)), 1);
    const outs = await woke;
    expect(outs.map((o) => ('entry' in o ? o.entry.name : o.type))).toEqual(['x']);
  });

  it('still wakes at once on close, so a closed stream ends', async () => {
    const w = new CacheWatcher(() => true, 100, 0, () => {});
    const woke = w.ready();
    w.close();
    await woke;
    expect(w.closed).toBe('consumer');
    expect(w.drain()).toEqual([]);
  });
});
