// raft/storage/snapshot-files.ts owns the directory of snapshot data files of the on-disk log
// stores (segment-log-store.ts, level-log-store.ts): writing an image durably under a
// temporary name before the record naming it, staging it outside the queue of saves, adopting
// a file a transport spooled into the directory, handing back references (snapshot-ref.ts),
// and removing files no record names. Both stores use the same directory and names, so that
// a raft directory moved from one to the other keeps its snapshot file where it is.

import { open as openFile, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Snapshot, SnapshotMetadata } from '../types.js';
import { isSnapshotFileName, snapshotFileName } from './key-layout.js';
import { LogStoreError } from './log-store.js';
import { decodeSnapshotRef, encodeSnapshotRef, isSpoolFileName, snapshotDataChunks, snapshotDataSize } from './snapshot-ref.js';

export class SnapshotFiles {
  /** Files being written by stage(), and written but not yet recorded. */
  private readonly staging = new Set<string>();
  private readonly staged = new Set<string>();
  private readonly stagingWrites = new Set<Promise<void>>();
  /** With `refs`: the reference to the recorded snapshot's file. */
  private recordedRef: Uint8Array | undefined;

  constructor(
    readonly dir: string,
    /** Hand back references to files rather than their data (see LevelLogStoreOptions.snapshotRefs). */
    readonly refs: boolean,
    /** Called when a write failed: the store's state on disk is then unknown. */
    private readonly failed: (cause: unknown) => void,
  ) {}

  get recorded(): Uint8Array | undefined {
    return this.recordedRef;
  }

  /** Forgets what was staged (at open: nothing staged before can be recorded any more). */
  reset(): void {
    this.staged.clear();
  }

  /** Waits for files being staged (at close). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.stagingWrites]);
  }

  /** Writes the snapshot's file now, ahead of the save() that records it (stageSnapshot). */
  async stage(snapshot: Snapshot): Promise<void> {
    const name = snapshotFileName(snapshot.metadata.index, snapshot.metadata.term);
    if (this.staged.has(name) || this.staging.has(name)) return;
    await this.track(name, this.write(snapshot.metadata, snapshot.data));
  }

  /** stage() for data produced as chunks; resolves with the reference standing for it. */
  async stageStream(metadata: SnapshotMetadata, chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
    const name = snapshotFileName(metadata.index, metadata.term);
    if (this.staging.has(name)) throw new LogStoreError('LOG_INVARIANT', `snapshot ${name} is being staged already`);
    let size = 0;
    await this.track(name, this.write(metadata, chunks, (n) => (size = n)));
    return encodeSnapshotRef({ path: join(this.dir, name), size });
  }

  /** Before the record naming it: the snapshot's file, complete and durable. */
  async prepare(snapshot: Snapshot): Promise<void> {
    const name = snapshotFileName(snapshot.metadata.index, snapshot.metadata.term);
    if (!this.staged.has(name)) await this.write(snapshot.metadata, snapshot.data);
  }

  /** After the record naming it is durable: the previous snapshot's file goes. */
  async afterRecord(snapshot: Snapshot): Promise<void> {
    const name = snapshotFileName(snapshot.metadata.index, snapshot.metadata.term);
    if (this.refs) this.recordedRef = encodeSnapshotRef({ path: join(this.dir, name), size: snapshotDataSize(snapshot.data) });
    this.staged.delete(name);
    await this.removeExcept(snapshot.metadata);
  }

  /**
   * At open: the data of the recorded snapshot `meta` (a reference with `refs`), undefined
   * when its file is missing; every other snapshot or spool file is removed.
   */
  async load(meta: SnapshotMetadata | null): Promise<Uint8Array | undefined> {
    const data = meta ? await this.read(meta) : undefined;
    await this.removeExcept(data ? meta : null);
    await this.removeSpool();
    this.recordedRef = this.refs && data ? data : undefined;
    return data;
  }

  private async track(name: string, write: Promise<void>): Promise<void> {
    this.staging.add(name);
    const staged = write.then(() => {
      this.staged.add(name);
    });
    this.stagingWrites.add(staged);
    try {
      await staged;
    } finally {
      this.staging.delete(name);
      this.stagingWrites.delete(staged);
    }
  }

  /**
   * Writes snapshot data to its file durably: temporary name, fsync, rename, fsync the
   * directory. A reference to a file elsewhere in the directory (spooled by a transport) is
   * renamed into place; chunks are written as they come.
   */
  private async write(meta: SnapshotMetadata, data: Uint8Array | AsyncIterable<Uint8Array>, written?: (bytes: number) => void): Promise<void> {
    const dir = this.dir;
    const name = snapshotFileName(meta.index, meta.term);
    try {
      const ref = data instanceof Uint8Array ? decodeSnapshotRef(data) : null;
      if (ref && ref.path === join(dir, name)) return;
      const tmp = join(dir, `${name}.tmp`);
      if (ref && dirname(ref.path) === dir) {
        await rename(ref.path, tmp);
      } else {
        const fh = await openFile(tmp, 'w');
        try {
          let n = 0;
          for await (const chunk of data instanceof Uint8Array ? snapshotDataChunks(data) : data) {
            await fh.write(chunk);
            n += chunk.length;
          }
          written?.(n);
          await fh.sync();
        } finally {
          await fh.close();
        }
      }
      await rename(tmp, join(dir, name));
      const dh = await openFile(dir, 'r');
      try {
        await dh.sync();
      } finally {
        await dh.close();
      }
    } catch (cause) {
      this.failed(cause);
      throw new LogStoreError('LOG_IO', `cannot write snapshot file ${name}: ${(cause as Error).message}`, { cause });
    }
  }

  /**
   * Deletes snapshot files other than `keep`'s (best effort: strays are retried at open),
   * except those being staged, or staged for a snapshot newer than `keep` (a save may still
   * record them; an older one never can be: stores refuse older snapshots).
   */
  private async removeExcept(keep: SnapshotMetadata | null): Promise<void> {
    const keepName = keep ? snapshotFileName(keep.index, keep.term) : null;
    const busy = (name: string): boolean => {
      const base = name.replace(/\.tmp$/, '');
      if (this.staging.has(base)) return true;
      return this.staged.has(base) && base > (keepName ?? '');
    };
    try {
      for (const name of await readdir(this.dir)) {
        if (!isSnapshotFileName(name) || name === keepName || busy(name)) continue;
        this.staged.delete(name);
        await rm(join(this.dir, name), { force: true });
      }
    } catch {
      /* a leftover file costs disk space only; open() tries again */
    }
  }

  /** Received snapshots a crash left before they were recorded. */
  private async removeSpool(): Promise<void> {
    try {
      for (const name of await readdir(this.dir)) if (isSpoolFileName(name)) await rm(join(this.dir, name), { force: true });
    } catch {
      /* disk space only */
    }
  }

  private async read(meta: SnapshotMetadata): Promise<Uint8Array | undefined> {
    const name = snapshotFileName(meta.index, meta.term);
    const path = join(this.dir, name);
    try {
      if (this.refs) return encodeSnapshotRef({ path, size: (await stat(path)).size });
      const buf = await readFile(path);
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new LogStoreError('LOG_IO', `cannot read snapshot file ${name}: ${(cause as Error).message}`, { cause });
    }
  }
}
