// raft/storage/removed-members.ts owns the small file in a raft directory that remembers which
// members were removed from the cluster and at which log index (RaftNodeOptions.removedMembers):
// replaying the log rebuilds the removals after the latest snapshot, this file keeps those a
// snapshot folded in. It is written whole (temp file, fsync, rename, directory fsync) each time
// the map changes, which is once per membership change. It is a diagnostic aid, not consensus
// state: a write lost in a crash only means a removed member is not told so by this one (the
// behaviour before the file existed), so a file that does not parse is treated as empty.

import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { NodeId } from '../types.js';

export const REMOVED_MEMBERS_FILE_NAME = 'removed-members.json';

/** Where RaftNode keeps its removed members (member id → log index of the applied removal). */
export interface RemovedMembersStore {
  /** The map as last saved; empty when nothing was. */
  load(): Promise<Map<NodeId, number>>;
  /** Replaces the saved map; durable when it resolves. */
  save(removed: ReadonlyMap<NodeId, number>): Promise<void>;
}

/** The removed members of the raft directory `dir`, in REMOVED_MEMBERS_FILE_NAME. */
export function removedMembersFile(dir: string): RemovedMembersStore {
  const path = join(dir, REMOVED_MEMBERS_FILE_NAME);
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
        throw err;
      }
      return parseRemoved(text);
    },
    async save(removed) {
      const tmp = `${path}.tmp`;
      const body = JSON.stringify({ removed: [...removed].map(([id, index]) => ({ id, index })) });
      const fh = await open(tmp, 'w', 0o600);
      try {
        await fh.writeFile(body);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, path);
      const d = await open(dir, 'r');
      try {
        await d.sync();
      } finally {
        await d.close();
      }
    },
  };
}

/** The map a file holds; entries that are not a positive id and index are left out, and so is a file that is not JSON. */
function parseRemoved(text: string): Map<NodeId, number> {
  const out = new Map<NodeId, number>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return out;
  }
  const list = (parsed as { removed?: unknown } | null)?.removed;
  if (!Array.isArray(list)) return out;
  for (const e of list as unknown[]) {
    const { id, index } = (e ?? {}) as Record<string, unknown>;
    if (typeof id === 'number' && Number.isSafeInteger(id) && id > 0 && typeof index === 'number' && Number.isSafeInteger(index) && index > 0) out.set(id, index);
  }
  return out;
}

/** An in-memory RemovedMembersStore (tests; a member whose removals need not survive a restart). */
export function memoryRemovedMembers(): RemovedMembersStore & { saved: Map<NodeId, number>; saves: number } {
  const store = {
    saved: new Map<NodeId, number>(),
    saves: 0,
    async load() {
      return new Map(store.saved);
    },
    async save(removed: ReadonlyMap<NodeId, number>) {
      store.saved = new Map(removed);
      store.saves++;
    },
  };
  return store;
}
