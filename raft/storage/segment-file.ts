// raft/storage/segment-file.ts owns the bytes of a segment-log-store's segment files: the
// record framing, reading a segment back, and appending to the current one. As in wal-file.ts
// (the LevelDB store's redo log), a file is zero-filled ahead of the write position and then
// overwritten in place, and compacted segments are reused for later ones: overwriting blocks
// that are allocated and written changes no file metadata, so fdatasync flushes data only and
// does not wait for an ext4 journal commit; a write on the calling thread costs no round trip
// to the thread pool.
//
// Record: u32 payload length, u32 CRC-32 of the next 8 bytes and the payload, u32 × 2 sequence
// number (high, low), payload. Sequence numbers run on across segments; a segment is named by
// the number of its first record (segmentFileName). A reader stops at the first record that is
// zero, torn, or carries another number than the next one expected: what an earlier use of a
// reused file left behind has lower numbers.
//
// File operations go through SegmentFs so that a test can stand in a file system that loses
// what was not synced at a "crash" (segment-log-store.test.ts).

import {
  closeSync,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { crc32 } from 'node:zlib';

/** The file operations a segment store uses. */
export interface SegmentFs {
  mkdir(dir: string): void;
  /** Names in `dir`. */
  list(dir: string): string[];
  readFile(path: string): Buffer;
  /** Opens `path` for reading and writing, creating it empty if missing. */
  open(path: string): number;
  size(fd: number): number;
  /** Writes all of `data` at `position`. */
  write(fd: number, data: Uint8Array, position: number): void;
  datasync(fd: number): void;
  /** fdatasync on the thread pool. */
  datasyncAsync(fd: number): Promise<void>;
  close(fd: number): void;
  rename(from: string, to: string): void;
  unlink(path: string): void;
  /** Makes the directory's entries (creations, renames, deletions) durable. */
  syncDir(dir: string): Promise<void>;
}

export const nodeSegmentFs: SegmentFs = {
  mkdir: (dir) => void mkdirSync(dir, { recursive: true }),
  list: (dir) => readdirSync(dir),
  readFile: (path) => readFileSync(path),
  open: (path) => {
    closeSync(openSync(path, 'a'));
    return openSync(path, 'r+');
  },
  size: (fd) => fstatSync(fd).size,
  write: (fd, data, position) => {
    for (let off = 0; off < data.length; ) off += writeSync(fd, data, off, data.length - off, position + off);
  },
  datasync: (fd) => fdatasyncSync(fd),
  datasyncAsync: (fd) => new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve()))),
  close: (fd) => closeSync(fd),
  rename: (from, to) => renameSync(from, to),
  unlink: (path) => unlinkSync(path),
  syncDir: async (dir) => {
    const dh = await openFile(dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  },
};

export const RECORD_HEADER_BYTES = 16;
/** Zero-filled ahead of the write position in steps of this size. */
const FILL_STEP = 1 << 20;
const ZEROS = new Uint8Array(FILL_STEP);

/** The name of the segment whose first record is number `firstSeq`. Fixed width: names sort in order. */
export function segmentFileName(firstSeq: number): string {
  return `${firstSeq.toString(16).padStart(16, '0')}.seg`;
}

/** The first sequence number a segment file name gives, or null for any other name. */
export function parseSegmentFileName(name: string): number | null {
  return /^[0-9a-f]{16}\.seg$/.test(name) ? parseInt(name.slice(0, 16), 16) : null;
}

export interface SegmentContents {
  /** The payloads of the records read, in order (views over the file's bytes). */
  payloads: Buffer[];
  /** Number of the record after the last one read. */
  nextSeq: number;
  /** Offset after the last record read: where the next one goes. */
  end: number;
  /**
   * The reading stopped at a record that is not the file's tail: a damaged record is followed
   * by one with the next number (a crash tears only the last record written).
   */
  damaged: boolean;
}

function recordAt(data: Buffer, o: number, seq: number): number {
  if (o + RECORD_HEADER_BYTES > data.length) return -1;
  const len = data.readUInt32LE(o);
  if (len === 0 || o + RECORD_HEADER_BYTES + len > data.length) return -1;
  if (data.readUInt32LE(o + 8) * 0x100000000 + data.readUInt32LE(o + 12) !== seq) return -1;
  if (crc32(data.subarray(o + 8, o + RECORD_HEADER_BYTES + len)) !== data.readUInt32LE(o + 4)) return -1;
  return len;
}

/** Reads the records of a segment, numbered from `firstSeq` on. */
export function readSegment(fs: SegmentFs, path: string, firstSeq: number): SegmentContents {
  const data = fs.readFile(path);
  const payloads: Buffer[] = [];
  let o = 0;
  let seq = firstSeq;
  for (;;) {
    const len = recordAt(data, o, seq);
    if (len < 0) break;
    payloads.push(data.subarray(o + RECORD_HEADER_BYTES, o + RECORD_HEADER_BYTES + len));
    o += RECORD_HEADER_BYTES + len;
    seq++;
  }
  // The stopping record's length, if plausible, says where the next one would start.
  let damaged = false;
  if (o + RECORD_HEADER_BYTES <= data.length) {
    const len = data.readUInt32LE(o);
    if (len > 0 && o + RECORD_HEADER_BYTES + len < data.length) damaged = recordAt(data, o + RECORD_HEADER_BYTES + len, seq + 1) >= 0;
  }
  return { payloads, nextSeq: seq, end: o, damaged };
}

/** The segment records are appended to. */
export class SegmentWriter {
  private filled: number;

  constructor(
    private readonly fs: SegmentFs,
    readonly path: string,
    private fd: number,
    /** Records go past this offset only when the segment holds nothing else (see fits()). */
    readonly capacity: number,
    private pos: number,
    /** Number of the next record appended. */
    private seq: number,
  ) {
    this.filled = fs.size(fd);
  }

  /** Opens an existing or new file to append at `pos`. */
  static open(fs: SegmentFs, path: string, capacity: number, pos: number, nextSeq: number): SegmentWriter {
    return new SegmentWriter(fs, path, fs.open(path), capacity, pos, nextSeq);
  }

  get nextSeq(): number {
    return this.seq;
  }

  /** Whether a record of `bytes` goes into this segment rather than a new one. */
  fits(bytes: number): boolean {
    return this.pos + bytes <= this.capacity;
  }

  /**
   * Appends `record` (RECORD_HEADER_BYTES of room, then the payload), numbering it; with
   * `sync`, durable on return.
   */
  append(record: Uint8Array, sync: boolean): void {
    const end = this.pos + record.length;
    // Zeros first (the next fdatasync allocates them once), so that later records overwrite
    // written blocks and need no metadata.
    while (this.filled < end) {
      // Up to the capacity, or past it when the record itself is larger.
      const n = Math.min(FILL_STEP, Math.max(end, this.capacity) - this.filled);
      this.fs.write(this.fd, ZEROS.subarray(0, n), this.filled);
      this.filled += n;
    }
    const b = Buffer.from(record.buffer, record.byteOffset, record.byteLength);
    b.writeUInt32LE(record.length - RECORD_HEADER_BYTES, 0);
    b.writeUInt32LE(Math.floor(this.seq / 0x100000000), 8);
    b.writeUInt32LE(this.seq % 0x100000000, 12);
    b.writeUInt32LE(crc32(b.subarray(8)), 4);
    this.fs.write(this.fd, record, this.pos);
    if (sync) this.fs.datasync(this.fd);
    this.pos = end;
    this.seq++;
  }

  /** Makes everything appended durable, on the thread pool. */
  sync(): Promise<void> {
    return this.fs.datasyncAsync(this.fd);
  }

  close(): void {
    if (this.fd < 0) return;
    this.fs.close(this.fd);
    this.fd = -1;
  }
}
