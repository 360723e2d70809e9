// raft/storage/log-store-dir.ts owns which log store a replica's raft directory holds: segment
// files (segment-log-store.ts) for a new directory, and for one that holds the LevelDB store of
// earlier builds (level-log-store.ts) a one-time move to segments at open, switched atomically:
//   1. the LevelDB store is opened (replaying its redo log) and read whole;
//   2. its state is written as one segment into `wal.moving`, fdatasynced, and renamed to
//      `wal` (the directory fsynced): from here on the segments are the store;
//   3. LevelDB's files are removed, CURRENT last (a directory holding both `wal` and CURRENT
//      is one where step 3 was interrupted, and is finished at the next open).
// The snapshot data file stays where it is: both stores keep it under `snapshots/` by the same
// name. A crash before step 2 leaves the LevelDB store as it was; `wal.moving` is discarded.

import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createLevelLogStore } from './level-log-store.js';
import { LogStoreError } from './log-store.js';
import { nodeSegmentFs } from './segment-file.js';
import { SEGMENT_DIR_NAME, SNAPSHOT_DIR_NAME, SegmentLogStore, writeInitialSegment, type SegmentLogStoreOptions } from './segment-log-store.js';
import { SnapshotFiles } from './snapshot-files.js';

const MOVING_DIR_NAME = 'wal.moving';
/** LevelDB's files in a store's directory, and the LevelDB store's redo log (key-layout.ts WAL_FILE_NAME). */
const LEVEL_FILE = /^(LOCK|LOG|LOG\.old|raft-wal|MANIFEST-\d+|\d+\.(log|ldb|sst))$/;

/**
 * The log store of the raft directory `dir`: segment files, after moving a LevelDB store of an
 * earlier build to them (see the module header) when the directory holds one.
 */
export function createRaftLogStore(dir: string, options: SegmentLogStoreOptions = {}): SegmentLogStore {
  return new MovingSegmentLogStore(dir, options);
}

class MovingSegmentLogStore extends SegmentLogStore {
  override async open(): ReturnType<SegmentLogStore['open']> {
    await moveLevelStore(this.dir);
    return super.open();
  }
}

/** Whether `dir` holds a LevelDB store (moved or not). */
export function holdsLevelStore(dir: string): boolean {
  return existsSync(join(dir, 'CURRENT'));
}

/** Moves a LevelDB log store in `dir` to segment files; nothing to do for any other directory. */
export async function moveLevelStore(dir: string): Promise<void> {
  const walDir = join(dir, SEGMENT_DIR_NAME);
  const moving = join(dir, MOVING_DIR_NAME);
  try {
    rmSync(moving, { recursive: true, force: true });
    if (!holdsLevelStore(dir)) return;
    if (!existsSync(walDir)) {
      const level = createLevelLogStore(dir, { snapshotRefs: true });
      const state = await level.open();
      await level.close();
      // A format 1 store kept the image in the database: it goes to its file first.
      if (state.snapshot) {
        const files = new SnapshotFiles(join(dir, SNAPSHOT_DIR_NAME), true, () => undefined);
        await files.prepare(state.snapshot);
      }
      await writeInitialSegment(moving, state);
      nodeSegmentFs.rename(moving, walDir);
      await nodeSegmentFs.syncDir(dir);
    }
    const names = readdirSync(dir).filter((n) => LEVEL_FILE.test(n));
    for (const name of names) rmSync(join(dir, name), { force: true });
    rmSync(join(dir, 'CURRENT'), { force: true });
    await nodeSegmentFs.syncDir(dir);
  } catch (cause) {
    if (cause instanceof LogStoreError) throw cause;
    throw new LogStoreError('LOG_IO', `cannot move the LevelDB log store in ${dir} to segment files: ${(cause as Error).message}`, { cause });
  }
}
