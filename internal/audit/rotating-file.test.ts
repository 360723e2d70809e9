import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backupTimestamp, RotatingFile } from './rotating-file.js';

const line = (i: number, size = 100): Buffer => Buffer.from(`${String(i).padStart(4, '0')}${'x'.repeat(size - 5)}\n`);

/** A clock that moves one second per call, from a fixed start. */
function clock(start = Date.UTC(2026, 10, 25, 21, 0, 0)): () => Date {
  let t = start;
  return () => new Date((t += 1000));
}

describe('RotatingFile', () => {
  it('names backups as lumberjack does', () => {
    expect(backupTimestamp(new Date(Date.UTC(2026, 10, 25, 21, 0, 0, 7)))).toBe('2026-11-25T21-00-00.007');
  });

  it('rotates before a write would pass the size limit, keeps lines whole, creates files 0600', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-rot-'));
    const path = join(dir, 'audit.log');
    const f = await RotatingFile.open(path, { maxSizeBytes: 350, maxBackups: 0, maxAgeDays: 0, now: clock() });
    for (let i = 0; i < 10; i++) await f.write(line(i));
    await f.close();
    const files = readdirSync(dir).sort();
    // 3 lines (300 bytes) per file: 0-2, 3-5, 6-8 in backups, 9 in the live file.
    expect(files).toEqual(['audit-2026-11-25T21-00-01.000.log', 'audit-2026-11-25T21-00-02.000.log', 'audit-2026-11-25T21-00-03.000.log', 'audit.log']);
    expect(readFileSync(join(dir, files[0]!), 'utf8').split('\n').filter(Boolean).map((l) => l.slice(0, 4))).toEqual(['0000', '0001', '0002']);
    expect(readFileSync(path, 'utf8').slice(0, 4)).toBe('0009');
    for (const name of files) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    await expect(RotatingFile.open(path, { maxSizeBytes: 350, maxBackups: 0, maxAgeDays: 0 }).then((g) => g.write(line(0, 400)))).rejects.toThrow(/exceeds maximum file size 350/);
  });

  it('appends to an existing file and counts its size', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-rot-'));
    const path = join(dir, 'audit.log');
    writeFileSync(path, line(0, 300));
    const f = await RotatingFile.open(path, { maxSizeBytes: 350, maxBackups: 0, maxAgeDays: 0, now: clock() });
    await f.write(line(1));
    await f.close();
    expect(readdirSync(dir)).toHaveLength(2);
    expect(readFileSync(path, 'utf8').slice(0, 4)).toBe('0001');
  });

  it('keeps at most maxBackups backups, the newest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-rot-'));
    const f = await RotatingFile.open(join(dir, 'a.log'), { maxSizeBytes: 150, maxBackups: 2, maxAgeDays: 0, now: clock() });
    for (let i = 0; i < 6; i++) await f.write(line(i));
    await f.close();
    // Each write after the first rotates: 5 rotations, 2 backups kept (lines 3 and 4).
    const files = readdirSync(dir).sort();
    expect(files).toEqual(['a-2026-11-25T21-00-04.000.log', 'a-2026-11-25T21-00-05.000.log', 'a.log']);
    expect(readFileSync(join(dir, files[1]!), 'utf8').slice(0, 4)).toBe('0004');
  });

  it('deletes backups older than maxAgeDays (by the time in their names), leaving other files alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-rot-'));
    const now = Date.UTC(2026, 10, 25, 21, 0, 0);
    writeFileSync(join(dir, `a-${backupTimestamp(new Date(now - 3 * 86_400_000))}.log`), 'old\n');
    writeFileSync(join(dir, `a-${backupTimestamp(new Date(now - 1 * 86_400_000))}.log`), 'recent\n');
    writeFileSync(join(dir, 'a-notes.log'), 'not a backup\n');
    const f = await RotatingFile.open(join(dir, 'a.log'), { maxSizeBytes: 150, maxBackups: 0, maxAgeDays: 2, now: clock(now) });
    await f.write(line(0));
    await f.write(line(1));
    await f.close();
    expect(readdirSync(dir).sort()).toEqual(['a-2026-11-24T21-00-00.000.log', 'a-2026-11-25T21-00-01.000.log', 'a-notes.log', 'a.log']);
  });
});
