import { describe, expect, it } from 'vitest';
import { cloneJson } from './plain-json.js';

describe('cloneJson', () => {
  const deep = (levels: number): unknown => {
    let v: unknown = { leaf: true };
    for (let i = 0; i < levels; i++) v = i % 2 ? { a: v } : [v];
    return v;
  };
  it.each([
    ['a pod', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { a: '1' } }, spec: { containers: [{ name: 'c', ports: [{ containerPort: 80 }] }] } }],
    ['primitives', { s: 'x', n: -0, f: 1.5, t: true, z: null, e: [], o: {} }],
    ['a top-level array', [1, 'two', { three: [3] }]],
    ['a string', 'text'],
    ['null', null],
    ['a __proto__ member', JSON.parse('{"__proto__": {"polluted": true}, "b": 1}')],
    ['byte arrays and dates', { raw: new Uint8Array([1, 2, 3]), at: new Date(0) }],
    ['2,000 levels (deeper than the copy recurses itself)', deep(2_000)],
  ])('copies %s as structuredClone does', (_what, value) => {
    const copy = cloneJson(value);
    expect(copy).toStrictEqual(structuredClone(value));
  });

  it('shares nothing with the original', () => {
    const original = { spec: { containers: [{ name: 'c', args: ['a'] }] }, raw: new Uint8Array([1]) };
    const copy = cloneJson(original);
    copy.spec.containers[0]!.args.push('b');
    copy.spec.containers[0]!.name = 'd';
    copy.raw[0] = 9;
    expect(original).toStrictEqual({ spec: { containers: [{ name: 'c', args: ['a'] }] }, raw: new Uint8Array([1]) });
  });

  it('keeps a __proto__ member as data', () => {
    const copy = cloneJson(JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
