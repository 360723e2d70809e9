import { describe, expect, it } from 'vitest';
import { ByteSlabs } from './byte-slab.js';

describe('ByteSlabs', () => {
  it('packs small buffers side by side in one shared slab, without overlap', () => {
    const slabs = new ByteSlabs();
    const a = slabs.alloc(100);
    const b = slabs.alloc(2000);
    expect(a.length).toBe(100);
    expect(b.length).toBe(2000);
    expect(b.buffer).toBe(a.buffer);
    expect(b.byteOffset).toBe(a.byteOffset + 100);
    a.fill(1);
    b.fill(2);
    expect(a.every((x) => x === 1)).toBe(true);
    expect(b.every((x) => x === 2)).toBe(true);
  });

  it('starts a new slab when one is full, and gives large buffers their own', () => {
    const slabs = new ByteSlabs();
    const first = slabs.alloc(60_000);
    let last = first;
    for (let i = 0; i < 20; i++) last = slabs.alloc(60_000);
    expect(last.buffer).not.toBe(first.buffer);
    expect(last.length).toBe(60_000);
    const large = slabs.alloc(200_000);
    expect(large.byteOffset).toBe(0);
    expect(large.buffer.byteLength).toBe(200_000);
  });
});
