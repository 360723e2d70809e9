// removed-members: the raft directory's file of removed members round-trips, and a missing or
// unreadable file is an empty map (it only brings back the behaviour before the file existed).

import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REMOVED_MEMBERS_FILE_NAME, removedMembersFile } from './removed-members.js';

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'removed-members-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('removedMembersFile', () => {
  it('saves and loads the map, replacing it whole, and leaves no temporary file', async () => {
    const f = removedMembersFile(dir);
    expect(await f.load()).toEqual(new Map());
    await f.save(new Map([[7, 120], [4_000_000_000, 5]]));
    expect(await removedMembersFile(dir).load()).toEqual(new Map([[7, 120], [4_000_000_000, 5]]));
    await f.save(new Map([[9, 130]]));
    expect(await f.load()).toEqual(new Map([[9, 130]]));
    expect(await readdir(dir)).toEqual([REMOVED_MEMBERS_FILE_NAME]);
  });

  it.each([
    { name: 'not JSON', text: '{"removed": [' },
    { name: 'no list', text: '{"other": 1}' },
    { name: 'null', text: 'null' },
  ])('reads a file that is $name as empty', async ({ text }) => {
    await writeFile(join(dir, REMOVED_MEMBERS_FILE_NAME), text);
    expect(await removedMembersFile(dir).load()).toEqual(new Map());
  });

  it('leaves out entries that are not a positive id and index', async () => {
    await writeFile(join(dir, REMOVED_MEMBERS_FILE_NAME), JSON.stringify({ removed: [{ id: 3, index: 10 }, { id: 0, index: 4 }, { id: 5, index: -1 }, { id: '6', index: 2 }, null] }));
    expect(await removedMembersFile(dir).load()).toEqual(new Map([[3, 10]]));
  });
});
