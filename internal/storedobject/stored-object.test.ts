import { describe, it, expect } from 'vitest';
import { decodeStored, encodeStored, metadataMembers, parseStored, rememberJsonText, replaceResourceVersion, typeMetaOf, withResourceVersion } from './stored-object.js';

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

describe('parseStored: the managed fields fieldsV1 values from their texts', () => {
  const fields = (name: string) => ({ 'f:metadata': { 'f:labels': { [`f:${name}`]: {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {} } } } });
  const entry = (manager: string, extra: Record<string, unknown> = {}) => ({ manager, operation: 'Update', apiVersion: 'v1', time: '2026-12-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: fields(manager), ...extra });
  const pod = (metadata: Record<string, unknown>, rest: Record<string, unknown> = {}) => Buffer.from(JSON.stringify({ kind: 'Pod', apiVersion: 'v1', metadata, spec: { containers: [{ name: 'c', image: 'i' }] }, ...rest }));
  // Tagged, so that the test sees which values came from the texts.
  const tagged = (text: string) => ({ text });
  const cases: Array<[string, Buffer, 'skipped' | 'parsed']> = [
    ['one entry', pod({ name: 'p', managedFields: [entry('a')] }), 'skipped'],
    ['entries with a subresource after fieldsV1', pod({ name: 'p', managedFields: [entry('a'), entry('b', { subresource: 'status' }), entry('a')] }), 'skipped'],
    ['managedFields before other members', pod({ managedFields: [entry('a')], name: 'p', labels: { a: 'b' } }), 'skipped'],
    ['a key with braces, quotes and non-ASCII', pod({ name: 'p', managedFields: [{ ...entry('a'), fieldsV1: { 'k:{"name":"é}{"}': {} } }] }), 'skipped'],
    ['no managed fields', pod({ name: 'p' }), 'parsed'],
    ['no entries', pod({ name: 'p', managedFields: [] }), 'parsed'],
    ['an entry without fieldsV1', pod({ name: 'p', managedFields: [entry('a'), { manager: 'm', operation: 'Update' }] }), 'parsed'],
    ['an entry that is not an object', pod({ name: 'p', managedFields: [entry('a'), null] }), 'parsed'],
    ['a fieldsV1 that is not an object', pod({ name: 'p', managedFields: [{ ...entry('a'), fieldsV1: 'x' }] }), 'parsed'],
    ['managedFields only in a nested object', pod({ name: 'p' }, { spec: { template: { metadata: { managedFields: [entry('a')] } } } }), 'parsed'],
  ];

  it.each(cases)('%s: what JSON.parse reads', (_name, bytes, how) => {
    const texts: string[] = [];
    const got = parseStored(bytes, (text) => (texts.push(text), tagged(text)));
    const want = JSON.parse(bytes.toString()) as { metadata: { managedFields?: Array<{ fieldsV1?: unknown }> } };
    if (how === 'parsed') {
      expect(got).toEqual(want);
      return;
    }
    // The same object, each fieldsV1 in the place of its own text's value.
    const entries = want.metadata.managedFields!;
    for (const e of entries) e.fieldsV1 = tagged(JSON.stringify(e.fieldsV1));
    expect(got).toEqual(want);
    expect(JSON.stringify(Object.keys(got.metadata as object))).toBe(JSON.stringify(Object.keys(want.metadata)));
  });

  it('asks once for a text met lately, and gives its value again', () => {
    const ask: string[] = [];
    const source = (text: string) => (ask.push(text), tagged(text));
    const unique = `u${Date.now()}`;
    const a = parseStored(pod({ name: 'a', managedFields: [entry(unique)] }), source) as { metadata: { managedFields: Array<{ fieldsV1: unknown }> } };
    const b = parseStored(pod({ name: 'b', managedFields: [entry(unique)] }), source) as typeof a;
    expect(ask).toEqual([JSON.stringify(fields(unique))]);
    expect(b.metadata.managedFields[0]!.fieldsV1).toBe(a.metadata.managedFields[0]!.fieldsV1);
  });

  it('reads serving bytes (resourceVersion spliced in) and bytes of a slab the same way', () => {
    const stored = encodeStored(JSON.parse(pod({ name: 'p', managedFields: [entry('a')] }).toString()));
    const slab = Buffer.concat([Buffer.from('garbage'), withResourceVersion(stored, 7), Buffer.from('{"x":')]);
    const view = slab.subarray(7, slab.length - 5);
    const got = parseStored(view, (text) => JSON.parse(text));
    expect(got).toEqual(JSON.parse(view.toString()));
  });

  it('throws as JSON.parse does for bytes that are not JSON', () => {
    expect(() => parseStored(Buffer.from('{"kind":"Pod","metadata":{"managedFields":[{"fieldsV1":{}}]'), (t) => t)).toThrow(SyntaxError);
    expect(() => parseStored(Buffer.from('{"metadata":{"managedFields":[{"fieldsV1":{"f:a":{}},"x":}]}}'), (t) => t)).toThrow(SyntaxError);
  });
});
