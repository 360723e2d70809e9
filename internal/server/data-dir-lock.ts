// internal/server/data-dir-lock owns the claim one server process holds on its data directory:
// two processes on one directory would interleave writes to its store, Raft log and keys. The
// lock is an operating-system lock (LevelDB's LOCK file in `<data-dir>/lock`, taken with
// fcntl), so the kernel releases it when the holder dies, even by kill -9: a crash never leaves
// a stale lock behind, which a pid file could. Imports: none from the project.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';

export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
}

export interface DataDirLock {
  release(): Promise<void>;
}

export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  mkdirSync(dataDir, { recursive: true });
  const db = new Level(join(dataDir, 'lock'));
  try {
    await db.open();
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause;
    if (cause?.code === 'LEVEL_LOCKED') {
      throw new DataDirInUseError(`the data directory ${dataDir} is in use by another process (is another clusterd running with --data-dir=${dataDir}?)`);
    }
    throw e;
  }
  return { release: () => db.close() };
}
