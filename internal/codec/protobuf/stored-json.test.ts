import { describe, expect, it } from 'vitest';
import { createNaming } from '../../naming/naming.js';
import { kindSchemaNames, sampleObject } from '../samples/sample-objects.js';
import { ProtobufCodec } from './protobuf-codec.js';
import { parseForProtobuf } from './stored-json.js';

type Obj = Record<string, unknown>;
const codec = new ProtobufCodec(createNaming('cluster'));

const entry = (fieldsV1: unknown, extra: Obj = {}) => ({ manager: 'm', operation: 'Update', apiVersion: 'v1', time: '2024-01-02T03:04:05Z', fieldsType: 'FieldsV1', fieldsV1, ...extra });
const pod = (managedFields: unknown, metadata: Obj = {}) => ({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p', namespace: 'ns', ...metadata, managedFields }, spec: { containers: [{ name: 'app', image: 'i' }] } });
const podFields = { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } };
const json = (v: unknown) => Buffer.from(JSON.stringify(v));

/** The indexes of managedFields whose fieldsV1 came back as bytes. */
function asBytes(o: Obj): number[] {
  const mf = (o.metadata as { managedFields?: Obj[] } | undefined)?.managedFields ?? [];
  return mf.flatMap((e, i) => (e.fieldsV1 instanceof Uint8Array ? [i] : []));
}

/** JSON.parse's result from parseForProtobuf's, the bytes parsed back; checks the bytes are JSON.stringify's. */
function asParsed(o: Obj, reference: Obj): Obj {
  const copy = structuredClone(o);
  const mf = (copy.metadata as { managedFields?: Obj[] } | undefined)?.managedFields ?? [];
  const refs = (reference.metadata as { managedFields?: Obj[] } | undefined)?.managedFields ?? [];
  mf.forEach((e, i) => {
    if (!(e.fieldsV1 instanceof Uint8Array)) return;
    const text = Buffer.from(e.fieldsV1).toString('utf8');
    expect(text).toBe(JSON.stringify(refs[i]!.fieldsV1));
    e.fieldsV1 = JSON.parse(text);
  });
  return copy;
}

describe('parseForProtobuf', () => {
  const cases: Array<{ what: string; bytes: Buffer; taken: number[] }> = [
    { what: 'a pod as the server stores it', bytes: json(pod([entry(podFields)])), taken: [0] },
    { what: 'several managers', bytes: json(pod([entry(podFields), entry({ 'f:status': {} }), entry({})])), taken: [0, 1, 2] },
    { what: 'an entry without fieldsV1, or with null', bytes: json(pod([{ manager: 'm' }, entry(null), entry(podFields)])), taken: [2] },
    { what: 'fieldsV1 before other members, and text like a key in strings', bytes: json(pod([{ fieldsV1: podFields, manager: '"fieldsV1":{}' }], { annotations: { a: '"managedFields":[' } })), taken: [0] },
    { what: 'a repeated fieldsV1 (JSON.parse keeps the last)', bytes: Buffer.from('{"metadata":{"managedFields":[{"fieldsV1":{"f:a":{}},"fieldsV1":{"f:b":{}}}]}}'), taken: [0] },
    { what: 'a repeated fieldsV1 whose last is null', bytes: Buffer.from('{"metadata":{"managedFields":[{"fieldsV1":{"f:a":{}},"fieldsV1":null}]}}'), taken: [] },
    { what: 'a repeated managedFields whose last is null', bytes: Buffer.from('{"metadata":{"managedFields":[{"fieldsV1":{"f:a":{}}}],"managedFields":null}}'), taken: [] },
    { what: 'a repeated metadata', bytes: Buffer.from('{"metadata":{"managedFields":[{"fieldsV1":{"f:a":{}}}]},"metadata":{"name":"x"}}'), taken: [] },
    { what: 'fieldsV1 outside metadata.managedFields', bytes: json({ kind: 'ConfigMap', data: { fieldsV1: '{}' }, spec: { managedFields: [{ fieldsV1: {} }] }, metadata: { name: 'x' } }), taken: [] },
    { what: 'a key with an index-like name (V8 orders those first)', bytes: json(pod([entry({ 'f:a': {}, '7': {} }), entry(podFields)])), taken: [] },
    { what: 'a non-ASCII key', bytes: json(pod([entry({ 'f:ünï': {} })])), taken: [] },
    { what: 'an escape JSON.stringify would not write', bytes: Buffer.from('{"metadata":{"managedFields":[{"fieldsV1":{"f:\\u0061":{}}}]}}'), taken: [] },
    { what: 'whitespace', bytes: Buffer.from('{"metadata": {"managedFields":[{"fieldsV1":{"f:a":{}}}]}}'), taken: [] },
    { what: 'whitespace inside fieldsV1', bytes: Buffer.from('{"metadata":{"managedFields":[{"fieldsV1":{"f:a": {}}}]}}'), taken: [] },
    { what: 'a non-object value in fieldsV1', bytes: Buffer.from('{"metadata":{"managedFields":[{"fieldsV1":{"f:a":1}}]}}'), taken: [] },
    { what: 'escaped quotes and backslashes in keys', bytes: json(pod([entry({ 'k:{"name":"a\\\\b\\""}': {} })])), taken: [0] },
    { what: 'no managedFields', bytes: json({ kind: 'Pod', metadata: { name: 'p' }, spec: {} }), taken: [] },
    { what: 'an empty object', bytes: Buffer.from('{}'), taken: [] },
    { what: 'a sample of every value type before metadata', bytes: json({ a: [1, -2.5e3, true, null, 'x"y', { b: [] }], metadata: { labels: { x: '\\' }, managedFields: [entry(podFields)] } }), taken: [0] },
  ];

  it.each(cases)('$what', ({ bytes, taken }) => {
    const reference = JSON.parse(bytes.toString('utf8')) as Obj;
    const out = parseForProtobuf(bytes);
    expect(asBytes(out)).toEqual(taken);
    expect(asParsed(out, reference)).toEqual(reference);
  });

  it('fails on bad JSON as JSON.parse does', () => {
    for (const bad of ['{"metadata":{"managedFields":[{"fieldsV1":{"f:a":{}}}]}', '{"metadata":{"managedFields":[{"fieldsV1":{"f:a":{}}}]}}x', '']) {
      expect(() => parseForProtobuf(Buffer.from(bad))).toThrow(SyntaxError);
    }
  });

  it('gives every kind the protobuf bytes of its plain parse', () => {
    const mismatches: string[] = [];
    let taken = 0;
    for (const name of kindSchemaNames()) {
      const sample = sampleObject(name, { seed: 3 }) as Obj;
      if (typeof sample.metadata !== 'object') continue;
      const bytes = json(sample);
      const fast = parseForProtobuf(bytes);
      taken += asBytes(fast).length;
      const { kind: _k, apiVersion: _a, ...body } = JSON.parse(bytes.toString('utf8')) as Obj;
      const { kind: _k2, apiVersion: _a2, ...fastBody } = fast;
      if (!codec.encodeRaw(fastBody, name).equals(codec.encodeRaw(body, name))) mismatches.push(name);
    }
    expect(mismatches).toEqual([]);
    // The samples' managedFields are compact ASCII objects: the bytes were taken, not re-parsed.
    expect(taken).toBeGreaterThan(100);
  });
});
