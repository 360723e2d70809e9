import { describe, expect, it } from 'vitest';
import { StatusError } from '../apierrors/status.js';
import { applyJsonPatch, MAX_JSON_PATCH_OPERATIONS } from './json-patch.js';
import type { JsonValue } from './json-value.js';
import { PATCH_REJECTED_MESSAGE } from './patch-errors.js';

const base = (): JsonValue => ({
  metadata: { name: 'web', labels: { app: 'web' } },
  spec: { replicas: 1, ports: [80, 443], tags: ['a'] },
});

function statusOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  throw new Error('expected a StatusError');
}

describe('applyJsonPatch', () => {
  const ok: Array<[string, unknown[], JsonValue]> = [
    [
      'add a member',
      [{ op: 'add', path: '/metadata/labels/tier', value: 'fe' }],
      { metadata: { name: 'web', labels: { app: 'web', tier: 'fe' } }, spec: { replicas: 1, ports: [80, 443], tags: ['a'] } },
    ],
    [
      'add appends with -',
      [{ op: 'add', path: '/spec/ports/-', value: 8080 }],
      { metadata: { name: 'web', labels: { app: 'web' } }, spec: { replicas: 1, ports: [80, 443, 8080], tags: ['a'] } },
    ],
    [
      'add inserts at an index',
      [{ op: 'add', path: '/spec/ports/0', value: 1 }],
      { metadata: { name: 'web', labels: { app: 'web' } }, spec: { replicas: 1, ports: [1, 80, 443], tags: ['a'] } },
    ],
    [
      'remove',
      [{ op: 'remove', path: '/metadata/labels' }],
      { metadata: { name: 'web' }, spec: { replicas: 1, ports: [80, 443], tags: ['a'] } },
    ],
    [
      'replace',
      [{ op: 'replace', path: '/spec/replicas', value: 3 }],
      { metadata: { name: 'web', labels: { app: 'web' } }, spec: { replicas: 3, ports: [80, 443], tags: ['a'] } },
    ],
    [
      'move',
      [{ op: 'move', from: '/spec/tags', path: '/spec/labels' }],
      { metadata: { name: 'web', labels: { app: 'web' } }, spec: { replicas: 1, ports: [80, 443], labels: ['a'] } },
    ],
    [
      'copy',
      [{ op: 'copy', from: '/metadata/name', path: '/metadata/generateName' }],
      {
        metadata: { name: 'web', labels: { app: 'web' }, generateName: 'web' },
        spec: { replicas: 1, ports: [80, 443], tags: ['a'] },
      },
    ],
    [
      'test that passes, then replace',
      [
        { op: 'test', path: '/spec/replicas', value: 1 },
        { op: 'replace', path: '/spec/replicas', value: 2 },
      ],
      { metadata: { name: 'web', labels: { app: 'web' } }, spec: { replicas: 2, ports: [80, 443], tags: ['a'] } },
    ],
    [
      'escaped pointer tokens',
      [{ op: 'add', path: '/metadata/labels/example.com~1role', value: 'x' }],
      {
        metadata: { name: 'web', labels: { app: 'web', 'example.com/role': 'x' } },
        spec: { replicas: 1, ports: [80, 443], tags: ['a'] },
      },
    ],
    ['empty list is a no-op', [], base()],
  ];
  it.each(ok)('%s', (_name, ops, want) => {
    const doc = base();
    expect(applyJsonPatch(doc, ops)).toEqual(want);
    expect(doc).toEqual(base());
  });

  const rejected: Array<[string, unknown, number, RegExp]> = [
    ['a failing test', [{ op: 'test', path: '/spec/replicas', value: 5 }], 422, /testing value \/spec\/replicas failed/],
    ['replace of a missing path', [{ op: 'replace', path: '/spec/nope', value: 1 }], 422, /does not exist/],
    ['remove of a missing path', [{ op: 'remove', path: '/spec/nope' }], 422, /does not exist/],
    ['add below a missing parent', [{ op: 'add', path: '/nope/deeper', value: 1 }], 422, /Cannot perform an `add`/],
    ['an index out of bounds', [{ op: 'add', path: '/spec/ports/9', value: 1 }], 422, /greater than the number of elements/],
    ['an unknown op', [{ op: 'frobnicate', path: '/spec' }], 422, /Unexpected kind: frobnicate/],
    ['the internal _get op', [{ op: '_get', path: '/spec', value: 1 }], 422, /Unexpected kind: _get/],
    ['a path without a leading slash', [{ op: 'add', path: 'spec/x', value: 1 }], 422, /./],
    ['add without a value', [{ op: 'add', path: '/spec/x' }], 422, /value/],
    ['move without from', [{ op: 'move', path: '/spec/x' }], 422, /from/],
  ];
  it.each(rejected)('rejects %s with %d', (_name, ops, code, detail) => {
    const err = statusOf(() => applyJsonPatch(base(), ops));
    expect(err.code).toBe(code);
    expect(err.status.reason).toBe('Invalid');
    expect(err.status.message).toBe(PATCH_REJECTED_MESSAGE);
    expect(err.status.details?.causes?.[0]?.message).toMatch(detail);
  });

  it('is all-or-nothing: an early operation does not survive a later failure', () => {
    const doc = base();
    const err = statusOf(() =>
      applyJsonPatch(doc, [
        { op: 'replace', path: '/spec/replicas', value: 9 },
        { op: 'test', path: '/spec/replicas', value: 1 },
      ]),
    );
    expect(err.code).toBe(422);
    expect(doc).toEqual(base());
  });

  it('validates the whole list before applying anything', () => {
    const err = statusOf(() =>
      applyJsonPatch(base(), [
        { op: 'replace', path: '/spec/replicas', value: 9 },
        { op: 'add', path: '/spec/x' },
      ]),
    );
    expect(err.status.details?.causes?.[0]?.message).toMatch(/value/);
  });

  it.each([
    ['an object', { op: 'add' }, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch'],
    ['a string', 'add', 'json: cannot unmarshal string into Go value of type jsonpatch.Patch'],
    ['null', null, 'json: cannot unmarshal null into Go value of type jsonpatch.Patch'],
    ['a list with a non-object', ['add'], 'json: cannot unmarshal string into Go value of type jsonpatch.Operation'],
  ])('rejects %s as a document with 400', (_name, ops, message) => {
    const err = statusOf(() => applyJsonPatch(base(), ops));
    expect(err.code).toBe(400);
    expect(err.status.message).toBe(message);
  });

  it('answers 413 above the operation limit', () => {
    const ops = Array.from({ length: MAX_JSON_PATCH_OPERATIONS + 1 }, () => ({ op: 'test', path: '/spec/replicas', value: 1 }));
    const err = statusOf(() => applyJsonPatch(base(), ops));
    expect(err.code).toBe(413);
    expect(err.status.message).toBe('The allowed maximum operations in a JSON patch is 10000, got 10001');
  });

  it('refuses prototype pollution', () => {
    const err = statusOf(() => applyJsonPatch({}, [{ op: 'add', path: '/__proto__/polluted', value: true }]));
    expect(err.code).toBe(422);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
