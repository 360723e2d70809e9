import { describe, it, expect } from 'vitest';
import { KeyIndex, type Revision } from './key-index.js';

describe('KeyIndex', () => {
  it('answers the visible revision at any point in a key history', () => {
    const idx = new KeyIndex();
    idx.put('/a', 2);
    idx.put('/a', 5);
    idx.tombstone('/a', 7);
    idx.put('/a', 9);
    const at = (rev: number) => idx.visible('/a', rev)?.revision;
    expect([at(1), at(2), at(4), at(5), at(6), at(7), at(8), at(9), at(100)]).toEqual([
      undefined, 2, 2, 5, 5, undefined, undefined, 9, 9,
    ]);
    expect(idx.visible('/a', 5)).toMatchObject({ createRevision: 2, version: 2 });
    expect(idx.visible('/a', 9)).toMatchObject({ createRevision: 9, version: 1 });
  });

  it('iterates keys by prefix in order, after a key', () => {
    const idx = new KeyIndex();
    for (const k of ['/x/b', '/x/a', '/y/a', '/x/c', '/x']) idx.put(k, 1);
    expect([...idx.keys('/x/')]).toEqual(['/x/a', '/x/b', '/x/c']);
    expect([...idx.keys('/x/', '/x/a')]).toEqual(['/x/b', '/x/c']);
    expect([...idx.keys('/x/', '/a')]).toEqual(['/x/a', '/x/b', '/x/c']);
  });

  it('compaction keeps the newest put at or below the revision and drops dead keys', () => {
    const idx = new KeyIndex();
    idx.put('/a', 1);
    idx.put('/a', 3);
    idx.put('/b', 2);
    idx.tombstone('/b', 4);
    idx.put('/c', 6);
    const dropped: string[] = [];
    idx.compact(5, (k, r) => dropped.push(`${k}@${r}`));
    expect(dropped.sort()).toEqual(['/a@1', '/b@2', '/b@4']);
    expect(idx.history('/a').map((r) => r.revision)).toEqual([3]);
    expect([...idx.keys('/')]).toEqual(['/a', '/c']);
  });

  it('restoreFirst then restore (the open\'s scan) builds what restore alone builds', () => {
    const records: [string, Revision][] = [
      ['/a', { revision: 2, tombstone: false, createRevision: 2, version: 1 }],
      ['/a', { revision: 5, tombstone: false, createRevision: 2, version: 2 }],
      ['/b', { revision: 3, tombstone: false, createRevision: 3, version: 1 }],
      ['/c', { revision: 4, tombstone: false, createRevision: 1, version: 3 }],
      ['/c', { revision: 6, tombstone: true, createRevision: 1, version: 0 }],
      ['/c', { revision: 7, tombstone: false, createRevision: 7, version: 1 }],
    ];
    const plain = new KeyIndex();
    const hinted = new KeyIndex();
    let previous: string | undefined;
    for (const [key, r] of records) {
      plain.restore(key, r);
      if (key !== previous) hinted.restoreFirst(key, r);
      else hinted.restore(key, r);
      previous = key;
    }
    for (const key of ['/a', '/b', '/c']) expect(hinted.history(key)).toEqual(plain.history(key));
    expect([...hinted.keys('/')]).toEqual(['/a', '/b', '/c']);
    expect(hinted.size).toBe(3);
  });

  it('a key with one retained revision (created, restored or compacted to one) answers as one with many', () => {
    const idx = new KeyIndex();
    idx.put('/one', 3);
    expect([idx.visible('/one', 2), idx.visible('/one', 3)?.revision, idx.latest('/one')?.version]).toEqual([undefined, 3, 1]);
    expect(idx.history('/one').map((r) => r.revision)).toEqual([3]);
    // Growing from one: the generation continues, a tombstone ends it.
    expect(idx.put('/one', 5)).toMatchObject({ createRevision: 3, version: 2 });
    expect(idx.tombstone('/one', 6)).toBe(true);
    expect(idx.tombstone('/one', 7)).toBe(false);
    expect(idx.history('/one').map((r) => `${r.revision}${r.tombstone ? 'x' : ''}`)).toEqual(['3', '5', '6x']);

    // Restored alone: a put and a lone tombstone (its put compacted away before the restart).
    idx.restore('/r', { revision: 4, tombstone: false, createRevision: 2, version: 3 });
    idx.restore('/t', { revision: 5, tombstone: true, createRevision: 1, version: 0 });
    expect(idx.visible('/r', 10)).toMatchObject({ createRevision: 2, version: 3 });
    expect(idx.visible('/t', 10)).toBeUndefined();
    expect(idx.latest('/t')?.tombstone).toBe(true);
    expect(idx.tombstone('/t', 8)).toBe(false);
    expect(idx.put('/t', 9)).toMatchObject({ createRevision: 9, version: 1 });
    idx.restore('/r', { revision: 7, tombstone: false, createRevision: 2, version: 4 });
    expect(idx.visible('/r', 6)?.revision).toBe(4);
    expect(idx.visible('/r', 7)?.revision).toBe(7);

    // Compaction: a lone put stays, a lone tombstone at or below goes; history down to one stays readable.
    idx.restore('/u', { revision: 2, tombstone: true, createRevision: 1, version: 0 });
    idx.restore('/w', { revision: 20, tombstone: true, createRevision: 1, version: 0 });
    const dropped: string[] = [];
    idx.compact(7, (k, r) => dropped.push(`${k}@${r}`));
    expect(dropped.sort()).toEqual(['/one@3', '/one@5', '/one@6', '/r@4', '/t@5', '/u@2']);
    expect([...idx.keys('/')]).toEqual(['/r', '/t', '/w']);
    expect(idx.history('/r').map((r) => r.revision)).toEqual([7]);
    expect(idx.visible('/r', 7)).toMatchObject({ createRevision: 2, version: 4 });
    expect(idx.put('/r', 11)).toMatchObject({ createRevision: 2, version: 5 });
    expect(idx.visible('/r', 10)?.revision).toBe(7);
    expect(idx.visible('/w', 30)).toBeUndefined();
  });

  it.each([
    ['put', (idx: KeyIndex) => idx.put('/c', 4)],
    ['restored', (idx: KeyIndex) => idx.restore('/c', { revision: 4, tombstone: false, createRevision: 4, version: 1 })],
    [
      'compacted down to its creation',
      (idx: KeyIndex) => {
        idx.restore('/c', { revision: 2, tombstone: true, createRevision: 1, version: 0 });
        idx.restore('/c', { revision: 4, tombstone: false, createRevision: 4, version: 1 });
        idx.compact(4, () => {});
      },
    ],
  ])('a key whose one revision is its creation (%s) answers every read as the full form, and grows from it', (_, make) => {
    const idx = new KeyIndex();
    make(idx);
    const creation = { revision: 4, tombstone: false, createRevision: 4, version: 1 };
    expect([idx.visible('/c', 3), idx.visible('/c', 4), idx.latest('/c'), idx.history('/c')]).toEqual([undefined, creation, creation, [creation]]);
    const dropped: string[] = [];
    idx.compact(10, (k, r) => dropped.push(`${k}@${r}`));
    expect(dropped).toEqual([]);
    expect(idx.put('/c', 6)).toEqual({ revision: 6, tombstone: false, createRevision: 4, version: 2 });
    expect(idx.history('/c').map((r) => r.revision)).toEqual([4, 6]);
    expect(idx.tombstone('/c', 8)).toBe(true);
    expect(idx.visible('/c', 8)).toBeUndefined();
    expect(idx.visible('/c', 7)).toMatchObject({ revision: 6, version: 2 });
  });
});
