import { EventEmitter } from 'node:events';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CHUNK_BYTES, ChunkPool } from './chunk-pool.js';
import { streamChunks, type StreamTarget } from './representations.js';

/**
 * A response that completes each write on a later turn, as a socket does, and checks that the
 * bytes it was handed are unchanged until then (a pooled chunk reused too early would not be).
 * Seeded: whether a write reports backpressure is drawn from `seed`.
 */
class SlowTarget extends EventEmitter implements StreamTarget {
  readonly written: Buffer[] = [];
  readonly changedBeforeDone: number[] = [];
  ended = false;
  destroyed = false;
  private pending = 0;
  private state: number;

  constructor(seed: number) {
    super();
    this.state = seed;
  }

  private random(): number {
    this.state = (Math.imul(this.state, 1103515245) + 12345) >>> 0;
    return this.state / 2 ** 32;
  }

  headers: Record<string, string | string[]> = {};
  destroyedWith: Error | undefined;

  writeHead(_status: number, headers: Record<string, string | string[]>): this {
    this.headers = { ...headers };
    return this;
  }

  destroy(error?: Error): this {
    this.destroyed = true;
    this.destroyedWith = error;
    return this;
  }

  write(chunk: Buffer, callback?: (error?: Error | null) => void): boolean {
    const copy = Buffer.from(chunk);
    const index = this.written.push(copy) - 1;
    this.pending++;
    const turns = 1 + Math.floor(this.random() * 3);
    const complete = (left: number) => {
      if (left > 0) return setImmediate(() => complete(left - 1));
      if (!chunk.equals(copy)) this.changedBeforeDone.push(index);
      this.pending--;
      callback?.();
      if (this.pending === 0) this.emit('drain');
    };
    complete(turns);
    return this.random() < 0.5;
  }

  end(): this {
    this.ended = true;
    return this;
  }
}

/** A list's pieces as the JSON serializer yields them, and as protobuf's does (pooled chunks). */
function* pieces(pool: ChunkPool | undefined, sizes: readonly number[], seed: number): Generator<Buffer> {
  let byte = seed & 0xff;
  const fill = (b: Buffer) => {
    for (let i = 0; i < b.length; i++) b[i] = byte++ & 0xff;
    return b;
  };
  for (const size of sizes) {
    if (pool && size === CHUNK_BYTES) yield fill(pool.take());
    else if (pool && size < 0) yield fill(pool.take().subarray(0, -size));
    else yield fill(Buffer.alloc(size));
  }
}

const cases: Array<[string, number[], boolean]> = [
  ['small JSON items', Array.from({ length: 200 }, (_, i) => 1500 + ((i * 97) % 1200)), false],
  ['items larger than a chunk', [10, CHUNK_BYTES * 2 + 5, 3, CHUNK_BYTES, 7], false],
  ['pooled chunks between copied pieces', [40, CHUNK_BYTES, CHUNK_BYTES, -300, 2, CHUNK_BYTES, -9], true],
  ['nothing', [], false],
];

describe('streamChunks', () => {
  for (const [name, sizes, pooled] of cases) {
    it(`writes ${name} in order, never changing a chunk before its write completed`, async () => {
      for (const seed of [1, 2, 3]) {
        const pool = new ChunkPool(4);
        const target = new SlowTarget(seed);
        const expected = Buffer.concat([...pieces(undefined, sizes.map(Math.abs), seed)]);
        await streamChunks(target, pieces(pooled ? pool : undefined, sizes, seed), {}, false, pool);
        await new Promise((r) => setTimeout(r, 5));
        expect(target.ended).toBe(true);
        expect(Buffer.concat(target.written).equals(expected)).toBe(true);
        expect(target.changedBeforeDone).toEqual([]);
        // Writes are whole chunks but for pieces of a chunk or more and the last.
        expect(target.written.slice(0, -1).every((b) => b.length >= CHUNK_BYTES || pooled)).toBe(true);
      }
    });
  }

  it('reuses its chunks: a 20 MB body allocates a few dozen at most', async () => {
    const pool = new ChunkPool(4);
    const target = new SlowTarget(7);
    await streamChunks(target, pieces(undefined, Array.from({ length: 10_000 }, () => 2_000), 7), {}, false, pool);
    expect(Buffer.concat(target.written).length).toBe(20_000_000);
    expect(target.changedBeforeDone).toEqual([]);
    // 306 chunks written; in flight at once: those written while the target took more.
    expect(pool.allocated).toBeLessThan(32);
  });

  it.each([
    ['the right length', 0],
    ['a length one byte over', 1],
    ['a length one byte short', -1],
  ])('announces a known length as Content-Length, and fails the response when the body does not match it (%s)', async (_name, off) => {
    const sizes = Array.from({ length: 300 }, (_, i) => 900 + i);
    const total = sizes.reduce((a, b) => a + b, 0);
    const target = new SlowTarget(11);
    await streamChunks(target, Object.assign(pieces(undefined, sizes, 11), { byteLength: total + off }), {}, false, new ChunkPool(4));
    expect(target.headers['content-length']).toBe(String(total + off));
    expect(Buffer.concat(target.written).length).toBe(total);
    expect(target.ended).toBe(off === 0);
    expect(target.destroyedWith !== undefined).toBe(off !== 0);
  });

  it('writes through gzip the same bytes', async () => {
    const pool = new ChunkPool(4);
    const sizes = Array.from({ length: 100 }, (_, i) => 1000 + i * 13);
    const expected = Buffer.concat([...pieces(undefined, sizes, 5)]);
    const target = new SlowTarget(5);
    // gzip pipes into the response, which it ends.
    const ended = new Promise<void>((resolve) => {
      target.end = () => {
        target.ended = true;
        resolve();
        return target;
      };
    });
    // A known length is not the compressed body's: no Content-Length.
    await streamChunks(target, Object.assign(pieces(undefined, sizes, 5), { byteLength: expected.length }), {}, true, pool);
    await ended;
    expect(target.headers['content-length']).toBeUndefined();
    expect(gunzipSync(Buffer.concat(target.written)).equals(expected)).toBe(true);
  });
});
