import { describe, it, expect } from 'vitest';
import { decodeStored, encodeStored, metadataMembers, rememberJsonText, replaceResourceVersion, typeMetaOf, withResourceVersion } from './stored-object.js';

describe('stored objects', () => {
  it('writes kind, apiVersion, metadata first and never a resourceVersion', () => {
    const bytes = encodeStored({ spec: { a: 1 }, metadata: { name: 'x', resourceVersion: '9' }, apiVersion: 'v1', kind: 'ConfigMap' });
    expect(bytes.toString()).toBe('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"spec":{"a":1}}');
    // The other members keep their order, the object given is left as it was.
    const obj = { data: { b: '1' }, metadata: { name: 'y', resourceVersion: '3', labels: { l: 'v' } }, kind: 'ConfigMap', immutable: true, apiVersion: 'v1' };
    expect(encodeStored(obj).toString()).toBe('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"y","labels":{"l":"v"}},"data":{"b":"1"},"immutable":true}');
    expect(obj.metadata.resourceVersion).toBe('3');
    expect(encodeStored({ kind: 'K', apiVersion: 'v1' }).toString()).toBe('{"kind":"K","apiVersion":"v1","metadata":{}}');
  });

  it('keeps a member named __proto__ (a custom resource may carry one) as a member', () => {
    const obj = JSON.parse('{"kind":"K","apiVersion":"x/v1","metadata":{"name":"n","resourceVersion":"2","__proto__":{"a":1}},"__proto__":{"b":2}}') as Record<string, unknown>;
    expect(encodeStored(obj).toString()).toBe('{"kind":"K","apiVersion":"x/v1","metadata":{"name":"n","__proto__":{"a":1}},"__proto__":{"b":2}}');
  });

  it('splices the revision into the top-level metadata only', () => {
    const obj = {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { name: 'web', annotations: { note: '"metadata":{' } },
      spec: { template: { metadata: { labels: { a: 'b' } } } },
    };
    const served = withResourceVersion(encodeStored(obj), 42);
    const parsed = JSON.parse(served.toString());
    expect(parsed.metadata.resourceVersion).toBe('42');
    expect(parsed.metadata.annotations.note).toBe('"metadata":{');
    expect(parsed.spec.template.metadata).toEqual({ labels: { a: 'b' } });
    expect(decodeStored(encodeStored(obj), 42)).toEqual(parsed);
  });

  it('re-versions serving bytes', () => {
    const served = withResourceVersion(encodeStored({ kind: 'K', apiVersion: 'v1', metadata: { name: 'n' } }), 7);
    expect(replaceResourceVersion(served, 1234).toString()).toBe('{"kind":"K","apiVersion":"v1","metadata":{"resourceVersion":"1234","name":"n"}}');
  });

  it('handles empty metadata', () => {
    expect(withResourceVersion(encodeStored({ kind: 'K', apiVersion: 'v1', metadata: {} }), 7).toString()).toBe(
      '{"kind":"K","apiVersion":"v1","metadata":{"resourceVersion":"7"}}',
    );
  });

  it('reads kind and apiVersion from the head of serving bytes', () => {
    const served = withResourceVersion(encodeStored({ kind: 'Deployment', apiVersion: 'apps/v1', metadata: { name: 'n' }, spec: { kind: 'x' } }), 7);
    expect(typeMetaOf(served)).toEqual({ kind: 'Deployment', apiVersion: 'apps/v1' });
    expect(typeMetaOf(withResourceVersion(encodeStored({ metadata: { name: 'n' } }), 7))).toEqual({ kind: '', apiVersion: '' });
    expect(() => typeMetaOf(Buffer.from('{"kind":"K"}'))).toThrow(/no metadata/);
  });

  it.each([
    ['plain', { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p', labels: { a: 'b' } }, spec: { x: 1 } }],
    ['empty metadata', { kind: 'Pod', apiVersion: 'v1', metadata: {}, spec: {} }],
    ['braces, brackets and escaped quotes inside strings', { kind: 'K', apiVersion: 'v1', metadata: { name: 'n', annotations: { a: '}{][', b: 'say "}"', c: 'back\\', d: '\\"}' } }, data: { metadata: 'x' } }],
    ['scalars of every kind', { kind: 'K', apiVersion: 'v1', metadata: { generation: 7, name: 'n', deletionGracePeriodSeconds: null, finalizers: [], x: true }, spec: {} }],
    ['nested arrays and objects', { kind: 'K', apiVersion: 'v1', metadata: { ownerReferences: [{ uid: 'u', kind: 'K' }], finalizers: ['f'], managedFields: [{ fieldsV1: { 'f:a': {} } }] }, spec: { metadata: { name: 'inner' } } }],
  ])('reads named metadata members of stored and serving bytes, skipping the rest: %s', (_name, obj) => {
    const names = ['name', 'annotations', 'ownerReferences', 'finalizers', 'resourceVersion', 'generation', 'absent'];
    const pick = (m: Record<string, unknown>) => Object.fromEntries(Object.entries(m).filter(([k]) => names.includes(k)));
    const stored = encodeStored(obj);
    expect(metadataMembers(stored, names)).toEqual(pick(obj.metadata));
    const served = withResourceVersion(stored, 42);
    expect(metadataMembers(served, names)).toEqual(pick({ resourceVersion: '42', ...obj.metadata }));
    expect(metadataMembers(served, [])).toEqual({});
  });

  it.each([
    ['no metadata', '{"kind":"K","spec":{}}'],
    ['metadata that never closes', '{"kind":"K","metadata":{"name":"a"'],
    ['a string that never closes', '{"kind":"K","metadata":{"name":"a}}'],
    ['whitespace (not what JSON.stringify writes)', '{"kind":"K","metadata":{ "name":"a"}}'],
    ['a member without a value', '{"kind":"K","metadata":{"name":,"uid":"u"}}'],
    ['a malformed wanted value', '{"kind":"K","metadata":{"name":tru}}'],
  ])('reads no metadata members from bytes not in the stored shape: %s', (_name, text) => {
    // 'absent' is never found: the whole of metadata is read.
    expect(metadataMembers(Buffer.from(text), ['name', 'absent'])).toBeUndefined();
  });

  it('stops reading once every named member is read (what follows is neither skipped nor checked)', () => {
    const text = '{"kind":"K","metadata":{"name":"n","uid":"u","managedFields":[{"never closes":';
    expect(metadataMembers(Buffer.from(text), ['uid', 'name'])).toEqual({ uid: 'u', name: 'n' });
    expect(metadataMembers(Buffer.from(text), ['uid', 'name', 'finalizers'])).toBeUndefined();
  });
});

describe('encodeStored with remembered fieldsV1 texts', () => {
  // The definition: the object rebuilt with kind, apiVersion and metadata first, without
  // metadata.resourceVersion, serialized whole.
  const reference = (obj: Record<string, unknown>): string => {
    const { kind, apiVersion, metadata, ...rest } = obj;
    const meta = { ...((metadata as Record<string, unknown> | undefined) ?? {}) };
    delete meta.resourceVersion;
    return JSON.stringify({ kind, apiVersion, metadata: meta, ...rest });
  };
  const fields = () => ({ 'f:metadata': { 'f:labels': { 'f:a': {}, '.': {} } }, 'f:spec': { 'f:x': {} } });
  const entry = (f: unknown, extra: Record<string, unknown> = {}) => ({ manager: 'm', operation: 'Update', apiVersion: 'v1', time: '2026-11-29T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: f, ...extra });
  const known = () => {
    const f = fields();
    rememberJsonText(f, JSON.stringify(f));
    return f;
  };
  const cases: Array<[string, () => Record<string, unknown>]> = [
    ['one known entry', () => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', resourceVersion: '3', managedFields: [entry(known())] }, spec: { x: 1 }, status: {} })],
    ['known and unknown entries, subresource', () => ({ kind: 'Pod', apiVersion: 'v1', metadata: { managedFields: [entry(fields()), entry(known(), { subresource: 'status' }), entry(known())], name: 'p' } })],
    ['no kind, undefined members, an escaped key', () => ({ metadata: { name: 'p', uid: undefined, managedFields: [entry(known(), { time: undefined })], 'a"b': 1 }, spec: undefined, 'x"y': [1, undefined] })],
    ['metadata last, members before it', () => ({ spec: { a: 1 }, status: 'x', metadata: { labels: { a: 'b' }, managedFields: [entry(known())] }, apiVersion: 'v1' })],
    ['integer-like keys at the top', () => ({ 1: 'x', kind: 'K', metadata: { managedFields: [entry(known())] } })],
    ['integer-like keys in metadata', () => ({ kind: 'K', metadata: { 2: 'x', managedFields: [entry(known())] } })],
    ['integer-like keys in an entry', () => ({ kind: 'K', metadata: { managedFields: [{ ...entry(known()), 3: 'x' }] } })],
    ['an entry that is not an object', () => ({ kind: 'K', metadata: { managedFields: [entry(known()), null, 'x'] } })],
    ['a fieldsV1 that is not an object', () => ({ kind: 'K', metadata: { managedFields: [entry(known()), entry('x'), entry(null)] } })],
    ['unicode and escapes', () => ({ kind: 'K\u2028', metadata: { name: 'é\ud800', managedFields: [entry(known())], annotations: { 'a\nb': '"\\' } } })],
  ];
  it.each(cases)('%s: the same bytes', (_name, make) => {
    const obj = make();
    expect(encodeStored(obj).toString('utf8')).toBe(reference(obj));
  });
});
