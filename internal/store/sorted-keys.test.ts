import { describe, expect, it } from 'vitest';
import { SortedKeys } from './sorted-keys.js';

function keysOf(s: SortedKeys): string[] {
  return [...s.range('')];
}

describe('SortedKeys', () => {
  const cases: Array<{ name: string; adds: string[] }> = [
    { name: 'ascending (a load)', adds: ['a', 'b', 'c', 'd'] },
    { name: 'descending', adds: ['d', 'c', 'b', 'a'] },
    { name: 'ascending then one before the last', adds: ['a', 'c', 'd', 'b'] },
    { name: 'repeats of the last and of earlier keys', adds: ['a', 'b', 'b', 'a', 'c', 'c'] },
    { name: 'prefix of the last key', adds: ['/r/pods/ns/ab', '/r/pods/ns/a', '/r/pods/ns/abc'] },
  ];
  it.each(cases)('keeps keys sorted and unique: $name', ({ adds }) => {
    const s = new SortedKeys();
    for (const k of adds) s.add(k);
    expect(keysOf(s)).toEqual([...new Set(adds)].sort());
    expect(s.size).toBe(new Set(adds).size);
  });

  it('ranges over a prefix after an ascending load and later inserts', () => {
    const s = new SortedKeys();
    for (let i = 0; i < 100; i++) s.add(`/p/${String(i).padStart(3, '0')}`);
    s.add('/o/x');
    s.add('/q/x');
    s.delete('/p/050');
    expect([...s.range('/p/')].length).toBe(99);
    expect([...s.range('/p/', '/p/097')]).toEqual(['/p/098', '/p/099']);
    expect(keysOf(s)[0]).toBe('/o/x');
    expect(keysOf(s).at(-1)).toBe('/q/x');
  });
});
