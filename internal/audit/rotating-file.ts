// internal/audit/rotating-file owns where audit lines land: a file rotated by size with
// timestamped backups pruned by count and age (the rules of the lumberjack logger upstream's
// log backend uses: a write that would pass the size limit first renames the file to
// `<name>-<UTC time 2006-01-02T15-04-05.000><ext>` and starts a new one; backups beyond
// --audit-log-maxbackup or older than --audit-log-maxage days are deleted), or standard output.
// Files are created 0600 (audit events hold request bodies). Imports: nothing from the project.

import { constants, promises as fsp } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

/** Where serialized events are written, in order; one write at a time. */
export interface LineSink {
  write(chunk: Buffer): Promise<void>;
  close(): Promise<void>;
}

export interface RotationOptions {
  /** Bytes before a rotation; 0 = lumberjack's default of 100 MiB. */
  maxSizeBytes: number;
  /** Backups kept; 0 = all (subject to maxAgeDays). */
  maxBackups: number;
  /** Days a backup is kept, by the time in its name; 0 = no age limit. */
  maxAgeDays: number;
  now?: () => Date;
}

const DEFAULT_MAX_BYTES = 100 * 1024 * 1024;
const BACKUP_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/;

/** `2026-11-25T21-00-00.000`: lumberjack's backup time format, in UTC. */
export function backupTimestamp(d: Date): string {
  return d.toISOString().replace(/:/g, '-').replace(/Z$/, '');
}

export class RotatingFile implements LineSink {
  private size = 0;
  private readonly maxBytes: number;
  private readonly now: () => Date;

  private constructor(
    private readonly path: string,
    private handle: fsp.FileHandle,
    /** Only regular files rotate (a FIFO or device is written as it is). */
    private readonly regular: boolean,
    private readonly opts: RotationOptions,
  ) {
    this.maxBytes = opts.maxSizeBytes > 0 ? opts.maxSizeBytes : DEFAULT_MAX_BYTES;
    this.now = opts.now ?? (() => new Date());
  }

  static async open(path: string, opts: RotationOptions): Promise<RotatingFile> {
    await fsp.mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const handle = await fsp.open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
    const st = await handle.stat();
    const file = new RotatingFile(path, handle, st.isFile(), opts);
    file.size = st.isFile() ? st.size : 0;
    return file;
  }

  /** Writes whole lines; rotates first when they would pass the limit. A chunk larger than the limit is refused. */
  async write(chunk: Buffer): Promise<void> {
    if (this.regular) {
      if (chunk.length > this.maxBytes) throw new Error(`write length ${chunk.length} exceeds maximum file size ${this.maxBytes}`);
      if (this.size + chunk.length > this.maxBytes) await this.rotate();
    }
    let off = 0;
    while (off < chunk.length) {
      const { bytesWritten } = await this.handle.write(chunk, off, chunk.length - off);
      off += bytesWritten;
    }
    this.size += chunk.length;
  }

  /** The size limit, so a writer can cut batches at it. */
  get limit(): number {
    return this.regular ? this.maxBytes : Infinity;
  }

  /** Bytes in the current file. */
  get written(): number {
    return this.size;
  }

  async close(): Promise<void> {
    await this.handle.close();
  }

  private async rotate(): Promise<void> {
    await this.handle.close();
    const dir = dirname(this.path);
    const ext = extname(this.path);
    const prefix = basename(this.path, ext);
    let when = this.now();
    let backup = join(dir, `${prefix}-${backupTimestamp(when)}${ext}`);
    // Two rotations within a millisecond would share a name: the later takes the next free one.
    while (await exists(backup)) {
      when = new Date(when.getTime() + 1);
      backup = join(dir, `${prefix}-${backupTimestamp(when)}${ext}`);
    }
    await fsp.rename(this.path, backup);
    this.handle = await fsp.open(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_TRUNC, 0o600);
    this.size = 0;
    await this.prune(dir, prefix, ext);
  }

  private async prune(dir: string, prefix: string, ext: string): Promise<void> {
    const { maxBackups, maxAgeDays } = this.opts;
    if (maxBackups <= 0 && maxAgeDays <= 0) return;
    const backups: Array<{ name: string; time: number }> = [];
    for (const name of await fsp.readdir(dir)) {
      if (!name.startsWith(`${prefix}-`) || !name.endsWith(ext)) continue;
      const m = BACKUP_TIME.exec(name.slice(prefix.length + 1, name.length - ext.length));
      if (!m) continue;
      backups.push({ name, time: Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, +m[7]!) });
    }
    backups.sort((a, b) => b.time - a.time);
    const cutoff = maxAgeDays > 0 ? this.now().getTime() - maxAgeDays * 24 * 3600 * 1000 : -Infinity;
    const remove = backups.filter((b, i) => (maxBackups > 0 && i >= maxBackups) || b.time < cutoff);
    await Promise.all(remove.map((b) => fsp.rm(join(dir, b.name), { force: true })));
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await fsp.access(path);
    return true;
  } catch {
    return false;
  }
}

/** Standard output (`--audit-log-path=-`), with its back-pressure. */
export class StdoutSink implements LineSink {
  write(chunk: Buffer): Promise<void> {
    return new Promise((resolve, reject) => process.stdout.write(chunk, (err) => (err ? reject(err) : resolve())));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}
