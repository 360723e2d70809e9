import { describe, expect, it } from 'vitest';
import { ChunkPool } from './chunk-pool.js';

describe('ChunkPool.streaming', () => {
  it('is true while chunks are out and moving, false once they are back or have not moved for a second', () => {
    let t = 0;
    const pool = new ChunkPool(4, () => t);
    expect(pool.streaming).toBe(false);
    const a = pool.take();
    const b = pool.take();
    expect(pool.streaming).toBe(true);
    t = 900;
    pool.give(a.subarray(0, 10));
    t = 1800;
    // b is still out and the last move was 900 ms ago.
    expect(pool.streaming).toBe(true);
    pool.give(b);
    expect(pool.streaming).toBe(false);
    // A chunk never given back (its connection closed) stops counting after a quiet second.
    pool.take();
    t = 2799;
    expect(pool.streaming).toBe(true);
    t = 2800;
    expect(pool.streaming).toBe(false);
    // Giving back something that is not a lent chunk changes nothing.
    pool.give(Buffer.alloc(8));
    expect(pool.streaming).toBe(false);
  });
});
