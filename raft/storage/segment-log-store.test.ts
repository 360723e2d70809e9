// Runs the DurableLogStore conformance suite against the segment store (on disk; with tiny
// segments so that cuts and compactions happen all the time; over a file system that loses
// unsynced writes at a crash), plus checks of its own: torn tails, corruption, reuse of
// compacted segments, snapshot files, and the move of a LevelDB store to segments.

import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DurableLogStore } from './log-store.js';
import { isLogStoreError } from './log-store.js';
import { ent, runLogStoreSuite, snap } from './log-store-suite.js';
import { createLevelLogStore } from './level-log-store.js';
import { createRaftLogStore, holdsLevelStore } from './log-store-dir.js';
import { ClassicLevel } from 'classic-level';
import { SNAPSHOT_DATA_KEY, SNAPSHOT_META_KEY, VERSION_KEY, entryKey, snapshotFileName } from './key-layout.js';
import { encodeEntry, encodeSnapshotMetadata } from '../codec/raft-codec.js';
import { RECORD_HEADER_BYTES, nodeSegmentFs, type SegmentFs } from './segment-file.js';
import { createSegmentLogStore, type SegmentLogStoreOptions } from './segment-log-store.js';
import { decodeSnapshotRef, encodeSnapshotRef, readSnapshotData, spoolFileName } from './snapshot-ref.js';
import type { Entry } from '../types.js';

runLogStoreSuite('segment files', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'raft-seg-'));
  return { store: () => createSegmentLogStore(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

/** Every other save says its caller is idle: records synced inline and on the thread pool alternate. */
function alternatingIdle(store: DurableLogStore): DurableLogStore {
  const save = store.save.bind(store);
  let saves = 0;
  store.save = (batch) => save({ ...batch, idle: saves++ % 2 === 0 });
  return store;
}

// 300-byte segments: a cut every few saves, some records larger than a whole segment, and
// compaction deleting and reusing segments.
runLogStoreSuite('segment files of 300 bytes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'raft-seg-'));
  return { store: () => alternatingIdle(createSegmentLogStore(dir, { segmentBytes: 300 })), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

/**
 * Segment files in memory that lose at a crash what was not synced: file contents since the
 * file's last fdatasync (but for a seeded random prefix of what was written after it, as a
 * torn write leaves), and directory changes (creations, renames, deletions) since the
 * directory's last fsync.
 */
class LossyFs implements SegmentFs {
  private inodes: { live: Buffer; durable: Buffer }[] = [];
  private liveNames = new Map<string, number>();
  private durableNames = new Map<string, number>();
  private fds = new Map<number, number>();
  private nextFd = 1000;
  private x = 7;

  private rand(n: number): number {
    this.x = (this.x * 1103515245 + 12345) % 2147483648;
    return Math.floor((this.x / 2147483648) * n);
  }

  private inode(fd: number): { live: Buffer; durable: Buffer } {
    const ino = this.fds.get(fd);
    if (ino === undefined) throw new Error(`EBADF ${fd}`);
    return this.inodes[ino]!;
  }

  mkdir(): void {}
  list(dir: string): string[] {
    return [...this.liveNames.keys()].filter((p) => p.startsWith(`${dir}/`)).map((p) => p.slice(dir.length + 1));
  }
  readFile(path: string): Buffer {
    const ino = this.liveNames.get(path);
    if (ino === undefined) throw Object.assign(new Error(`ENOENT ${path}`), { code: 'ENOENT' });
    return Buffer.from(this.inodes[ino]!.live);
  }
  open(path: string): number {
    let ino = this.liveNames.get(path);
    if (ino === undefined) {
      ino = this.inodes.push({ live: Buffer.alloc(0), durable: Buffer.alloc(0) }) - 1;
      this.liveNames.set(path, ino);
    }
    const fd = this.nextFd++;
    this.fds.set(fd, ino);
    return fd;
  }
  size(fd: number): number {
    return this.inode(fd).live.length;
  }
  write(fd: number, data: Uint8Array, position: number): void {
    const f = this.inode(fd);
    if (position + data.length > f.live.length) {
      const grown = Buffer.alloc(position + data.length);
      f.live.copy(grown);
      f.live = grown;
    }
    f.live.set(data, position);
  }
  datasync(fd: number): void {
    const f = this.inode(fd);
    f.durable = Buffer.from(f.live);
  }
  async datasyncAsync(fd: number): Promise<void> {
    await Promise.resolve();
    this.datasync(fd);
  }
  close(fd: number): void {
    this.fds.delete(fd);
  }
  rename(from: string, to: string): void {
    const ino = this.liveNames.get(from);
    if (ino === undefined) throw new Error(`ENOENT ${from}`);
    this.liveNames.delete(from);
    this.liveNames.set(to, ino);
  }
  unlink(path: string): void {
    this.liveNames.delete(path);
  }
  async syncDir(dir: string): Promise<void> {
    await Promise.resolve();
    for (const [p] of this.durableNames) if (p.startsWith(`${dir}/`) && !this.liveNames.has(p)) this.durableNames.delete(p);
    for (const [p, ino] of this.liveNames) if (p.startsWith(`${dir}/`)) this.durableNames.set(p, ino);
  }

  crash(): void {
    for (const f of this.inodes) {
      const kept = Buffer.alloc(Math.max(f.durable.length, f.live.length));
      // Unsynced bytes in order up to a random point (a torn write), then what was durable.
      const upTo = this.rand(2) === 0 ? 0 : this.rand(f.live.length + 1);
      f.durable.copy(kept);
      f.live.copy(kept, 0, 0, upTo);
      f.durable.copy(kept, upTo, upTo);
      f.live = kept.subarray(0, Math.max(f.durable.length, upTo));
      f.durable = Buffer.from(f.live);
    }
    this.liveNames = new Map(this.durableNames);
    this.fds.clear();
  }
}

for (const segmentBytes of [300, 4096]) {
  runLogStoreSuite(`segment files of ${segmentBytes} bytes, losing unsynced writes at a crash`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raft-seg-'));
    const fs = new LossyFs();
    return {
      store: () => alternatingIdle(createSegmentLogStore(dir, { segmentBytes, fs })),
      crash: async () => fs.crash(),
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  });
}

describe('segment log store', () => {
  const withDir = async (fn: (dir: string) => Promise<void>): Promise<void> => {
    const dir = await mkdtemp(join(tmpdir(), 'raft-seg-'));
    try {
      await fn(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
  const segDir = (dir: string): string => join(dir, 'wal');
  const segments = async (dir: string): Promise<string[]> => (await readdir(segDir(dir))).filter((n) => n.endsWith('.seg')).sort();
  const openErr = (dir: string, o?: SegmentLogStoreOptions): Promise<unknown> => createSegmentLogStore(dir, o).open().then(() => null, (e: unknown) => e);
  const range = (lo: number, hi: number, term: number): Entry[] => Array.from({ length: hi - lo + 1 }, (_, k) => ent(lo + k, term));

  it('ends the last segment at a torn record, and appends after what it kept', async () => {
    await withDir(async (dir) => {
      const s = createSegmentLogStore(dir);
      await s.open();
      await s.save({ entries: range(1, 3, 1), hardState: { term: 1, vote: 1, commit: 1 } });
      await s.save({ entries: range(4, 5, 1), hardState: { term: 1, vote: 1, commit: 4 } });
      await s.close();
      // Tear the last record: its last bytes never reached the disk.
      const [name] = await segments(dir);
      const path = join(segDir(dir), name!);
      const bytes = await readFile(path);
      let o = 0;
      const offsets: number[] = [];
      while (bytes.readUInt32LE(o) !== 0) {
        offsets.push(o);
        o += RECORD_HEADER_BYTES + bytes.readUInt32LE(o);
      }
      bytes.fill(0, o - 3, o);
      await writeFile(path, bytes);
      const again = createSegmentLogStore(dir);
      const state = await again.open();
      expect(state.entries).toEqual(range(1, 3, 1));
      expect(state.hardState.commit).toBe(1);
      await again.save({ entries: range(4, 4, 2) });
      await again.close();
      expect((await createRaftLogStore(dir).open()).entries).toEqual([...range(1, 3, 1), ent(4, 2)]);
    });
  });

  it('replays a snapshot that does not match the entry at its index as replacing the whole log', async () => {
    await withDir(async (dir) => {
      const s = createSegmentLogStore(dir);
      await s.open();
      await s.save({ entries: range(1, 6, 1), hardState: { term: 1, vote: 1, commit: 2 } });
      await s.save({ entries: [], snapshot: snap(4, 2), hardState: { term: 2, vote: 0, commit: 4 } });
      await s.close();
      const state = await createSegmentLogStore(dir).open();
      expect(state.snapshot?.metadata).toEqual(snap(4, 2).metadata);
      expect(state.entries).toEqual([]);
    });
  });

  it('loses no acknowledged save when records saved without sync precede a new segment and the machine crashes', async () => {
    await withDir(async (dir) => {
      const fs = new LossyFs();
      const s = createSegmentLogStore(dir, { segmentBytes: 256, fs });
      await s.open();
      for (let i = 1; i <= 30; i++) {
        await s.save({ entries: [ent(i, 1, `${i}@1`.padEnd(40, '.'))], hardState: { term: 1, vote: 1, commit: i - 1 } });
        // Only moves the commit index: not synced.
        await s.save({ entries: [], hardState: { term: 1, vote: 1, commit: i }, sync: false });
      }
      fs.crash();
      const state = await createSegmentLogStore(dir, { segmentBytes: 256, fs }).open();
      expect(state.entries.map((e) => e.index)).toEqual(range(1, 30, 1).map((e) => e.index));
      expect(state.hardState.commit).toBeGreaterThanOrEqual(29);
    });
  });

  it('reports LOG_CORRUPT for a damaged record followed by good ones, and for a missing segment', async () => {
    await withDir(async (dir) => {
      const s = createSegmentLogStore(dir, { segmentBytes: 200 });
      await s.open();
      for (let i = 1; i <= 20; i++) await s.save({ entries: [ent(i, 1)], hardState: { term: 1, vote: 1, commit: i } });
      await s.close();
      const names = await segments(dir);
      expect(names.length).toBeGreaterThan(3);
      // A flipped byte in the middle of the last segment: not a crash's torn tail.
      const last = join(segDir(dir), names[names.length - 1]!);
      const original = await readFile(last);
      const damaged = Buffer.from(original);
      damaged[RECORD_HEADER_BYTES + 2] ^= 0xff;
      await writeFile(last, damaged);
      expect(isLogStoreError(await openErr(dir, { segmentBytes: 200 }), 'LOG_CORRUPT')).toBe(true);
      await writeFile(last, original);
      // A segment gone from the middle.
      await rm(join(segDir(dir), names[1]!));
      expect(isLogStoreError(await openErr(dir, { segmentBytes: 200 }), 'LOG_CORRUPT')).toBe(true);
    });
  });

  it('deletes segments whose entries are all compacted, reuses them, and replays from the oldest kept', async () => {
    await withDir(async (dir) => {
      const s = createSegmentLogStore(dir, { segmentBytes: 1024, spareSegments: 1 });
      await s.open();
      for (let i = 1; i <= 100; i++) await s.save({ entries: [ent(i, 1, `${i}@1`.padEnd(100, '.'))], hardState: { term: 1, vote: 1, commit: i } });
      const before = await segments(dir);
      expect(before.length).toBeGreaterThan(8);
      await s.save({ entries: [], snapshot: snap(90, 1) });
      await s.compact(80);
      const after = await segments(dir);
      // Only segments holding entries above 80 (and the current one) stay, and one is kept to reuse.
      expect(after.length).toBeLessThan(4);
      expect(after).toEqual(before.slice(before.length - after.length));
      expect((await readdir(segDir(dir))).filter((n) => n.startsWith('spare-'))).toHaveLength(1);
      for (let i = 101; i <= 130; i++) await s.save({ entries: [ent(i, 2, `${i}@2`.padEnd(100, '.'))], hardState: { term: 2, vote: 1, commit: i } });
      expect((await readdir(segDir(dir))).filter((n) => n.startsWith('spare-'))).toHaveLength(0);
      await s.close();
      const state = await createSegmentLogStore(dir, { segmentBytes: 1024 }).open();
      expect(state.snapshot?.metadata.index).toBe(90);
      expect(state.entries.map((e) => e.index)).toEqual(range(91, 130, 1).map((e) => e.index));
      expect(state.entries[state.entries.length - 1]!.term).toBe(2);
      expect(state.hardState.commit).toBe(130);
    });
  });

  it('keeps snapshot data in files: stages, adopts spooled files, hands back references, keeps only the current one', async () => {
    await withDir(async (dir) => {
      const snapDir = join(dir, 'snapshots');
      let s = createSegmentLogStore(dir, { snapshotRefs: true });
      await s.open();
      await s.save({ entries: range(1, 4, 1), hardState: { term: 1, vote: 1, commit: 4 } });
      const chunks = async function* (): AsyncGenerator<Uint8Array> {
        yield new TextEncoder().encode('image@2 ');
        yield new TextEncoder().encode('streamed');
      };
      const own = await s.stageSnapshotStream!(snap(2, 1).metadata, chunks());
      await s.save({ entries: [], snapshot: { metadata: snap(2, 1).metadata, data: own } });
      expect(s.recordedSnapshotData()).toEqual(own);
      const spool = join(snapDir, spoolFileName());
      await writeFile(spool, 'image@3 received');
      await s.save({ entries: [], snapshot: { metadata: snap(3, 1).metadata, data: encodeSnapshotRef({ path: spool, size: 16 }) } });
      expect(decodeSnapshotRef(s.recordedSnapshotData()!)).toEqual({ path: join(snapDir, snapshotFileName(3, 1)), size: 16 });
      await s.stageSnapshot(snap(4, 1));
      await writeFile(join(snapDir, spoolFileName()), 'half received');
      await s.close();
      s = createSegmentLogStore(dir, { snapshotRefs: true });
      const state = await s.open();
      expect(new TextDecoder().decode(await readSnapshotData(state.snapshot!.data))).toBe('image@3 received');
      expect(await readdir(snapDir)).toEqual([snapshotFileName(3, 1)]);
      await s.close();
      await rm(join(snapDir, snapshotFileName(3, 1)));
      expect(isLogStoreError(await openErr(dir), 'LOG_CORRUPT')).toBe(true);
    });
  });

  describe('a raft directory holding the LevelDB store of an earlier build', () => {
    const fill = async (dir: string): Promise<void> => {
      const level = createLevelLogStore(dir, { snapshotRefs: true });
      await level.open();
      await level.save({ entries: range(1, 40, 1), hardState: { term: 1, vote: 2, commit: 30 } });
      await level.save({ entries: [], snapshot: snap(20, 1) });
      await level.compact(20);
      await level.save({ entries: range(35, 42, 3), hardState: { term: 3, vote: 0, commit: 30 } });
      await level.close();
    };
    const expected = { hardState: { term: 3, vote: 0, commit: 30 }, entries: [...range(21, 34, 1), ...range(35, 42, 3)] };

    it('is moved to segments once, at open, keeping its snapshot file', async () => {
      await withDir(async (dir) => {
        await fill(dir);
        expect(holdsLevelStore(dir)).toBe(true);
        const s = createRaftLogStore(dir, { snapshotRefs: true });
        const state = await s.open();
        expect(state.hardState).toEqual(expected.hardState);
        expect(state.entries).toEqual(expected.entries);
        expect(new TextDecoder().decode(await readSnapshotData(state.snapshot!.data))).toBe('image@20');
        await s.save({ entries: [ent(43, 3)], hardState: { term: 3, vote: 0, commit: 43 } });
        await s.close();
        expect(holdsLevelStore(dir)).toBe(false);
        expect((await readdir(dir)).sort()).toEqual(['CURRENT', 'snapshots', 'wal']);
        const again = await createRaftLogStore(dir).open();
        expect(again.entries).toEqual([...expected.entries, ent(43, 3)]);
        expect(again.hardState.commit).toBe(43);
      });
    });

    it('is moved again after a crash before the switch, and cleaned up after a crash behind it', async () => {
      await withDir(async (dir) => {
        await fill(dir);
        // A crash while the segment was being written: a partial wal.moving, LevelDB intact.
        await nodeSegmentFs.mkdir(join(dir, 'wal.moving'));
        await writeFile(join(dir, 'wal.moving', '0000000000000000.seg'), 'partial');
        let s = createRaftLogStore(dir);
        expect((await s.open()).entries).toEqual(expected.entries);
        await s.close();
        expect(existsSync(join(dir, 'wal.moving'))).toBe(false);
        // A crash after the switch, before LevelDB's files were all removed.
        await writeFile(join(dir, 'CURRENT'), 'MANIFEST-000004\n');
        await writeFile(join(dir, 'MANIFEST-000004'), '');
        s = createRaftLogStore(dir);
        expect((await s.open()).entries).toEqual(expected.entries);
        await s.close();
        expect((await readdir(dir)).sort()).toEqual(['CURRENT', 'snapshots', 'wal']);
      });
    });

    it('is moved with its image when it is a format 1 store (snapshot data in the database)', async () => {
      await withDir(async (dir) => {
        const db = new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
        await db.open();
        await db.batch([
          { type: 'put', key: VERSION_KEY, value: new Uint8Array([1]) },
          { type: 'put', key: SNAPSHOT_META_KEY, value: encodeSnapshotMetadata(snap(2, 1).metadata) },
          { type: 'put', key: SNAPSHOT_DATA_KEY, value: snap(2, 1).data },
          { type: 'put', key: entryKey(3), value: encodeEntry(ent(3, 1)) },
        ]);
        await db.close();
        const s = createRaftLogStore(dir);
        const state = await s.open();
        await s.close();
        expect(state.snapshot).toEqual(snap(2, 1));
        expect(state.entries).toEqual([ent(3, 1)]);
        expect(await readdir(join(dir, 'snapshots'))).toEqual([snapshotFileName(2, 1)]);
      });
    });

    it('creates a directory that does not exist yet', async () => {
      await withDir(async (parent) => {
        const dir = join(parent, 'member', 'raft');
        const s = createRaftLogStore(dir);
        expect(await s.open()).toEqual({ hardState: { term: 0, vote: 0, commit: 0 }, snapshot: null, entries: [] });
        await s.close();
      });
    });

    it('is refused by the LevelDB store of an earlier build once it holds segments, new or moved', async () => {
      for (const moved of [false, true]) {
        await withDir(async (dir) => {
          if (moved) await fill(dir);
          const s = createRaftLogStore(dir);
          await s.open();
          await s.save({ entries: moved ? [ent(43, 3)] : [ent(1, 1)], hardState: { term: 3, vote: 2, commit: 0 } });
          await s.close();
          // A rollback: the earlier build opens the directory as a LevelDB store.
          const err = await createLevelLogStore(dir).open().then(() => null, (e: unknown) => e);
          expect(isLogStoreError(err, 'LOG_IO')).toBe(true);
          // This build still opens it, and clears what the failed attempt left.
          const again = createRaftLogStore(dir);
          expect((await again.open()).hardState).toEqual({ term: 3, vote: 2, commit: 0 });
          await again.close();
          expect((await readdir(dir)).sort()).toEqual(['CURRENT', 'snapshots', 'wal']);
        });
      }
    });
  });
});
