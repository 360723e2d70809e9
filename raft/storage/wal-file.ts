// raft/storage/wal-file.ts owns the redo log that makes a LevelLogStore's writes durable (see
// level-log-store.ts, "Durability"): one file of fixed capacity, zero-filled ahead of the
// write position and then overwritten in place, written and fdatasynced on the calling
// thread. Overwriting blocks that are allocated and written changes no file metadata, so
// fdatasync flushes data only and does not wait for an ext4 journal commit; and a write on
// the calling thread costs no thread-pool round trip (on a loaded machine each one waited for
// a core: measured, half of a slow put's log write).
//
// Record: u32 payload length, u32 CRC-32 of the next 8 bytes and the payload, u32 × 2 sequence
// number (high, low), payload = operations, each u8 kind (1 put, 2 delete), u32 key length,
// key, and for a put u32 value length, value. A reader starts at offset 0 with the sequence
// number the store recorded at its last checkpoint and stops at the first record that is
// torn, zero, or carries another number: what a previous pass through the file left behind
// has lower numbers.

import { closeSync, fdatasync, fdatasyncSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';

export interface WalOp {
  type: 'put' | 'del';
  key: Uint8Array;
  value?: Uint8Array;
}

const HEADER_BYTES = 16;
const PUT = 1;
const DEL = 2;
/** Zero-filled ahead of the write position in steps of this size. */
const FILL_STEP = 1 << 20;
const ZEROS = new Uint8Array(FILL_STEP);

/** One record ready to append: its bytes, with the sequence number still to be set. */
export function encodeWalRecord(ops: readonly WalOp[]): Buffer {
  let size = HEADER_BYTES;
  for (const op of ops) size += 5 + op.key.length + (op.type === 'put' ? 4 + (op.value?.length ?? 0) : 0);
  const buf = Buffer.allocUnsafe(size);
  let o = HEADER_BYTES;
  for (const op of ops) {
    buf[o] = op.type === 'put' ? PUT : DEL;
    buf.writeUInt32LE(op.key.length, o + 1);
    buf.set(op.key, o + 5);
    o += 5 + op.key.length;
    if (op.type === 'put') {
      const v = op.value ?? ZEROS.subarray(0, 0);
      buf.writeUInt32LE(v.length, o);
      buf.set(v, o + 4);
      o += 4 + v.length;
    }
  }
  buf.writeUInt32LE(size - HEADER_BYTES, 0);
  return buf;
}

function decodeOps(payload: Buffer): WalOp[] | null {
  const ops: WalOp[] = [];
  let o = 0;
  while (o < payload.length) {
    if (o + 5 > payload.length) return null;
    const kind = payload[o]!;
    const keyLen = payload.readUInt32LE(o + 1);
    o += 5;
    if (o + keyLen > payload.length) return null;
    const key = payload.subarray(o, o + keyLen);
    o += keyLen;
    if (kind === DEL) {
      ops.push({ type: 'del', key });
    } else if (kind === PUT) {
      if (o + 4 > payload.length) return null;
      const valueLen = payload.readUInt32LE(o);
      o += 4;
      if (o + valueLen > payload.length) return null;
      ops.push({ type: 'put', key, value: payload.subarray(o, o + valueLen) });
      o += valueLen;
    } else {
      return null;
    }
  }
  return ops;
}

export class WalFile {
  private pos = 0;
  private filled: number;

  private constructor(
    private fd: number,
    readonly capacity: number,
    /** Sequence number of the next record appended. */
    private seq: number,
  ) {
    this.filled = fstatSync(fd).size;
  }

  /**
   * Opens (creating) the file and reads the records numbered from `startSeq` on, in order;
   * the next append goes after the last of them.
   */
  static open(path: string, capacity: number, startSeq: number): { wal: WalFile; records: WalOp[][] } {
    const fd = openSync(path, 'a+');
    closeSync(fd);
    const wal = new WalFile(openSync(path, 'r+'), capacity, startSeq);
    const records: WalOp[][] = [];
    try {
      const size = Math.min(wal.filled, capacity);
      const data = Buffer.alloc(size);
      for (let got = 0; got < size; ) {
        const n = readSync(wal.fd, data, got, size - got, got);
        if (n === 0) break;
        got += n;
      }
      let o = 0;
      while (o + HEADER_BYTES <= size) {
        const len = data.readUInt32LE(o);
        const seq = data.readUInt32LE(o + 8) * 0x100000000 + data.readUInt32LE(o + 12);
        if (len === 0 || o + HEADER_BYTES + len > size || seq !== wal.seq) break;
        if (crc32(data.subarray(o + 8, o + HEADER_BYTES + len)) !== data.readUInt32LE(o + 4)) break;
        const ops = decodeOps(data.subarray(o + HEADER_BYTES, o + HEADER_BYTES + len));
        if (!ops) break;
        records.push(ops);
        o += HEADER_BYTES + len;
        wal.seq++;
      }
      wal.pos = o;
    } catch (err) {
      wal.close();
      throw err;
    }
    return { wal, records };
  }

  /** Sequence number the next append gets. */
  get nextSeq(): number {
    return this.seq;
  }

  /** Whether `record` fits after the current position. */
  fits(record: Buffer): boolean {
    return this.pos + record.length <= this.capacity;
  }

  /** Appends `record` (from encodeWalRecord), numbering it; with `sync`, durable on return. */
  append(record: Buffer, sync: boolean): void {
    const end = this.pos + record.length;
    if (end > this.capacity) throw new RangeError('wal record does not fit');
    // Zeros first (then the fdatasync below allocates them once), so that later passes
    // overwrite written blocks and need no metadata.
    while (this.filled < end) {
      const n = Math.min(FILL_STEP, this.capacity - this.filled);
      writeSync(this.fd, ZEROS, 0, n, this.filled);
      this.filled += n;
    }
    record.writeUInt32LE(Math.floor(this.seq / 0x100000000), 8);
    record.writeUInt32LE(this.seq % 0x100000000, 12);
    record.writeUInt32LE(crc32(record.subarray(8)), 4);
    for (let off = 0; off < record.length; ) off += writeSync(this.fd, record, off, record.length - off, this.pos + off);
    if (sync) fdatasyncSync(this.fd);
    this.pos = end;
    this.seq++;
  }

  /** Makes everything appended durable, on libuv's thread pool. */
  sync(): Promise<void> {
    return new Promise((resolve, reject) => fdatasync(this.fd, (err) => (err ? reject(err) : resolve())));
  }

  /** Whether anything was appended since open() or the last restart(). */
  get empty(): boolean {
    return this.pos === 0;
  }

  /** Starts over at offset 0 (the caller has made everything before durable elsewhere). */
  restart(): void {
    this.pos = 0;
  }

  close(): void {
    if (this.fd < 0) return;
    closeSync(this.fd);
    this.fd = -1;
  }
}
