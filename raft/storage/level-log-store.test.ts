// Runs the DurableLogStore conformance suite against memory-level and real LevelDB, plus
// checks specific to the on-disk backend (key order, lock, corruption detection).

import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { MemoryLevel } from 'memory-level';
import type { AbstractLevel } from 'abstract-level';
import { describe, expect, it } from 'vitest';
import { FORMAT_VERSION, SNAPSHOT_DATA_KEY, SNAPSHOT_META_KEY, VERSION_KEY, entryKey, indexOfEntryKey, snapshotFileName } from './key-layout.js';
import { LevelLogStore, createLevelLogStore } from './level-log-store.js';
import { isLogStoreError } from './log-store.js';
import { ent, runLogStoreSuite, snap } from './log-store-suite.js';
import { encodeEntry, encodeSnapshotMetadata } from '../codec/raft-codec.js';
import type { Entry } from '../types.js';
import { decodeSnapshotRef, encodeSnapshotRef, readSnapshotData, spoolFileName } from './snapshot-ref.js';

type Db = AbstractLevel<Uint8Array, Uint8Array, Uint8Array>;

runLogStoreSuite('memory-level', async () => {
  const db = new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' }) as unknown as Db;
  return { store: () => new LevelLogStore(db), cleanup: async () => undefined };
});

runLogStoreSuite('classic-level', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'raft-log-'));
  return { store: () => createLevelLogStore(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

// Behind a redo log, with a LevelDB that loses at a crash every write it was not asked to
// flush (a checkpoint): everything acknowledged must come back from the redo log. A 700-byte
// log starts over every few saves, and every other save says its caller is idle, so records
// synced inline and on the thread pool alternate; in a 150-byte one some batches do not fit
// at all, and every record is fdatasynced on the thread pool.
for (const walBytes of [700, 150]) {
  runLogStoreSuite(`memory-level behind a ${walBytes}-byte redo log, losing unflushed writes at a crash`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raft-wal-'));
    const mem = (): MemoryLevel<Uint8Array, Uint8Array> => new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' });
    let live = mem();
    let durable: [Uint8Array, Uint8Array][] = [];
    const flush = async (): Promise<void> => {
      durable = [];
      for await (const [k, v] of live.iterator()) durable.push([k.slice(), v.slice()]);
    };
    return {
      store: () => {
        const store = new LevelLogStore(live as unknown as Db, { wal: { path: join(dir, 'wal'), bytes: walBytes, flush, inlineSyncBytes: walBytes > 200 ? 2048 : 0 } });
        const save = store.save.bind(store);
        let saves = 0;
        store.save = (batch) => save({ ...batch, idle: saves++ % 2 === 0 });
        return store;
      },
      crash: async () => {
        live = mem();
        await live.batch(durable.map(([key, value]) => ({ type: 'put' as const, key, value })));
      },
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  });
}

describe('key layout', () => {
  it('orders entry keys by index, bytewise', () => {
    const indexes = [0, 1, 255, 256, 65535, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER];
    const keys = indexes.map(entryKey);
    const cmp = (a: Uint8Array, b: Uint8Array): number => Buffer.compare(Buffer.from(a), Buffer.from(b));
    for (let i = 1; i < keys.length; i++) expect(cmp(keys[i - 1]!, keys[i]!)).toBeLessThan(0);
    for (const i of indexes) expect(indexOfEntryKey(entryKey(i))).toBe(i);
  });
});

describe('LevelDB backend', () => {
  it('refuses a second opener while the first holds the lock', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raft-log-'));
    const a = createLevelLogStore(dir);
    await a.open();
    const b = createLevelLogStore(dir);
    const err = await b.open().then(() => null, (e: unknown) => e);
    expect(isLogStoreError(err, 'LOG_IO')).toBe(true);
    await a.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reports a gap written behind its back as LOG_CORRUPT', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raft-log-'));
    const s = createLevelLogStore(dir);
    await s.open();
    await s.save({ entries: [ent(1, 1), ent(2, 1)] });
    await s.close();
    const raw = new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
    await raw.put(entryKey(4), encodeEntry(ent(4, 1)));
    await raw.close();
    const err = await createLevelLogStore(dir).open().then(() => null, (e: unknown) => e);
    expect(isLogStoreError(err, 'LOG_CORRUPT')).toBe(true);
    await rm(dir, { recursive: true, force: true });
  });

  describe('snapshot data files', () => {
    const raw = (dir: string) => new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
    const snapDir = (dir: string): string => join(dir, 'snapshots');

    it('keeps snapshot data in a file, not in the database, and only the current one', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'raft-log-'));
      const s = createLevelLogStore(dir);
      await s.open();
      await s.save({ entries: [ent(1, 1), ent(2, 1), ent(3, 2)], hardState: { term: 2, vote: 1, commit: 3 } });
      await s.save({ entries: [], snapshot: snap(2, 1) });
      await s.save({ entries: [], snapshot: snap(3, 2) });
      await s.close();
      expect(await readdir(snapDir(dir))).toEqual([snapshotFileName(3, 2)]);
      const db = raw(dir);
      expect(await db.get(SNAPSHOT_DATA_KEY)).toBeUndefined();
      await db.close();
      const reopened = createLevelLogStore(dir);
      expect((await reopened.open()).snapshot).toEqual(snap(3, 2));
      await reopened.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('removes files no record names at open (a crash between file and record), and reports a missing one', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'raft-log-'));
      let s = createLevelLogStore(dir);
      await s.open();
      await s.save({ entries: [ent(1, 1), ent(2, 1)], hardState: { term: 1, vote: 1, commit: 2 } });
      await s.save({ entries: [], snapshot: snap(1, 1) });
      await s.close();
      await writeFile(join(snapDir(dir), snapshotFileName(2, 1)), 'written, never referenced');
      await writeFile(join(snapDir(dir), `${snapshotFileName(2, 1)}.tmp`), 'half written');
      s = createLevelLogStore(dir);
      expect((await s.open()).snapshot).toEqual(snap(1, 1));
      await s.close();
      expect(await readdir(snapDir(dir))).toEqual([snapshotFileName(1, 1)]);
      await rm(join(snapDir(dir), snapshotFileName(1, 1)));
      const err = await createLevelLogStore(dir).open().then(() => null, (e: unknown) => e);
      expect(isLogStoreError(err, 'LOG_CORRUPT')).toBe(true);
      await rm(dir, { recursive: true, force: true });
    });

    it('records a staged snapshot without writing its data again; drops one never recorded', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'raft-log-'));
      let s = createLevelLogStore(dir);
      await s.open();
      await s.save({ entries: [ent(1, 1), ent(2, 1), ent(3, 1)], hardState: { term: 1, vote: 1, commit: 3 } });
      await s.stageSnapshot!(snap(2, 1));
      // The staged file is what gets recorded: mark it to tell it from a rewrite.
      await writeFile(join(snapDir(dir), snapshotFileName(2, 1)), 'image@2 as staged');
      await s.save({ entries: [], snapshot: snap(2, 1) });
      // Staged but never recorded (a newer leader snapshot made it moot, or a crash).
      await s.stageSnapshot!(snap(3, 1));
      await s.close();
      s = createLevelLogStore(dir);
      const state = await s.open();
      expect(new TextDecoder().decode(state.snapshot!.data)).toBe('image@2 as staged');
      await s.close();
      expect(await readdir(snapDir(dir))).toEqual([snapshotFileName(2, 1)]);
      await rm(dir, { recursive: true, force: true });
    });

    it('with snapshotRefs: stages a stream, adopts a spooled file, hands back references, clears stray spool files', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'raft-log-'));
      const chunksOf = async function* (text: string): AsyncGenerator<Uint8Array> {
        const b = new TextEncoder().encode(text);
        for (let i = 0; i < b.length; i += 3) yield b.subarray(i, i + 3);
      };
      let s = createLevelLogStore(dir, { snapshotRefs: true });
      await s.open();
      await s.save({ entries: [ent(1, 1), ent(2, 1), ent(3, 1), ent(4, 1)], hardState: { term: 1, vote: 1, commit: 4 } });
      // A snapshot of our own, from a stream.
      const own = await s.stageSnapshotStream!(snap(2, 1).metadata, chunksOf('image@2 streamed'));
      expect(decodeSnapshotRef(own)).toEqual({ path: join(snapDir(dir), snapshotFileName(2, 1)), size: 16 });
      await s.save({ entries: [], snapshot: { metadata: snap(2, 1).metadata, data: own } });
      expect(s.recordedSnapshotData!()).toEqual(own);
      // A snapshot a transport spooled: moved into place, and the store says where it is now.
      const spool = join(snapDir(dir), spoolFileName());
      await writeFile(spool, 'image@3 received');
      await s.save({ entries: [], snapshot: { metadata: snap(3, 1).metadata, data: encodeSnapshotRef({ path: spool, size: 16 }) } });
      const recorded = decodeSnapshotRef(s.recordedSnapshotData!()!)!;
      expect(recorded).toEqual({ path: join(snapDir(dir), snapshotFileName(3, 1)), size: 16 });
      expect(await readdir(snapDir(dir))).toEqual([snapshotFileName(3, 1)]);
      // A spool file a crash left behind goes at open; the recorded snapshot comes back as a reference.
      await writeFile(join(snapDir(dir), spoolFileName()), 'half received');
      await s.close();
      s = createLevelLogStore(dir, { snapshotRefs: true });
      const state = await s.open();
      expect(decodeSnapshotRef(state.snapshot!.data)).toEqual(recorded);
      expect(new TextDecoder().decode(await readSnapshotData(state.snapshot!.data))).toBe('image@3 received');
      expect(await readdir(snapDir(dir))).toEqual([snapshotFileName(3, 1)]);
      await s.close();
      // Without snapshotRefs the same store reads the data itself, and offers no streams.
      s = createLevelLogStore(dir);
      expect(new TextDecoder().decode((await s.open()).snapshot!.data)).toBe('image@3 received');
      expect(s.stageSnapshotStream).toBeUndefined();
      await s.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('a memory store given a reference keeps the data itself', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'raft-log-'));
      const file = join(dir, 'image');
      await writeFile(file, 'image@1 from a file');
      const db = new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' }) as unknown as Db;
      const s = new LevelLogStore(db);
      await s.open();
      await s.save({ entries: [], snapshot: { metadata: snap(1, 1).metadata, data: encodeSnapshotRef({ path: file, size: 19 }) }, hardState: { term: 1, vote: 0, commit: 1 } });
      await rm(dir, { recursive: true, force: true });
      await s.close();
      expect(new TextDecoder().decode((await s.open()).snapshot!.data)).toBe('image@1 from a file');
      await s.close();
    });

    it('reads a format 1 store (snapshot data in the database) and marks it with the current format', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'raft-log-'));
      const db = raw(dir);
      await db.open();
      const s1 = snap(2, 1);
      await db.batch([
        { type: 'put', key: VERSION_KEY, value: new Uint8Array([1]) },
        { type: 'put', key: SNAPSHOT_META_KEY, value: encodeSnapshotMetadata(s1.metadata) },
        { type: 'put', key: SNAPSHOT_DATA_KEY, value: s1.data },
        { type: 'put', key: entryKey(3), value: encodeEntry(ent(3, 1)) },
      ]);
      await db.close();
      const s = createLevelLogStore(dir);
      const state = await s.open();
      expect(state.snapshot).toEqual(s1);
      expect(state.entries).toEqual([ent(3, 1)]);
      // The next snapshot moves to a file.
      await s.save({ entries: [], snapshot: snap(3, 1), hardState: { term: 1, vote: 0, commit: 3 } });
      await s.close();
      const again = raw(dir);
      expect([...((await again.get(VERSION_KEY)) ?? [])]).toEqual([FORMAT_VERSION]);
      expect(await again.get(SNAPSHOT_DATA_KEY)).toBeUndefined();
      await again.close();
      const reopened = createLevelLogStore(dir);
      expect((await reopened.open()).snapshot).toEqual(snap(3, 1));
      await reopened.close();
      await rm(dir, { recursive: true, force: true });
    });
  });

  it('behind a redo log, hands saves of a Raft batch each to LevelDB in writes of several saves, and reads them back', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raft-wal-'));
    const db = new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' });
    let writes = 0;
    const batch = db.batch.bind(db);
    (db as { batch: unknown }).batch = (...args: unknown[]) => {
      if (args.length === 0) writes++;
      return (batch as (...a: unknown[]) => unknown)(...args);
    };
    const s = new LevelLogStore(db as unknown as Db, { wal: { path: join(dir, 'wal'), bytes: 32 << 20, flush: async () => undefined } });
    await s.open();
    const before = writes;
    // A loaded member's saves: 8 entries of about 2.7 KB (a created pod) each, about 22 KB.
    const all: Entry[] = [];
    for (let k = 0; k < 12; k++) {
      const entries = Array.from({ length: 8 }, (_, j) => ent(k * 8 + j + 1, 1, `${k * 8 + j + 1}:`.padEnd(2700, 'p')));
      all.push(...entries);
      await s.save({ entries, hardState: { term: 1, vote: 0, commit: k * 8 } });
    }
    // One LevelDB write per save would be 12; gathered, at most one per 64 KB of records.
    expect(writes - before).toBeLessThanOrEqual(4);
    await s.close();
    const again = new LevelLogStore(db as unknown as Db, { wal: { path: join(dir, 'wal'), bytes: 32 << 20, flush: async () => undefined } });
    expect((await again.open()).entries).toEqual(all);
    await again.close();
    await rm(dir, { recursive: true, force: true });
  });
});
