// collectStartGarbage: a full collection happens (an unreachable object's weak reference is
// cleared), and gc() is left exposed to no context.
import { describe, expect, it } from 'vitest';
import { runInNewContext } from 'node:vm';
import { collectStartGarbage } from './start-garbage.js';

describe('collectStartGarbage', () => {
  it('collects what nothing reaches, and exposes gc() nowhere afterwards', async () => {
    const refs = ((): Array<WeakRef<object>> => Array.from({ length: 8 }, () => new WeakRef({ payload: new Array(1000).fill(1) })))();
    // A WeakRef's target is kept until the job that created it ends.
    await new Promise((r) => setTimeout(r, 0));
    collectStartGarbage();
    expect(refs.filter((r) => r.deref() !== undefined)).toHaveLength(0);
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
