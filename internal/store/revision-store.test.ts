import { createHash } from 'node:crypto';
import { describe, it, expect } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelRevisionStore } from './revision-store.js';
import { runStoreSuite } from './store-suite.js';
import { isStoreError } from './types.js';

const enc = (s: string): Uint8Array => Buffer.from(s, 'utf8');
const tempDir = () => mkdtempSync(join(tmpdir(), 'clusterd-store-'));

runStoreSuite('memory', () => LevelRevisionStore.open({ storage: 'memory' }));
runStoreSuite('leveldb', () => LevelRevisionStore.open({ storage: 'leveldb', path: join(tempDir(), 'db') }));

describe('LevelRevisionStore', () => {
  it('opens empty (applied index 0) when a snapshot image was being installed as the process died', async () => {
    const dir = tempDir();
    try {
      let store = await LevelRevisionStore.open({ storage: 'leveldb', path: dir });
      await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/k', value: enc('1') }] });
      await store.close();
      // What restoreImage writes before it touches the data.
      const { Level } = await import('level');
      const db = new Level<string, string>(dir);
      await db.put('m/restoring', '1');
      await db.close();
      store = await LevelRevisionStore.open({ storage: 'leveldb', path: dir });
      expect(store.currentRevision()).toBe(0);
      expect(store.appliedIndex()).toBe(0);
      expect(await store.get('/k')).toBeUndefined();
      await store.close();
      // The marker is gone: a second open is a plain open.
      store = await LevelRevisionStore.open({ storage: 'leveldb', path: dir });
      await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/k', value: enc('2') }] });
      expect(store.currentRevision()).toBe(1);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('records durably that it holds the state at a Raft index (persistThrough), until an image replaces its state', async () => {
    const dir = tempDir();
    try {
      let store = await LevelRevisionStore.open({ storage: 'leveldb', path: dir });
      await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/k', value: enc('1') }] });
      expect(store.holdsThrough(1)).toBe(false);
      await store.persistThrough(12);
      // A lower index later changes nothing.
      await store.persistThrough(5);
      // Held up to `last`, before and after a reopen.
      const heldUpTo = async (last: number): Promise<void> => {
        expect(store.holdsThrough(last)).toBe(true);
        expect(store.holdsThrough(last + 1)).toBe(false);
        await store.close();
        store = await LevelRevisionStore.open({ storage: 'leveldb', path: dir });
        expect(store.holdsThrough(last)).toBe(true);
        expect(store.holdsThrough(last + 1)).toBe(false);
      };
      await heldUpTo(12);
      // An image from another replica replaces the state: what it held before means nothing.
      const other = await LevelRevisionStore.open({ storage: 'memory' });
      await other.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/o', value: enc('x') }] });
      const image = Buffer.from(await other.captureImage());
      image.writeDoubleBE(9, 'clusterd-store-image/1\n'.length);
      await store.restoreImage(image);
      await heldUpTo(9);
      await store.close();
      await other.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const memory = await LevelRevisionStore.open({ storage: 'memory' });
    expect(memory.durable).toBe(false);
    await expect(memory.persistThrough(1)).rejects.toThrow(/in memory/);
    await memory.close();
  });

  it('captures an image and installs it on another store, history included; a store already past it keeps its state', async () => {
    const a = await LevelRevisionStore.open({ storage: 'memory' });
    const b = await LevelRevisionStore.open({ storage: 'memory' });
    await b.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/stale', value: enc('x') }] });
    await a.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/k', value: enc('1') }] });
    await a.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/k', value: enc('2') }] });
    await a.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/gone', value: enc('x') }] });
    await a.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: '/gone' }] });
    // The local replicator records no log index; a Raft replica's would be the image's index.
    const image = Buffer.from(await a.captureImage());
    image.writeDoubleBE(7, 'clusterd-store-image/1\n'.length);
    const resets: boolean[] = [];
    b.subscribe((batch) => resets.push(batch.reset === true));
    await b.restoreImage(image);
    expect(resets).toEqual([true]);
    expect(b.currentRevision()).toBe(4);
    expect(b.appliedIndex()).toBe(7);
    expect(await b.get('/stale')).toBeUndefined();
    expect((await b.range('/')).kvs).toEqual((await a.range('/')).kvs);
    expect(Buffer.from((await b.get('/k', 1))!.value).toString()).toBe('1');
    // Writes continue from the image's revision.
    expect(await b.execute({ type: 'txn', compares: [{ key: '/k', modRevision: 2 }], ops: [{ type: 'put', key: '/k', value: enc('3') }] })).toEqual({ succeeded: true, revision: 5 });
    // Not applied again over a later state of the same log.
    await b.restoreImage(image);
    expect(b.currentRevision()).toBe(5);
    await expect(b.restoreImage(new Uint8Array([1, 2, 3]))).rejects.toThrow(/not a store snapshot image/);
    await a.close();
    await b.close();
  });

  it('streams an image in chunks and installs it from chunks split anywhere; captured when asked, not when read', async () => {
    const a = await LevelRevisionStore.open({ storage: 'memory' });
    const b = await LevelRevisionStore.open({ storage: 'memory' });
    const big = 'v'.repeat(300_000);
    for (let i = 0; i < 12; i++) await a.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: `/k${i}`, value: enc(`${i}:${big}`) }] });
    const stream = a.captureImageStream();
    // Written after the capture: not in the image.
    await a.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/later', value: enc('x') }] });
    const chunks: Uint8Array[] = [];
    for await (const c of stream) chunks.push(c);
    // Records come in chunks of about a megabyte, after the header.
    expect(chunks.length).toBeGreaterThan(3);
    const whole = Buffer.concat(chunks);
    // The local replicator records no log index; a Raft replica's would be the image's index.
    whole.writeDoubleBE(9, 'clusterd-store-image/1\n'.length);
    // Cut into pieces of awkward sizes (a header and records split across chunks).
    const pieces = async function* (): AsyncGenerator<Uint8Array> {
      for (let at = 0, n = 1; at < whole.length; at += n, n = (n * 7 + 3) % 65_537 || 1) yield whole.subarray(at, at + n);
    };
    await b.restoreImageStream(pieces());
    expect(b.currentRevision()).toBe(12);
    expect(await b.get('/later')).toBeUndefined();
    // (Compared by hand: a deep equality of megabytes of typed arrays is very slow.)
    const flat = (kvs: { key: string; modRevision: number; value: Uint8Array }[]): string[] =>
      kvs.map((kv) => `${kv.key}@${kv.modRevision}:${createHash('sha256').update(kv.value).digest('hex')}`);
    const want = flat((await a.range('/k')).kvs);
    expect(want).toHaveLength(12);
    expect(flat((await b.range('/k')).kvs)).toEqual(want);
    // A truncated image is refused.
    const c = await LevelRevisionStore.open({ storage: 'memory' });
    await expect(c.restoreImageStream([whole.subarray(0, whole.length - 10)])).rejects.toThrow(/truncated/);
    await a.close();
    await b.close();
    await c.close();
  });

  it('streams an image in chunks of at most a megabyte (a larger record whole in one of its own), the same bytes from either database', async () => {
    const MiB = 1 << 20;
    const dir = tempDir();
    try {
      const stores = [await LevelRevisionStore.open({ storage: 'memory' }), await LevelRevisionStore.open({ storage: 'leveldb', path: dir })];
      // Small records, records that straddle a chunk's end, one larger than a chunk, small again.
      const sizes = [10, 2_000, 700_000, 700_000, 1_500_000, 3, 900_000, 5];
      for (const s of stores) {
        for (const [i, n] of sizes.entries()) await s.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: `/k${i}`, value: Buffer.alloc(n, 97 + i) }] });
        await s.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: '/k5' }] });
      }
      const images: Buffer[] = [];
      for (const s of stores) {
        const chunks: Uint8Array[] = [];
        for await (const c of s.captureImageStream()) chunks.push(c);
        const [, ...records] = chunks;
        for (const c of records) expect(c.length <= MiB || c.length < 1_500_100).toBe(true);
        expect(records.filter((c) => c.length > MiB)).toHaveLength(1);
        images.push(Buffer.concat(chunks));
      }
      expect(images[1]!.equals(images[0]!)).toBe(true);
      const b = await LevelRevisionStore.open({ storage: 'memory' });
      const image = images[1]!;
      image.writeDoubleBE(3, 'clusterd-store-image/1\n'.length);
      await b.restoreImage(image);
      expect(b.currentRevision()).toBe(sizes.length + 1);
      const got = (await b.range('/k')).kvs.map((kv) => [kv.key, kv.value.length]);
      expect(got).toEqual(sizes.map((n, i) => [`/k${i}`, n]).filter(([k]) => k !== '/k5'));
      await b.close();
      for (const s of stores) await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('releases its table files\' memory maps: nothing of the data stays mapped, reads and writes go on', async () => {
    const dir = tempDir();
    const mappedTables = () => readFileSync('/proc/self/maps', 'utf8').split('\n').filter((l) => l.includes(dir) && l.endsWith('.ldb')).length;
    try {
      let store = await LevelRevisionStore.open({ storage: 'leveldb', path: dir });
      const value = enc('x'.repeat(2000));
      for (let i = 0; i < 200; i++) await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: `/k/${String(i).padStart(3, '0')}`, value }] });
      await store.close();
      // Reopened, LevelDB writes what its log held as a table; the open's scan reads it.
      store = await LevelRevisionStore.open({ storage: 'leveldb', path: dir });
      expect((await store.range('/k/', {})).kvs).toHaveLength(200);
      expect(mappedTables()).toBeGreaterThan(0);
      await store.releaseReadMappings();
      expect(mappedTables()).toBe(0);
      const { kvs } = await store.range('/k/', {});
      expect(kvs.map((kv) => [kv.key, Buffer.from(kv.value).equals(value), kv.modRevision])).toEqual(
        Array.from({ length: 200 }, (_, i) => [`/k/${String(i).padStart(3, '0')}`, true, i + 1]),
      );
      await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/k/new', value: enc('1') }] });
      expect(Buffer.from((await store.get('/k/new'))!.value).toString()).toBe('1');
      expect(store.currentRevision()).toBe(201);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps data, revisions and history across a restart', async () => {
    const dir = tempDir();
    try {
      let store = await LevelRevisionStore.open({ storage: 'leveldb', path: dir });
      await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/k', value: enc('1') }] });
      await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/k', value: enc('2') }] });
      await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/gone', value: enc('x') }] });
      await store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: '/gone' }] });
      await store.close();
      store = await LevelRevisionStore.open({ storage: 'leveldb', path: dir });
      expect(store.currentRevision()).toBe(4);
      expect(await store.get('/k')).toMatchObject({ version: 2, modRevision: 2, createRevision: 1 });
      expect(Buffer.from((await store.get('/k', 1))!.value).toString()).toBe('1');
      expect(await store.get('/gone')).toBeUndefined();
      const r = await store.execute({ type: 'txn', compares: [{ key: '/k', modRevision: 2 }], ops: [{ type: 'put', key: '/k', value: enc('3') }] });
      expect(r).toEqual({ succeeded: true, revision: 5 });
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('compacts history: older reads fail with STORE_COMPACTED, the visible state stays', async () => {
    const store = await LevelRevisionStore.open({ storage: 'memory' });
    const put = (k: string, v: string) => store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: k, value: enc(v) }] });
    await put('/a', '1'); // 1
    await put('/a', '2'); // 2
    await put('/b', '1'); // 3
    await store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: '/b' }] }); // 4
    await put('/a', '3'); // 5
    await store.compact(4);
    expect(store.compactedRevision()).toBe(4);
    await expect(store.get('/a', 3)).rejects.toSatisfy((e: unknown) => isStoreError(e, 'STORE_COMPACTED'));
    expect(Buffer.from((await store.get('/a', 4))!.value).toString()).toBe('2');
    expect(Buffer.from((await store.get('/a'))!.value).toString()).toBe('3');
    expect(await store.get('/b', 4)).toBeUndefined();
    await expect(store.eventsSince('/', 2)).rejects.toSatisfy((e: unknown) => isStoreError(e, 'STORE_COMPACTED'));
    expect((await store.eventsSince('/', 4)).map((e) => e.kv.modRevision)).toEqual([5]);
    // Compaction is a command: the revision does not move and compacting backwards is a no-op.
    expect(store.currentRevision()).toBe(5);
    await store.compact(2);
    expect(store.compactedRevision()).toBe(4);
    await store.close();
  });

  it('refuses to open data written under another naming', async () => {
    const dir = tempDir();
    try {
      const s = await LevelRevisionStore.open({ storage: 'leveldb', path: dir, naming: 'cluster' });
      await s.close();
      await expect(LevelRevisionStore.open({ storage: 'leveldb', path: dir, naming: 'kubernetes' })).rejects.toThrow(/--naming=cluster/);
      const again = await LevelRevisionStore.open({ storage: 'leveldb', path: dir, naming: 'cluster' });
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects commands with two ops on one key', async () => {
    const store = await LevelRevisionStore.open({ storage: 'memory' });
    await expect(
      store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/a', value: enc('1') }, { type: 'delete', key: '/a' }] }),
    ).rejects.toThrow(/duplicate key/);
    await store.close();
  });
});

describe('a store whose apply failed', () => {
  // The applier's memory may be ahead of disk: the store refuses writes until a restart, and
  // says so to health checks (a throwing subscriber once left /readyz green over a dead store).
  it('refuses writes and fails assertWritable', async () => {
    const store = await LevelRevisionStore.open({ storage: 'memory' });
    store.assertWritable();
    const unsubscribe = store.subscribe(() => {
      throw new Error('listener broke');
    });
    const put = () => store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: '/k', value: enc('v') }] });
    await expect(put()).rejects.toSatisfy((e: unknown) => isStoreError(e, 'STORE_UNAVAILABLE'));
    unsubscribe();
    await expect(put()).rejects.toSatisfy((e: unknown) => isStoreError(e, 'STORE_UNAVAILABLE'));
    expect(() => store.assertWritable()).toThrow(/store failed: listener broke/);
    await store.close();
  });
});
