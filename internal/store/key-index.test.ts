import { describe, it, expect } from 'vitest';
import { KeyIndex } from './key-index.js';

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
});
