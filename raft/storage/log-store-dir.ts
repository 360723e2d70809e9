// raft/storage/log-store-dir.ts owns which log store a replica's raft directory holds: segment
// files (segment-log-store.ts) for a new directory, and for one that holds the LevelDB store of
// earlier builds (level-log-store.ts) a one-time move to segments at open, switched atomically:
//   1. the LevelDB store is opened (replaying its redo log) and read whole;
//   2. its state is written as one segment into `wal.moving`, fdatasynced, and renamed to
//      `wal` (the directory fsynced): from here on the segments are the store;
//   3. LevelDB's files are removed, and CURRENT is replaced by a marker (a directory holding
//      `wal` and LevelDB's CURRENT is one where step 3 was interrupted, and is finished at
//      the next open).
// The snapshot data file stays where it is: both stores keep it under `snapshots/` by the same
// name. A crash before step 2 leaves the LevelDB store as it was; `wal.moving` is discarded.
// The marker (SEGMENT_MARKER as CURRENT, in every directory of segments, new or moved) names no
// manifest: a build with the LevelDB store started on the directory by mistake (a rollback)
// fails to open it, rather than create an empty log beside the segments and start as a member
// that forgot its term, vote and log.

import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLevelLogStore } from './level-log-store.js';
import { LogStoreError } from './log-store.js';
import { nodeSegmentFs } from './segment-file.js';
import { SEGMENT_DIR_NAME, SNAPSHOT_DIR_NAME, SegmentLogStore, writeInitialSegment, type SegmentLogStoreOptions } from './segment-log-store.js';
import { SnapshotFiles } from './snapshot-files.js';

const MOVING_DIR_NAME = 'wal.moving';
const SEGMENT_MARKER = 'clusterd segment log store: this raft directory keeps its log in wal/, which builds with the LevelDB log store cannot read\n';
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

/** What CURRENT in `dir` says: no file, the segment store's marker, or LevelDB's. */
function currentFile(dir: string): 'none' | 'marker' | 'level' {
  let text: string;
  try {
    text = readFileSync(join(dir, 'CURRENT'), 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return 'none';
    throw cause;
  }
  return text === SEGMENT_MARKER ? 'marker' : 'level';
}

/** Whether `dir` holds a LevelDB store (not yet moved, or moved but not yet cleaned up). */
export function holdsLevelStore(dir: string): boolean {
  return currentFile(dir) === 'level';
}

/**
 * Moves a LevelDB log store in `dir` to segment files, and marks the directory as one of
 * segments (see the module header).
 */
export async function moveLevelStore(dir: string): Promise<void> {
  const walDir = join(dir, SEGMENT_DIR_NAME);
  const moving = join(dir, MOVING_DIR_NAME);
  try {
    mkdirSync(dir, { recursive: true });
    rmSync(moving, { recursive: true, force: true });
    const current = currentFile(dir);
    if (current === 'level' && !existsSync(walDir)) {
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
    // LevelDB's files: the moved store's, or a LOCK and LOG an earlier build left when it
    // failed to open the marked directory.
    for (const name of readdirSync(dir)) if (LEVEL_FILE.test(name)) rmSync(join(dir, name), { force: true });
    if (current !== 'marker') {
      writeFileSync(join(dir, 'CURRENT.marker'), SEGMENT_MARKER);
      nodeSegmentFs.rename(join(dir, 'CURRENT.marker'), join(dir, 'CURRENT'));
      await nodeSegmentFs.syncDir(dir);
    }
  } catch (cause) {
    if (cause instanceof LogStoreError) throw cause;
    throw new LogStoreError('LOG_IO', `cannot move the LevelDB log store in ${dir} to segment files: ${(cause as Error).message}`, { cause });
  }
}
