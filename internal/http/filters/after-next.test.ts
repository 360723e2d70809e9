import { describe, expect, it } from 'vitest';
import { afterNext } from './after-next.js';

describe('afterNext', () => {
  it.each<[string, () => Promise<void>, 'resolves' | 'rejects']>([
    ['the rest resolves', () => Promise.resolve(), 'resolves'],
    ['the rest rejects', () => Promise.reject(new Error('boom')), 'rejects'],
    ['next throws synchronously', () => {
      throw new Error('boom');
    }, 'rejects'],
  ])('runs done once when %s, and passes the outcome on', async (_name, next, outcome) => {
    let done = 0;
    const run = (): Promise<void> => afterNext(next, () => void done++);
    if (outcome === 'resolves') await expect(run()).resolves.toBeUndefined();
    else await expect(Promise.resolve().then(run)).rejects.toThrow('boom');
    expect(done).toBe(1);
  });

  it('runs done only after the rest settled', async () => {
    const order: string[] = [];
    let finish!: () => void;
    const rest = new Promise<void>((r) => (finish = r));
    const all = afterNext(() => rest, () => void order.push('done'));
    order.push('waiting');
    finish();
    await all;
    expect(order).toEqual(['waiting', 'done']);
  });
});
