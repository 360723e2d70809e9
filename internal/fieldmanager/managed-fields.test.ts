import { describe, expect, it } from 'vitest';
import { applyConflictError, printManager } from './conflicts.js';
import { FieldSet } from './field-set.js';
import {
  capUpdateManagers,
  decodeManagedFields,
  emptyManaged,
  encodeManagedFields,
  isResetManagedFields,
  managerIdentifier,
  parseManagerIdentifier,
  type ManagedFieldsEntry,
} from './managed-fields.js';
import { fieldElement as f } from './path-element.js';
import { managerFromUserAgent, managerOrUserAgent } from './user-agent.js';

const entry = (over: Partial<ManagedFieldsEntry> & Record<string, unknown>): ManagedFieldsEntry => ({
  manager: 'm',
  operation: 'Update',
  apiVersion: 'v1',
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:data': {} },
  ...over,
});

describe('manager identifiers', () => {
  it.each([
    [{ manager: 'kubectl', operation: 'Apply' as const, apiVersion: 'apps/v1' }, '{"manager":"kubectl","operation":"Apply"}'],
    [{ manager: 'kubectl', operation: 'Update' as const, apiVersion: 'apps/v1' }, '{"manager":"kubectl","operation":"Update","apiVersion":"apps/v1"}'],
    [{ manager: 'k', operation: 'Update' as const, apiVersion: 'v1', subresource: 'status' }, '{"manager":"k","operation":"Update","apiVersion":"v1","subresource":"status"}'],
    [{ manager: '', operation: 'Update' as const, apiVersion: 'v1' }, '{"operation":"Update","apiVersion":"v1"}'],
  ])('identifies %j as %s', (info, id) => {
    expect(managerIdentifier(info)).toBe(id);
    // And back, the same answer when asked again (identifiers are remembered).
    const { apiVersion, ...rest } = info;
    const parts = info.operation === 'Update' ? info : rest;
    expect(parseManagerIdentifier(id)).toEqual(parts);
    expect(parseManagerIdentifier(id)).toEqual(parts);
  });

  it.each([
    ['{"manager":"kubectl","operation":"Apply"}', '"kubectl"'],
    ['{"manager":"k","operation":"Apply","subresource":"status"}', '"k" with subresource "status"'],
    ['{"manager":"kcm","operation":"Update","apiVersion":"apps/v1"}', '"kcm" using apps/v1'],
  ])('prints %s as %s', (id, printed) => {
    expect(printManager(id)).toBe(printed);
  });
});

describe('decodeManagedFields', () => {
  it('decodes entries by identifier with their times', () => {
    const m = decodeManagedFields([entry({ time: '2024-01-01T00:00:00Z' }), entry({ manager: 'a', operation: 'Apply' })]);
    expect([...m.sets.keys()]).toEqual(['{"manager":"m","operation":"Update","apiVersion":"v1"}', '{"manager":"a","operation":"Apply"}']);
    expect(m.times.get('{"manager":"m","operation":"Update","apiVersion":"v1"}')).toBe('2024-01-01T00:00:00Z');
    expect(m.sets.get('{"manager":"a","operation":"Apply"}')?.applied).toBe(true);
  });

  it.each([
    ['an unknown operation', [entry({ operation: 'Patch' as never })], 'operation must be `Apply` or `Update`'],
    ['an empty apiVersion', [entry({ apiVersion: '' })], 'apiVersion must not be empty'],
    ['a missing fieldsType', [entry({ fieldsType: undefined })], 'missing fieldsType in managed fields entry 0'],
    ['another fieldsType', [entry({ fieldsType: 'FieldsV2' as never })], 'invalid fieldsType "FieldsV2" in managed fields entry 0'],
    ['bad fieldsV1', [entry({ fieldsV1: { 'f:a': 3 } as never })], /error decoding versioned set/],
    ['a non-list', { a: 1 }, 'managedFields must be a list'],
  ])('rejects %s', (_name, entries, message) => {
    expect(() => decodeManagedFields(entries)).toThrow(message);
  });

  // Decoded lists are remembered by their text: a remembered answer must equal a fresh one for
  // every list, including the same text seen again, and callers may change what they get.
  const lists: [string, unknown[]][] = [
    ['one entry', [entry({ time: '2024-01-01T00:00:00Z' })]],
    ['two managers', [entry({ manager: 'a', operation: 'Apply' }), entry({ manager: 'b', time: '2024-01-02T00:00:00Z' })]],
    ['a repeated identifier (the later wins, first position)', [entry({ fieldsV1: { 'f:a': {} } }), entry({ manager: 'x' }), entry({ fieldsV1: { 'f:b': {} }, time: 't' })]],
    ['no time on the later duplicate', [entry({ time: 't1' }), entry({ fieldsV1: { 'f:c': {} } })]],
    ['a subresource and no fieldsV1', [entry({ subresource: 'status', fieldsV1: undefined }), entry({ manager: undefined })]],
  ];
  const plain = (m: ReturnType<typeof decodeManagedFields>) => ({
    sets: [...m.sets].map(([id, vs]) => [id, vs.apiVersion, vs.applied, vs.set.toString()]),
    times: [...m.times],
    stored: [...m.stored].map(([id, s]) => [id, s.entry, s.set.toString()]),
  });
  it.each(lists)('gives the same answer for %s when seen again, with the caller\'s own entries', (_name, list) => {
    const first = decodeManagedFields(structuredClone(list));
    const want = plain(first);
    // The caller changes its maps; the next decode of the same text is not affected.
    first.sets.clear();
    first.times.set('x', 'y');
    first.stored.clear();
    const again = structuredClone(list);
    const second = decodeManagedFields(again);
    expect(plain(second)).toEqual(want);
    for (const [, s] of second.stored) expect(again).toContain(s.entry);
  });

  it('rejects an invalid list every time it is seen, with the same message', () => {
    const bad = [entry({}), entry({ apiVersion: '' })];
    expect(() => decodeManagedFields(bad)).toThrow('apiVersion must not be empty');
    expect(() => decodeManagedFields(structuredClone(bad))).toThrow('apiVersion must not be empty');
  });

  it.each([
    [[{}], true],
    [[{ manager: '', fieldsV1: null }], true],
    [[], false],
    [[{}, {}], false],
    [[{ manager: 'x' }], false],
    [undefined, false],
  ])('isResetManagedFields(%j) = %s', (value, want) => {
    expect(isResetManagedFields(value)).toBe(want);
  });
});

describe('encodeManagedFields', () => {
  it('orders Apply before Update, then time, manager, apiVersion, subresource', () => {
    const m = decodeManagedFields([
      entry({ manager: 'b', time: '2024-01-01T00:00:00Z' }),
      entry({ manager: 'a', time: '2024-01-01T00:00:01Z' }),
      entry({ manager: 'z', operation: 'Apply', time: '2024-01-02T00:00:00Z' }),
      entry({ manager: 'a', apiVersion: 'v2', time: '2024-01-01T00:00:00Z' }),
      entry({ manager: 'a', subresource: 'status', time: '2024-01-01T00:00:00Z' }),
    ]);
    expect(encodeManagedFields(m)!.map((e) => [e.manager, e.operation, e.apiVersion, e.subresource ?? ''])).toEqual([
      ['z', 'Apply', 'v1', ''],
      ['a', 'Update', 'v1', 'status'],
      ['a', 'Update', 'v2', ''],
      ['b', 'Update', 'v1', ''],
      ['a', 'Update', 'v1', ''],
    ]);
  });

  // Parsed times are remembered: the same texts encoded again order the same way.
  it.each([
    ['offsets', ['2024-01-01T01:00:00+01:00', '2024-01-01T00:00:01Z'], ['a', 'b']],
    ['fractions within one second', ['2024-01-01T00:00:00.900Z', '2024-01-01T00:00:00.100Z'], ['a', 'b']],
    ['an unparsable time (counts as the epoch)', ['2024-01-01T00:00:00Z', 'yesterday'], ['b', 'a']],
    ['a missing time', ['2024-01-01T00:00:00Z', undefined], ['b', 'a']],
  ])('orders by the second of each time: %s', (_name, [ta, tb], want) => {
    for (let round = 0; round < 2; round++) {
      const m = decodeManagedFields([entry({ manager: 'a', time: ta }), entry({ manager: 'b', apiVersion: 'v2', time: tb })]);
      expect(encodeManagedFields(m)!.map((e) => e.manager)).toEqual(want);
    }
  });

  it('reuses a stored fieldsV1 whose set did not change, byte for byte', () => {
    const odd = { 'f:b': {}, 'f:a': {} };
    const m = decodeManagedFields([entry({ fieldsV1: odd })]);
    expect(encodeManagedFields(m)![0]!.fieldsV1).toBe(odd);
  });

  it('has nothing to encode for no managers', () => {
    expect(encodeManagedFields(emptyManaged())).toBeUndefined();
  });
});

describe('capUpdateManagers', () => {
  it('buckets the oldest updaters per apiVersion until the cap holds', () => {
    const m = emptyManaged();
    for (let i = 0; i < 5; i++) {
      const id = managerIdentifier({ manager: `w${i}`, operation: 'Update', apiVersion: 'v1' });
      m.sets.set(id, { set: FieldSet.of([f(`f${i}`)]), apiVersion: 'v1', applied: false });
      m.times.set(id, `2024-01-01T00:00:0${i}Z`);
    }
    capUpdateManagers(m, 3);
    const out = encodeManagedFields(m)!;
    expect(out.map((e) => e.manager)).toEqual(['ancient-changes', 'w3', 'w4']);
    expect(out[0]!.fieldsV1).toEqual({ 'f:f0': {}, 'f:f1': {}, 'f:f2': {} });
    expect(out[0]!.time).toBe('2024-01-01T00:00:02Z');
  });
});

describe('applyConflictError', () => {
  it('has one cause per field and kubectl\'s message', () => {
    const err = applyConflictError(
      new Map([
        ['{"manager":"b","operation":"Apply"}', FieldSet.of([f('spec'), f('paused')])],
        ['{"manager":"a","operation":"Update","apiVersion":"apps/v1"}', FieldSet.of([f('spec'), f('replicas')], [f('metadata'), f('labels'), f('x')])],
      ]),
    );
    expect(err.code).toBe(409);
    expect(err.status.message).toBe(
      'Apply failed with 3 conflicts: conflicts with "a" using apps/v1:\n- .metadata.labels.x\n- .spec.replicas\nconflicts with "b":\n- .spec.paused',
    );
    expect(err.status.details?.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "a" using apps/v1', field: '.metadata.labels.x' },
      { reason: 'FieldManagerConflict', message: 'conflict with "a" using apps/v1', field: '.spec.replicas' },
      { reason: 'FieldManagerConflict', message: 'conflict with "b"', field: '.spec.paused' },
    ]);
  });
});

describe('managerFromUserAgent', () => {
  it.each([
    ['kubectl/v1.30.0 (linux/amd64) kubernetes/7c48c2b', 'kubectl'],
    ['kube-controller-manager/v1.30.0 (linux/amd64) kubernetes/x/leader-election', 'kube-controller-manager'],
    ['Mozilla', 'Mozilla'],
    ['', ''],
    ['bad\u0000\tname/1', 'badname'],
    ['x'.repeat(200), 'x'.repeat(128)],
    ['é'.repeat(100), 'é'.repeat(64)],
  ])('%j → %j', (ua, want) => {
    expect(managerFromUserAgent(ua)).toBe(want);
  });

  it('prefers an explicit fieldManager', () => {
    expect(managerOrUserAgent('mine', 'kubectl/1')).toBe('mine');
    expect(managerOrUserAgent(undefined, 'kubectl/1')).toBe('kubectl');
  });
});
