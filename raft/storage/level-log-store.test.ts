// Runs the DurableLogStore conformance suite against memory-level and real LevelDB, plus
// checks specific to the on-disk backend (key order, lock, corruption detection).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { MemoryLevel } from 'memory-level';
import type { AbstractLevel } from 'abstract-level';
import { describe, expect, it } from 'vitest';
import { encodeEntry } from '../codec/raft-codec.js';
import { entryKey, indexOfEntryKey } from './key-layout.js';
import { LevelLogStore, createLevelLogStore } from './level-log-store.js';
import { isLogStoreError } from './log-store.js';
import { ent, runLogStoreSuite } from './log-store-suite.js';

type Db = AbstractLevel<Uint8Array, Uint8Array, Uint8Array>;

runLogStoreSuite('memory-level', async () => {
  const db = new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' }) as unknown as Db;
  return { store: () => new LevelLogStore(db), cleanup: async () => undefined };
});

runLogStoreSuite('classic-level', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'raft-log-'));
  return { store: () => createLevelLogStore(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

describe('key layout', () => {
  it('orders entry keys by index, bytewise', () => {
    const indexes = [0, 1, 255, 256, 65535, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER];
    const keys = indexes.map(entryKey);
    const cmp = (a: Uint8Array, b: Uint8Array): number => Buffer.compare(Buffer.from(a), Buffer.from(b));
    for (let i = 1; i < keys.length; i++) expect(cmp(keys[i - 1]!, keys[i]!)).toBeLessThan(0);
    for (const i of indexes) expect(indexOfEntryKey(entryKey(i))).toBe(i);
  });
});

describe('LevelDB backend', () => {
  it('refuses a second opener while the first holds the lock', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raft-log-'));
    const a = createLevelLogStore(dir);
    await a.open();
    const b = createLevelLogStore(dir);
    const err = await b.open().then(() => null, (e: unknown) => e);
    expect(isLogStoreError(err, 'LOG_IO')).toBe(true);
    await a.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reports a gap written behind its back as LOG_CORRUPT', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raft-log-'));
    const s = createLevelLogStore(dir);
    await s.open();
    await s.save({ entries: [ent(1, 1), ent(2, 1)] });
    await s.close();
    const raw = new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
    await raw.put(entryKey(4), encodeEntry(ent(4, 1)));
    await raw.close();
    const err = await createLevelLogStore(dir).open().then(() => null, (e: unknown) => e);
    expect(isLogStoreError(err, 'LOG_CORRUPT')).toBe(true);
    await rm(dir, { recursive: true, force: true });
  });
});
