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

  // Enough keys for many chunks (CHUNK is 512), splits and emptied chunks included, against a
  // plain sorted array; seeded so a failure repeats.
  it.each([1, 2, 3])('agrees with a sorted array over seeded adds, deletes, spans and positions (seed %i)', (seed) => {
    let state = seed * 2654435761;
    const rand = (n: number): number => {
      state = (Math.imul(state ^ (state >>> 15), 2246822507) + 0x6d2b79f5) >>> 0;
      return state % n;
    };
    const s = new SortedKeys();
    const ref = new Set<string>();
    const name = (): string => `/r/${['pods', 'nodes', 'secrets'][rand(3)]}/ns-${rand(4)}/k-${rand(6000)}`;
    const check = (): void => {
      const sorted = [...ref].sort();
      expect(s.size).toBe(sorted.length);
      for (let probe = 0; probe < 8; probe++) {
        const prefix = ['', '/r/', '/r/pods/', `/r/nodes/ns-${rand(4)}/`, `/r/secrets/ns-${rand(4)}/k-${rand(60)}`][rand(5)]!;
        const after = rand(2) ? name() : undefined;
        const want = sorted.filter((k) => k.startsWith(prefix) && (after === undefined || after < prefix || k > after));
        const { start, end } = s.span(prefix, after);
        expect(end - start).toBe(want.length);
        for (let i = start; i < end; i += 1 + rand(40)) expect(s.at(i)).toBe(want[i - start]);
        expect([...s.range(prefix, after)]).toEqual(want);
      }
    };
    for (let round = 0; round < 6; round++) {
      for (let op = 0; op < 4000; op++) {
        const k = name();
        if (round % 3 === 2 && rand(3) > 0) {
          s.delete(k);
          ref.delete(k);
        } else {
          s.add(k);
          ref.add(k);
        }
      }
      check();
    }
    for (const k of [...ref]) s.delete(k);
    expect(s.size).toBe(0);
    expect([...s.range('')]).toEqual([]);
  });
});
