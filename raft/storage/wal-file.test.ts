// Tests of the redo log file: what a reader takes back after a torn or corrupted write, after
// the file was started over, and from where the next record goes.

import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WalFile, encodeWalRecord, type WalOp } from './wal-file.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const put = (k: string, v: string): WalOp => ({ type: 'put', key: bytes(k), value: bytes(v) });
const del = (k: string): WalOp => ({ type: 'del', key: bytes(k) });
const RECORDS: WalOp[][] = [[put('a', '1')], [put('b', '2'), del('a')], [put('c', '')], [del('b'), put('d', 'x'.repeat(300))]];
/** Header (16 bytes) and payload of RECORDS[i], to find offsets. */
const sizeOf = (i: number): number => encodeWalRecord(RECORDS[i]!).length;
const show = (records: WalOp[][]): string[][] =>
  records.map((ops) => ops.map((op) => `${op.type} ${Buffer.from(op.key).toString()}${op.value ? `=${Buffer.from(op.value).toString()}` : ''}`));

async function withFile(fn: (path: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'raft-wal-file-'));
  try {
    await fn(join(dir, 'wal'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function writeAll(path: string, startSeq: number, records: WalOp[][]): void {
  const { wal } = WalFile.open(path, 1 << 16, startSeq);
  for (const ops of records) wal.append(encodeWalRecord(ops), true);
  wal.close();
}

describe('WalFile', () => {
  it('reads back every record, in order, and appends after the last', async () => {
    await withFile(async (path) => {
      writeAll(path, 7, RECORDS.slice(0, 2));
      const first = WalFile.open(path, 1 << 16, 7);
      expect(show(first.records)).toEqual(show(RECORDS.slice(0, 2)));
      expect(first.wal.nextSeq).toBe(9);
      first.wal.append(encodeWalRecord(RECORDS[2]!), true);
      first.wal.close();
      const again = WalFile.open(path, 1 << 16, 7);
      expect(show(again.records)).toEqual(show(RECORDS.slice(0, 3)));
      again.wal.close();
    });
  });

  // Where the damage is, and how many records are still read in front of it.
  const damage: { name: string; at: (path: string) => Promise<void>; left: number }[] = [
    { name: 'a flipped payload byte in the third record', at: (p) => flip(p, sizeOf(0) + sizeOf(1) + 20), left: 2 },
    { name: 'a flipped length in the second record', at: (p) => flip(p, sizeOf(0)), left: 1 },
    { name: 'a flipped sequence number in the first record', at: (p) => flip(p, 12), left: 0 },
    { name: 'the last record cut short (zeros where its end was)', at: (p) => zero(p, sizeOf(0) + sizeOf(1) + sizeOf(2) + 40, 300), left: 3 },
  ];
  for (const d of damage) {
    it(`stops at ${d.name}`, async () => {
      await withFile(async (path) => {
        writeAll(path, 0, RECORDS);
        await d.at(path);
        const { wal, records } = WalFile.open(path, 1 << 16, 0);
        expect(show(records)).toEqual(show(RECORDS.slice(0, d.left)));
        wal.close();
      });
    });
  }

  it('does not read what a previous pass left after the records of this one', async () => {
    await withFile(async (path) => {
      writeAll(path, 0, RECORDS);
      // Started over at sequence number 4 (as a checkpoint records it), one short record.
      const { wal } = WalFile.open(path, 1 << 16, 4);
      expect(wal.nextSeq).toBe(4);
      wal.append(encodeWalRecord([put('z', '9')]), true);
      wal.close();
      const again = WalFile.open(path, 1 << 16, 4);
      expect(show(again.records)).toEqual([['put z=9']]);
      again.wal.close();
      // Read from the old start, nothing past the new record is taken either.
      expect(WalFile.open(path, 1 << 16, 0).records).toEqual([]);
    });
  });

  it('refuses a record beyond its capacity and zero-fills ahead of what it writes', async () => {
    await withFile(async (path) => {
      const { wal } = WalFile.open(path, 100, 0);
      expect(wal.fits(encodeWalRecord([put('k', 'v'.repeat(100))]))).toBe(false);
      const small = encodeWalRecord([put('k', 'v')]);
      expect(wal.fits(small)).toBe(true);
      wal.append(small, true);
      wal.close();
      expect((await readFile(path)).length).toBe(100);
    });
  });
});

async function flip(path: string, offset: number): Promise<void> {
  const fh = await open(path, 'r+');
  const b = Buffer.alloc(1);
  await fh.read(b, 0, 1, offset);
  b[0] = b[0]! ^ 0x5a;
  await fh.write(b, 0, 1, offset);
  await fh.close();
}

async function zero(path: string, offset: number, length: number): Promise<void> {
  const fh = await open(path, 'r+');
  await fh.write(Buffer.alloc(length), 0, length, offset);
  await fh.close();
}
