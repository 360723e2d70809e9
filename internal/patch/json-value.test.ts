// The plain-JSON helpers: copyMembers gives a shallow copy with the members in order (one named
// __proto__ included, as a member), setMember adds a member without touching a prototype.
import { describe, expect, it } from 'vitest';
import { copyMembers, setMember, type JsonObject } from './json-value.js';

describe('copyMembers and setMember', () => {
  it('copies the members in order, shallowly, and leaves the source alone', () => {
    const inner = { x: 1 };
    const src: JsonObject = { b: 1, a: inner, c: null };
    const copy = copyMembers(src);
    expect(Object.keys(copy)).toEqual(['b', 'a', 'c']);
    expect(copy.a).toBe(inner);
    setMember(copy, 'd', 'new');
    expect(Object.keys(copy)).toEqual(['b', 'a', 'c', 'd']);
    expect(src).toEqual({ b: 1, a: { x: 1 }, c: null });
  });

  it('keeps a member named __proto__ a member, never the prototype', () => {
    const src = JSON.parse('{"__proto__": {"polluted": true}, "k": 1}') as JsonObject;
    const copy = copyMembers(src);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'k']);
    expect((copy as Record<string, unknown>).polluted).toBeUndefined();
    const target: JsonObject = {};
    setMember(target, '__proto__', { polluted: true });
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect(JSON.stringify(target)).toBe('{"__proto__":{"polluted":true}}');
  });
});
