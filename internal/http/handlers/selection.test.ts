import { describe, expect, it } from 'vitest';
import { customResourceInfos } from '../../controllers/crd-controller.js';
import { fieldsetFor } from '../../selectors/index.js';
import type { CacheEntry } from '../../watchcache/types.js';
import { selectionFor } from './selection.js';

const crd = (v1Fields: string[], v2Fields?: string[]) => ({
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget' },
    versions: [
      { name: 'v1', served: true, storage: true, selectableFields: v1Fields.map((jsonPath) => ({ jsonPath })) },
      { name: 'v2', served: true, storage: false, ...(v2Fields ? { selectableFields: v2Fields.map((jsonPath) => ({ jsonPath })) } : {}) },
    ],
  },
});

const entry = (obj: Record<string, unknown>, fields: Record<string, string>): CacheEntry => ({
  key: '/k',
  namespace: 'ns',
  name: 'w',
  revision: 1,
  bytes: Buffer.from(JSON.stringify(obj)),
  labels: {},
  fields,
});

describe('custom resource selection', () => {
  it('each version accepts its own selectable fields; stored field sets carry all of them', () => {
    const [v1, v2] = customResourceInfos(crd(['.spec.color'], ['.spec.size']));
    expect(v1!.custom?.selectableFields).toEqual(['.spec.color']);
    expect(v2!.custom?.selectableFields).toEqual(['.spec.size']);
    expect(v1!.custom?.storedSelectableFields).toEqual(['.spec.color', '.spec.size']);
    const obj = { metadata: { name: 'w', namespace: 'ns' }, spec: { color: 'red', size: 3 } };
    const e = entry(obj, fieldsetFor(v1!, obj));
    expect(selectionFor(v1!, new URLSearchParams('fieldSelector=spec.color=red')).filter!(e)).toBe(true);
    expect(selectionFor(v2!, new URLSearchParams('fieldSelector=spec.size=3')).filter!(e)).toBe(true);
    expect(() => selectionFor(v2!, new URLSearchParams('fieldSelector=spec.color=red'))).toThrow('field label not supported: spec.color');
  });

  // [selector, expected match] against an entry cached before the definition declared spec.shape
  const stale: Array<[string, boolean]> = [
    ['spec.shape=round', true],
    ['spec.shape=square', false],
    ['spec.shape!=round', false],
    ['spec.shape=round,metadata.name=w', true],
  ];
  it.each(stale)('an entry cached before the field was declared: %s → %s', (selector, want) => {
    const [v1] = customResourceInfos(crd(['.spec.shape']));
    const obj = { metadata: { name: 'w', namespace: 'ns' }, spec: { shape: 'round' } };
    const e = entry(obj, { 'metadata.name': 'w', 'metadata.namespace': 'ns' });
    expect(selectionFor(v1!, new URLSearchParams({ fieldSelector: selector })).filter!(e)).toBe(want);
  });
});

describe('single-object watch and field selectors', () => {
  const [widgets] = customResourceInfos(crd(['.spec.color']));
  // [fieldSelector, error message or undefined when accepted]
  const cases: Array<[string, string | undefined]> = [
    ['', undefined],
    ['metadata.name=w', undefined],
    ['metadata.name==w,spec.color=red', undefined],
    ['metadata.name=other', "fieldSelector metadata.name doesn't match requested name"],
    ['spec.color=red', "fieldSelector metadata.name doesn't match requested name"],
    ['metadata.name!=w', "fieldSelector metadata.name doesn't match requested name"],
    ['spec.nope=1', 'field label not supported: spec.nope'],
  ];
  it.each(cases)('watch of w with fieldSelector=%j', (selector, message) => {
    const run = () => selectionFor(widgets!, new URLSearchParams({ fieldSelector: selector }), 'w');
    if (message === undefined) expect(run).not.toThrow();
    else expect(run).toThrow(message);
  });
});
