import { describe, expect, it } from 'vitest';
import { BoundedMap } from './bounded-map.js';

describe('BoundedMap', () => {
  it('forgets the key inserted longest ago once full', () => {
    const m = new BoundedMap<string, number>(3);
    for (const [k, v] of [['a', 1], ['b', 2], ['c', 3], ['d', 4]] as const) m.set(k, v);
    expect([...m.keys()]).toEqual(['b', 'c', 'd']);
    expect(m.get('a')).toBeUndefined();
  });

  it('replacing a held key evicts nothing and keeps its place', () => {
    const m = new BoundedMap<string, number>(2);
    m.set('a', 1).set('b', 2).set('a', 3);
    expect([...m]).toEqual([['a', 3], ['b', 2]]);
    m.set('c', 4);
    expect([...m.keys()]).toEqual(['b', 'c']);
  });

  it('never holds more than its limit', () => {
    const m = new BoundedMap<number, number>(5);
    for (let i = 0; i < 1000; i++) m.set(i, i);
    expect(m.size).toBe(5);
    expect([...m.keys()]).toEqual([995, 996, 997, 998, 999]);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses the limit %s', (limit) => {
    expect(() => new BoundedMap(limit)).toThrow(RangeError);
  });
});
