import { describe, expect, it } from 'vitest';
import { decodeCbor, encodeCbor, encodeCborWatchEvent, frameWatchEvent } from '../codec/index.js';
import { realisticPod } from '../codec/samples/realistic-pod.js';
import { createNaming } from '../naming/naming.js';
import { encodeStored, replaceResourceVersion, withResourceVersion } from '../storedobject/stored-object.js';
import type { CacheEntry } from '../watchcache/types.js';
import { cborSerializer, ProtobufSerializer, type Item, type JsonObject, type SchemaNames } from './serializers.js';

const entryOf = (obj: JsonObject, revision: number): CacheEntry => {
  const meta = obj.metadata as { name: string; namespace: string };
  return { key: `/registry/x/${meta.namespace}/${meta.name}`, namespace: meta.namespace, name: meta.name, revision, bytes: withResourceVersion(encodeStored(obj), revision), labels: {}, fields: {} };
};
const parsed = (e: CacheEntry): JsonObject => JSON.parse(e.bytes.toString('utf8')) as JsonObject;

// A Secret has `format: byte` fields (data), which CBOR writes as tagged byte strings.
const secret = (i: number): JsonObject => ({ kind: 'Secret', apiVersion: 'v1', metadata: { name: `s${i}`, namespace: 'default', labels: { n: String(i) } }, type: 'Opaque', data: { k: Buffer.from(`value ${i}`).toString('base64') } });

const kinds: Array<{ what: string; make: (i: number) => JsonObject; schema: Required<SchemaNames>; listKind: string }> = [
  { what: 'pods', make: (i) => realisticPod(i), schema: { item: 'io.k8s.api.core.v1.Pod', list: 'io.k8s.api.core.v1.PodList' }, listKind: 'PodList' },
  { what: 'secrets', make: secret, schema: { item: 'io.k8s.api.core.v1.Secret', list: 'io.k8s.api.core.v1.SecretList' }, listKind: 'SecretList' },
];
const meta = { resourceVersion: '900', continue: 'abc', remainingItemCount: 3 };
const listMeta = { resourceVersion: '900', continue: 'abc', remainingItemCount: 3 };
const concat = (parts: Iterable<Buffer>) => Buffer.concat([...parts]);

describe('protobuf from the entries\' memoised encodings', () => {
  const pb = new ProtobufSerializer(createNaming('cluster'));
  for (const k of kinds) {
    it(`writes ${k.what} lists, gets and watch events byte for byte as a fresh encoding, before and after the memo is filled`, () => {
      const entries = Array.from({ length: 5 }, (_, i) => entryOf(k.make(i), 100 + i));
      const items: Item[] = entries.map((entry) => ({ entry }));
      const objects = entries.map(parsed);
      const freshList = pb.codec.encode({ kind: k.listKind, apiVersion: 'v1', metadata: listMeta, items: objects }, k.schema.list);
      for (let round = 0; round < 2; round++) {
        expect(pb.list(k.listKind, 'v1', meta, items, k.schema).equals(freshList)).toBe(true);
        expect(concat(pb.listChunks(k.listKind, 'v1', meta, items, k.schema)).equals(freshList)).toBe(true);
        expect(pb.cachedObject(entries[2]!, k.schema).equals(pb.codec.encode(objects[2]!, k.schema.item))).toBe(true);
        const freshEvent = frameWatchEvent(pb.codec.encodeWatchEvent('MODIFIED', objects[1]!, k.schema.item));
        expect(pb.watchEvent('MODIFIED', items[1]!, k.schema).equals(freshEvent)).toBe(true);
        expect(entries.every((e) => e.encodings?.protobuf !== undefined)).toBe(true);
      }
      // Protobuf list items carry no kind and apiVersion (the list's envelope does).
      const untyped = objects.map(({ kind: _k, apiVersion: _a, ...rest }) => rest);
      expect(pb.codec.decode(freshList, k.schema.list)).toMatchObject({ kind: k.listKind, metadata: listMeta, items: untyped });
      // Objects that are not cached entries (converted versions, views) are encoded as they come.
      expect(pb.list(k.listKind, 'v1', meta, objects.map((object) => ({ object })), k.schema).equals(freshList)).toBe(true);
    });
  }

  it('writes an empty list as a fresh encoding does', () => {
    const fresh = pb.codec.encode({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [] }, 'io.k8s.api.core.v1.PodList');
    expect(pb.list('PodList', 'v1', { resourceVersion: '7' }, [], kinds[0]!.schema).equals(fresh)).toBe(true);
  });

  it('does not serve an entry\'s memo from a copy at another resourceVersion (the last state of a DELETED event)', () => {
    const entry = entryOf(realisticPod(1), 10);
    const schema = kinds[0]!.schema;
    pb.cachedObject(entry, schema);
    const deleted: CacheEntry = { ...entry, revision: 11, bytes: replaceResourceVersion(entry.bytes, 11) };
    const out = pb.codec.decode(pb.cachedObject(deleted, schema), schema.item) as { metadata: { resourceVersion: string } };
    expect(out.metadata.resourceVersion).toBe('11');
    expect((pb.codec.decode(pb.cachedObject(entry, schema), schema.item) as typeof out).metadata.resourceVersion).toBe('10');
  });
});

describe('CBOR from the entries\' memoised encodings', () => {
  const cbor = cborSerializer();
  for (const k of kinds) {
    it(`writes ${k.what} lists, gets and watch events byte for byte as a fresh encoding, before and after the memo is filled`, () => {
      const entries = Array.from({ length: 5 }, (_, i) => entryOf(k.make(i), 100 + i));
      const items: Item[] = entries.map((entry) => ({ entry }));
      const objects = entries.map(parsed);
      const listValue = { kind: k.listKind, apiVersion: 'v1', metadata: listMeta, items: objects };
      const freshList = encodeCbor(listValue, { schemaName: k.schema.list });
      for (let round = 0; round < 2; round++) {
        expect(cbor.list(k.listKind, 'v1', meta, items, k.schema).equals(freshList)).toBe(true);
        expect(concat(cbor.listChunks!(k.listKind, 'v1', meta, items, k.schema)).equals(freshList)).toBe(true);
        expect(cbor.cachedObject!(entries[3]!, k.schema).equals(encodeCbor(objects[3], { schemaName: k.schema.item }))).toBe(true);
        expect(cbor.watchEvent('ADDED', items[0]!, k.schema).equals(encodeCborWatchEvent('ADDED', objects[0], { schemaName: k.schema.item }))).toBe(true);
        expect(entries.every((e) => e.encodings?.cbor !== undefined)).toBe(true);
      }
      expect(decodeCbor(freshList).value).toEqual(listValue);
      expect(cbor.list(k.listKind, 'v1', meta, objects.map((object) => ({ object })), k.schema).equals(freshList)).toBe(true);
    });
  }

  it('writes byte fields as tagged byte strings in lists and watch events too, as in a get', () => {
    const entry = entryOf(secret(1), 5);
    const list = cbor.list('SecretList', 'v1', { resourceVersion: '5' }, [{ entry }], kinds[1]!.schema);
    // tag 22 (0xd6) then the byte string of the raw value
    expect(list.includes(Buffer.concat([Buffer.from([0xd6, 0x47]), Buffer.from('value 1')]))).toBe(true);
  });
});
