// internal/config/reloadable-files owns the reload mechanism of the configuration files every
// replica must load identically (the structured authentication and authorization
// configuration): it reads them, hashes what it read, notices changes (polling the files'
// metadata, which survives editors that replace a file and ConfigMap volumes that swap a
// symlink), and tells its listeners. The formats themselves belong to their consumers.
// Imports: nothing from the project.

import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';

export interface LoadedFiles {
  /** `sha256:<hex>` over every file's role and content; `none` when no file is configured. */
  hash: string;
  /** Contents by role (`authentication`, `authorization`); absent when not configured. */
  contents: ReadonlyMap<string, Buffer>;
  /** Why a configured file could not be read (the previous contents stay in force). */
  error?: string;
}

export class ReloadableFiles {
  private current: LoadedFiles;
  private readonly listeners = new Set<(loaded: LoadedFiles) => void>();
  private timer: NodeJS.Timeout | undefined;
  private stamp = '';

  /** `files`: role → path. Reads them now; a file that cannot be read at start is an error. */
  constructor(private readonly files: ReadonlyMap<string, string>) {
    const first = this.read();
    if (first.error) throw new Error(first.error);
    this.current = first;
    this.stamp = this.statStamp();
  }

  get loaded(): LoadedFiles {
    return this.current;
  }

  onChange(listener: (loaded: LoadedFiles) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts polling every `intervalMs`. */
  watch(intervalMs = 1000): void {
    if (this.timer || this.files.size === 0) return;
    this.timer = setInterval(() => this.check(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Re-reads when a file's metadata changed, or always with `force` (a periodic re-check that
   * does not trust the metadata, as upstream's 60 s reload); exposed for tests and SIGHUP-style triggers.
   */
  check(force = false): void {
    const stamp = this.statStamp();
    if (stamp === this.stamp && !force) return;
    this.stamp = stamp;
    const next = this.read();
    if (next.error) {
      // Keep serving with what was loaded; the error is reported, not applied.
      this.current = { ...this.current, error: next.error };
      return;
    }
    const changed = next.hash !== this.current.hash;
    this.current = next;
    if (changed) for (const l of this.listeners) l(next);
  }

  private statStamp(): string {
    return [...this.files.values()]
      .map((p) => {
        try {
          const s = statSync(p);
          return `${p}:${s.mtimeMs}:${s.size}:${s.ino}`;
        } catch {
          return `${p}:missing`;
        }
      })
      .join('|');
  }

  private read(): LoadedFiles {
    const contents = new Map<string, Buffer>();
    if (this.files.size === 0) return { hash: 'none', contents };
    const h = createHash('sha256');
    for (const [role, path] of [...this.files].sort(([a], [b]) => (a < b ? -1 : 1))) {
      let data: Buffer;
      try {
        data = readFileSync(path);
      } catch (e) {
        return { hash: this.current?.hash ?? 'none', contents, error: `cannot read the ${role} configuration ${path}: ${(e as Error).message}` };
      }
      contents.set(role, data);
      h.update(`${role}\0${data.length}\0`).update(data);
    }
    return { hash: `sha256:${h.digest('hex')}`, contents };
  }
}
