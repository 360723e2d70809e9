import { describe, expect, it } from 'vitest';
import { StatusError } from '../apierrors/status.js';
import { SchemaIndex, type SchemaNode } from '../schema/openapi-index.js';
import type { JsonObject, JsonValue } from './json-value.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';
import { builtinTypeNode, type TypeNode } from './type-node.js';

// A small schema exercising every strategy, modelled on the kind of struct tags the built-in
// types carry (patchStrategy/patchMergeKey), written as OpenAPI the way the data files carry it.
const ref = (name: string): SchemaNode => ({ $ref: `#/components/schemas/${name}` });
const testIndex = new SchemaIndex(() => ({
  'test.Item': {
    type: 'object',
    properties: {
      name: { type: 'string' },
      value: { type: 'string' },
      other: { type: 'string' },
      mergingList: {
        type: 'array',
        items: ref('test.Item'),
        'x-kubernetes-patch-strategy': 'merge',
        'x-kubernetes-patch-merge-key': 'name',
      },
      nonMergingList: { type: 'array', items: ref('test.Item') },
      mergingIntList: { type: 'array', items: { type: 'integer' }, 'x-kubernetes-patch-strategy': 'merge' },
      nonMergingIntList: { type: 'array', items: { type: 'integer' } },
      simpleMap: { type: 'object', additionalProperties: { type: 'string' } },
      replacingItem: { type: 'object', 'x-kubernetes-patch-strategy': 'replace' },
      retainKeysMap: { allOf: [ref('test.RetainItem')], 'x-kubernetes-patch-strategy': 'retainKeys' },
      retainKeysMergingList: {
        type: 'array',
        items: ref('test.Item'),
        'x-kubernetes-patch-strategy': 'merge,retainKeys',
        'x-kubernetes-patch-merge-key': 'name',
      },
    },
  },
  'test.RetainItem': {
    type: 'object',
    properties: {
      name: { type: 'string' },
      value: { type: 'string' },
      other: { type: 'string' },
      mergingIntList: { type: 'array', items: { type: 'integer' }, 'x-kubernetes-patch-strategy': 'merge' },
    },
  },
}));
const item = builtinTypeNode('test.Item', testIndex)!;

type Case = [description: string, original: JsonValue, patch: unknown, want: JsonValue];

function run(schema: TypeNode | undefined, [, original, patch, want]: Case): void {
  const before = JSON.stringify(original);
  const patchBefore = JSON.stringify(patch);
  expect(applyStrategicMergePatch(original, patch, schema)).toEqual(want);
  expect(JSON.stringify(original)).toBe(before);
  expect(JSON.stringify(patch)).toBe(patchBefore);
}

function failure(schema: TypeNode | undefined, original: JsonValue, patch: unknown): StatusError {
  try {
    applyStrategicMergePatch(original, patch, schema);
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  throw new Error('expected a StatusError');
}

describe('strategic merge patch: maps and scalars', () => {
  const cases: Case[] = [
    ['adds a field', { name: 'a' }, { value: 'v' }, { name: 'a', value: 'v' }],
    ['null deletes a field', { name: 'a', value: 'v' }, { value: null }, { name: 'a' }],
    ['null on a missing field is ignored, not stored', { name: 'a' }, { value: null }, { name: 'a' }],
    ['maps merge by key', { simpleMap: { a: '1', b: '2' } }, { simpleMap: { b: '3', c: '4' } }, { simpleMap: { a: '1', b: '3', c: '4' } }],
    ['nulls inside a new map are dropped', {}, { simpleMap: { a: null, b: '1' } }, { simpleMap: { b: '1' } }],
    ['$patch: delete on a map empties it', { simpleMap: { a: '1' } }, { simpleMap: { $patch: 'delete' } }, { simpleMap: {} }],
    ['$patch: replace on a map replaces it', { simpleMap: { a: '1' } }, { simpleMap: { $patch: 'replace', b: '2' } }, { simpleMap: { b: '2' } }],
    ['$patch: replace at the top replaces the object', { name: 'a', value: 'v' }, { other: 'x', $patch: 'replace' }, { other: 'x' }],
    ['$patch: merge on a map merges', { simpleMap: { a: '1' } }, { simpleMap: { $patch: 'merge', b: '2' } }, { simpleMap: { a: '1', b: '2' } }],
    ['patchStrategy replace on a map replaces it', { replacingItem: { a: 1, b: 2 } }, { replacingItem: { c: 3 } }, { replacingItem: { c: 3 } }],
    ['a type change replaces', { simpleMap: { a: '1' } }, { simpleMap: 'x' }, { simpleMap: 'x' }],
    ['null patch is a no-op', { name: 'a' }, null, { name: 'a' }],
  ];
  it.each(cases)('%s', (...c) => run(item, c));
});

describe('strategic merge patch: lists', () => {
  const cases: Case[] = [
    ['a non-merging list is replaced', { nonMergingIntList: [1, 2] }, { nonMergingIntList: [2, 3] }, { nonMergingIntList: [2, 3] }],
    [
      'a non-merging list of maps is replaced',
      { nonMergingList: [{ name: 'a', value: '1' }] },
      { nonMergingList: [{ name: 'b' }] },
      { nonMergingList: [{ name: 'b' }] },
    ],
    ['merging scalars are unioned without duplicates', { mergingIntList: [1, 2] }, { mergingIntList: [2, 3] }, { mergingIntList: [1, 2, 3] }],
    [
      'merging maps merge by key; patch order wins for items it names',
      { mergingList: [{ name: '1' }, { name: '2', value: 'b' }, { name: '3' }] },
      { mergingList: [{ name: '3', value: 'c' }, { name: '1', value: 'a' }] },
      { mergingList: [{ name: '2', value: 'b' }, { name: '3', value: 'c' }, { name: '1', value: 'a' }] },
    ],
    [
      'a new item goes before the server-only items (no $setElementOrder)',
      { mergingList: [{ name: 'a' }, { name: 'b' }] },
      { mergingList: [{ name: 'c', value: 'new' }] },
      { mergingList: [{ name: 'c', value: 'new' }, { name: 'a' }, { name: 'b' }] },
    ],
    [
      'nested fields of an item merge',
      { mergingList: [{ name: 'a', value: '1', simpleMap: { x: '1' } }] },
      { mergingList: [{ name: 'a', simpleMap: { y: '2' }, value: null }] },
      { mergingList: [{ name: 'a', simpleMap: { x: '1', y: '2' } }] },
    ],
    [
      '$patch: delete removes every item with the key',
      { mergingList: [{ name: '1' }, { name: '1' }, { name: '2', value: 'a' }, { name: '3' }, { name: '3' }] },
      { mergingList: [{ name: '1', $patch: 'delete' }, { name: '3', $patch: 'delete' }] },
      { mergingList: [{ name: '2', value: 'a' }] },
    ],
    ['$patch: replace alone empties the list', { mergingList: [{ name: '1' }, { name: '2' }] }, { mergingList: [{ $patch: 'replace' }] }, { mergingList: [] }],
    [
      '$patch: replace with items replaces the list',
      { mergingList: [{ name: '1' }, { name: '2' }] },
      { mergingList: [{ $patch: 'replace' }, { name: '9', value: null, other: 'o' }] },
      { mergingList: [{ name: '9', other: 'o' }] },
    ],
    [
      'directive items vanish from a list that is added wholesale',
      {},
      { mergingList: [{ name: '1', $patch: 'delete' }, { name: '2' }] },
      { mergingList: [{ name: '2' }] },
    ],
    ['an empty patch list leaves the list alone', { mergingList: [{ name: '1' }] }, { mergingList: [] }, { mergingList: [{ name: '1' }] }],
    ['$deleteFromPrimitiveList removes values', { mergingIntList: [1, 2, 3] }, { '$deleteFromPrimitiveList/mergingIntList': [2] }, { mergingIntList: [1, 3] }],
    [
      '$deleteFromPrimitiveList also works on a list without merge strategy',
      { nonMergingIntList: [1, 2, 3] },
      { '$deleteFromPrimitiveList/nonMergingIntList': [2] },
      { nonMergingIntList: [1, 3] },
    ],
    ['$deleteFromPrimitiveList of a missing value is a no-op', { mergingIntList: [1, 2] }, { '$deleteFromPrimitiveList/mergingIntList': [3] }, { mergingIntList: [1, 2] }],
    ['$deleteFromPrimitiveList never creates the list', { foo: ['bar'] }, { '$deleteFromPrimitiveList/mergingIntList': [3] }, { foo: ['bar'] }],
    [
      '$setElementOrder orders a merged list of maps',
      { mergingList: [{ name: '1', other: 'a' }, { name: '2', value: '2' }] },
      {
        '$setElementOrder/mergingList': [{ name: '4' }, { name: '1' }, { name: '2' }, { name: '3' }],
        mergingList: [
          { name: '4', value: '4' },
          { name: '3', value: '3' },
        ],
      },
      { mergingList: [{ name: '4', value: '4' }, { name: '1', other: 'a' }, { name: '2', value: '2' }, { name: '3', value: '3' }] },
    ],
    [
      '$setElementOrder without a patch list reorders the live list',
      { mergingIntList: [1, 3] },
      { '$setElementOrder/mergingIntList': [3, 2, 1] },
      { mergingIntList: [3, 1] },
    ],
    [
      '$setElementOrder with $deleteFromPrimitiveList (kubectl apply style)',
      { mergingIntList: [1, 2, 3, 4] },
      { '$setElementOrder/mergingIntList': [1, 2], '$deleteFromPrimitiveList/mergingIntList': [3] },
      { mergingIntList: [1, 2, 4] },
    ],
    [
      '$setElementOrder with additions and deletions',
      { mergingIntList: [1, 2, 3, 4] },
      { '$setElementOrder/mergingIntList': [1, 2, 4], '$deleteFromPrimitiveList/mergingIntList': [3], mergingIntList: [4] },
      { mergingIntList: [1, 2, 4] },
    ],
    [
      '$retainKeys clears the keys it does not list',
      { retainKeysMap: { name: 'foo', other: 'x' } },
      { retainKeysMap: { $retainKeys: ['name', 'value'], value: 'b' } },
      { retainKeysMap: { name: 'foo', value: 'b' } },
    ],
    [
      'retainKeys strategy without the directive merges',
      { retainKeysMap: { name: 'foo', value: 'a' } },
      { retainKeysMap: { value: 'b' } },
      { retainKeysMap: { name: 'foo', value: 'b' } },
    ],
    [
      '$retainKeys inside a merging list item',
      { retainKeysMergingList: [{ name: 'bar' }, { name: 'foo', other: 'o' }] },
      { retainKeysMergingList: [{ name: 'foo', $retainKeys: ['name', 'value'], value: 'a' }] },
      { retainKeysMergingList: [{ name: 'bar' }, { name: 'foo', value: 'a' }] },
    ],
    ['null on a list deletes it', { mergingIntList: [1] }, { mergingIntList: null }, {}],
  ];
  it.each(cases)('%s', (...c) => run(item, c));
});

describe('strategic merge patch: malformed patches', () => {
  const cases: Array<[string, JsonValue, unknown, number, string | RegExp]> = [
    ['a patch that is not an object', {}, [1], 400, 'json: cannot unmarshal array into Go value of type map[string]interface {}'],
    ['an unknown $patch on a map', { simpleMap: { a: '1' } }, { simpleMap: { $patch: 'bogus' } }, 400, 'unknown patch type: bogus in map: map[$patch:bogus]'],
    ['an unknown $patch on a list item', { mergingList: [{ name: '1' }] }, { mergingList: [{ name: '1', $patch: 'bogus' }] }, 400, /^unknown patch type: bogus/],
    ['$patch: merge on a list item', { mergingList: [{ name: '1' }] }, { mergingList: [{ name: '1', $patch: 'merge' }] }, 400, 'merging lists cannot yet be specified in the patch'],
    ['a merging item without its key', { mergingList: [{ name: '1', value: 'a' }] }, { mergingList: [{ value: 'b' }] }, 400, 'map: map[value:b] does not contain declared merge key: name'],
    ['a $patch: delete item without its key', { mergingList: [{ name: '1' }] }, { mergingList: [{ $patch: 'delete' }] }, 400, /does not contain declared merge key: name/],
    ['$retainKeys that is not a list', { retainKeysMap: { name: 'a' } }, { retainKeysMap: { $retainKeys: 'name' } }, 400, 'invalid patch format of retainKeys'],
    ['a patch key missing from $retainKeys', { retainKeysMap: { name: 'a' } }, { retainKeysMap: { $retainKeys: ['name'], value: 'b' } }, 400, 'invalid patch format of retainKeys'],
    ['a malformed $deleteFromPrimitiveList key', { mergingIntList: [1] }, { $deleteFromPrimitiveListX: [1] }, 400, 'invalid patch format of primitive list'],
    ['a malformed $setElementOrder key', { mergingIntList: [1] }, { $setElementOrder: [1] }, 400, 'invalid patch format of setElementOrder list'],
    ['$setElementOrder that is not a list', { mergingIntList: [1] }, { '$setElementOrder/mergingIntList': { a: 1 } }, 400, 'expected a slice, but received a map'],
    [
      '$setElementOrder that disagrees with the patch order',
      { mergingList: [{ name: '1' }, { name: '3' }, { name: '2' }] },
      { '$setElementOrder/mergingList': [{ name: '1' }, { name: '2' }, { name: '3' }], mergingList: [{ name: '3', value: '3' }, { name: '1', value: '1' }] },
      400,
      /doesn't match \$setElementOrder list/,
    ],
    ['a list of lists', { mergingIntList: [] }, { mergingIntList: [[1]] }, 422, 'lists of lists are not supported'],
    ['items of mixed kinds', { mergingIntList: [1] }, { mergingIntList: ['a'] }, 400, /list element types are not identical/],
  ];
  it.each(cases)('rejects %s', (_name, original, patch, code, message) => {
    const err = failure(item, original, patch);
    expect(err.code).toBe(code);
    if (typeof message === 'string') expect(err.status.message).toBe(message);
    else expect(err.status.message).toMatch(message);
  });
});

describe('strategic merge patch on built-in kinds', () => {
  const pod = builtinTypeNode('io.k8s.api.core.v1.Pod')!;
  const deployment = builtinTypeNode('io.k8s.api.apps.v1.Deployment')!;
  const podWith = (spec: JsonObject, metadata: JsonObject = { name: 'p' }): JsonObject => ({ apiVersion: 'v1', kind: 'Pod', metadata, spec });

  it('merges containers by name and keeps the others', () => {
    const original = podWith({ containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }] });
    const got = applyStrategicMergePatch(original, { spec: { containers: [{ name: 'b', image: 'b:2' }] } }, pod);
    expect(got.spec).toEqual({ containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:2' }] });
  });

  it('deletes a container with $patch: delete', () => {
    const original = podWith({ containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }] });
    const got = applyStrategicMergePatch(original, { spec: { containers: [{ name: 'a', $patch: 'delete' }] } }, pod);
    expect(got.spec).toEqual({ containers: [{ name: 'b', image: 'b:1' }] });
  });

  it('merges container ports by containerPort and env by name, honouring $setElementOrder', () => {
    const original = podWith({
      containers: [
        {
          name: 'a',
          image: 'a:1',
          ports: [{ containerPort: 80, name: 'http' }],
          env: [
            { name: 'X', value: '1' },
            { name: 'Y', value: '2' },
          ],
        },
      ],
    });
    const got = applyStrategicMergePatch(
      original,
      {
        spec: {
          containers: [
            {
              name: 'a',
              ports: [{ containerPort: 443, name: 'https' }],
              '$setElementOrder/env': [{ name: 'Y' }, { name: 'Z' }, { name: 'X' }],
              env: [{ name: 'Z', value: '3' }],
            },
          ],
        },
      },
      pod,
    );
    expect(got.spec).toEqual({
      containers: [
        {
          name: 'a',
          image: 'a:1',
          ports: [
            { containerPort: 443, name: 'https' },
            { containerPort: 80, name: 'http' },
          ],
          env: [
            { name: 'Y', value: '2' },
            { name: 'Z', value: '3' },
            { name: 'X', value: '1' },
          ],
        },
      ],
    });
  });

  it('replaces lists without a strategy (container args, tolerations)', () => {
    const original = podWith({ containers: [{ name: 'a', args: ['x', 'y'] }], tolerations: [{ key: 'k', operator: 'Exists' }] });
    const got = applyStrategicMergePatch(original, { spec: { containers: [{ name: 'a', args: ['z'] }], tolerations: [] } }, pod);
    expect(got.spec).toEqual({ containers: [{ name: 'a', args: ['z'] }], tolerations: [] });
  });

  it('merges finalizers as a set and removes with $deleteFromPrimitiveList', () => {
    const original = podWith({}, { name: 'p', finalizers: ['a', 'b'] });
    const got = applyStrategicMergePatch(original, { metadata: { finalizers: ['c'], '$deleteFromPrimitiveList/finalizers': ['a'] } }, pod);
    expect(got.metadata).toEqual({ name: 'p', finalizers: ['c', 'b'] });
  });

  it('clears the rolling update of a Deployment switching to Recreate with $retainKeys', () => {
    const original: JsonObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', labels: { app: 'd', tier: 'x' } },
      spec: { replicas: 1, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } } },
    };
    const got = applyStrategicMergePatch(
      original,
      { metadata: { labels: { tier: null } }, spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
      deployment,
    );
    expect(got).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', labels: { app: 'd' } },
      spec: { replicas: 1, strategy: { type: 'Recreate' } },
    });
  });

  it('swaps a volume source with $retainKeys inside the volumes list (merge,retainKeys)', () => {
    const original = podWith({ volumes: [{ name: 'v', emptyDir: {} }, { name: 'w', emptyDir: {} }] });
    const got = applyStrategicMergePatch(
      original,
      { spec: { volumes: [{ name: 'v', $retainKeys: ['configMap', 'name'], configMap: { name: 'cm' } }] } },
      pod,
    );
    expect(got.spec).toEqual({ volumes: [{ name: 'v', configMap: { name: 'cm' } }, { name: 'w', emptyDir: {} }] });
  });

  it('treats a field the schema does not know like a plain merge', () => {
    const original = podWith({ containers: [{ name: 'a' }] });
    const got = applyStrategicMergePatch(original, { status: { phase: 'Running' } }, undefined);
    expect(got.status).toEqual({ phase: 'Running' });
  });
});
