import { describe, expect, it } from 'vitest';
import { StatusError } from '../apierrors/status.js';
import type { JsonValue } from './json-value.js';
import { applyMergePatch } from './merge-patch.js';

describe('applyMergePatch (RFC 7386)', () => {
  const cases: Array<[string, JsonValue, unknown, JsonValue]> = [
    ['adds a member', { a: 1 }, { b: 2 }, { a: 1, b: 2 }],
    ['replaces a scalar', { a: 1 }, { a: 'x' }, { a: 'x' }],
    ['null deletes', { a: 1, b: 2 }, { a: null }, { b: 2 }],
    ['null on a missing member is a no-op', { a: 1 }, { z: null }, { a: 1 }],
    ['objects merge recursively', { m: { a: 1, b: 2 } }, { m: { b: 3, c: 4 } }, { m: { a: 1, b: 3, c: 4 } }],
    ['nested null deletes', { m: { a: 1, b: 2 } }, { m: { a: null } }, { m: { b: 2 } }],
    ['arrays replace', { l: [1, 2, 3] }, { l: [4] }, { l: [4] }],
    ['an object replaces a scalar', { a: 1 }, { a: { b: 1 } }, { a: { b: 1 } }],
    ['a scalar replaces an object', { a: { b: 1 } }, { a: 1 }, { a: 1 }],
    ['nulls inside a new object are dropped', { a: 1 }, { n: { x: null, y: 1 } }, { a: 1, n: { y: 1 } }],
    ['nulls inside objects inside new arrays are dropped', {}, { l: [{ x: null, y: 1 }, null] }, { l: [{ y: 1 }, null] }],
    ['the empty patch is a no-op', { a: 1 }, {}, { a: 1 }],
    [
      'RFC 7386 appendix example',
      { title: 'Goodbye!', author: { givenName: 'John', familyName: 'Doe' }, tags: ['example', 'sample'], content: 'This will be unchanged' },
      { title: 'Hello!', phoneNumber: '+01-123-456-7890', author: { familyName: null }, tags: ['example'] },
      { title: 'Hello!', author: { givenName: 'John' }, tags: ['example'], content: 'This will be unchanged', phoneNumber: '+01-123-456-7890' },
    ],
  ];
  it.each(cases)('%s', (_name, doc, patch, want) => {
    const before = JSON.stringify(doc);
    expect(applyMergePatch(doc, patch)).toEqual(want);
    expect(JSON.stringify(doc)).toBe(before);
  });

  it.each([null, [1], 'x', 3])('rejects the non-object patch %j with 400', (patch) => {
    try {
      applyMergePatch({ a: 1 }, patch);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(StatusError);
      expect((err as StatusError).code).toBe(400);
      expect((err as StatusError).status.message).toBe('Invalid JSON Patch');
    }
  });
});
