import { Decoder as CborxDecoder, Tag } from 'cbor-x';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { decodeCbor, defaultProtoSchema, encodeCbor, encodeCborWatchEvent, frameWatchEvent } from '../codec/index.js';
import { realisticPod } from '../codec/samples/realistic-pod.js';
import { kindSchemaNames, sampleObject } from '../codec/samples/sample-objects.js';
import { createNaming } from '../naming/naming.js';
import { readDataFile } from '../schema/data-files.js';
import { builtinSchemas } from '../schema/openapi-index.js';
import { encodeStored, replaceResourceVersion, withResourceVersion } from '../storedobject/stored-object.js';
import { encodingArena } from '../watchcache/encoding-arena.js';
import { encodingsOf, type CacheEntry } from '../watchcache/types.js';
import { cborSerializer, jsonSerializer, ProtobufSerializer, type Item, type JsonObject, type SchemaNames } from './serializers.js';

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
        // Kept in the encoding arena, as the encoder writes each object alone.
        expect(entries.every((e, i) => encodingArena.get(e.encodings!, 'protobuf')?.equals(pb.codec.encodeRaw(objects[i]!, k.schema.item)))).toBe(true);
      }
      // Protobuf list items carry no kind and apiVersion (the list's envelope does).
      const untyped = objects.map(({ kind: _k, apiVersion: _a, ...rest }) => rest);
      expect(pb.codec.decode(freshList, k.schema.list)).toMatchObject({ kind: k.listKind, metadata: listMeta, items: untyped });
      // Objects that are not cached entries (converted versions, views) are encoded as they come.
      expect(pb.list(k.listKind, 'v1', meta, objects.map((object) => ({ object })), k.schema).equals(freshList)).toBe(true);
    });
  }

  for (const k of kinds) {
    it(`encodes ${k.what} ahead into their memos as a list would: the list then encodes nothing and writes a fresh encoding's bytes`, () => {
      const entries = Array.from({ length: 5 }, (_, i) => entryOf(k.make(i), 200 + i));
      const objects = entries.map(parsed);
      for (const e of entries) pb.encodeAhead(e);
      expect(entries.every((e, i) => encodingArena.get(e.encodings!, 'protobuf')?.equals(pb.codec.encodeRaw(objects[i]!, k.schema.item)))).toBe(true);
      const held = encodingArena.bytes;
      const kept = entries.map((e) => encodingArena.get(e.encodings!, 'protobuf')!);
      const freshList = pb.codec.encode({ kind: k.listKind, apiVersion: 'v1', metadata: listMeta, items: objects }, k.schema.list);
      expect(concat(pb.listChunks(k.listKind, 'v1', meta, entries.map((entry) => ({ entry })), k.schema)).equals(freshList)).toBe(true);
      // The list used what was kept ahead: the same places in the arena, nothing added.
      expect(entries.every((e, i) => encodingArena.get(e.encodings!, 'protobuf')!.byteOffset === kept[i]!.byteOffset)).toBe(true);
      expect(encodingArena.bytes).toBe(held);
      // Once kept, encoding ahead again leaves the memo as it is.
      pb.encodeAhead(entries[0]!);
      expect(encodingArena.get(entries[0]!.encodings!, 'protobuf')!.byteOffset).toBe(kept[0]!.byteOffset);
    });
  }

  it('leaves alone entries of kinds without a message (custom resources) and without a kind', () => {
    const custom = entryOf({ kind: 'Widget', apiVersion: 'example.com/v1', metadata: { name: 'w', namespace: 'default' }, spec: { size: 3 } }, 300);
    const bare = entryOf({ metadata: { name: 'b', namespace: 'default' } }, 301);
    for (const e of [custom, bare]) {
      pb.encodeAhead(e);
      expect(e.encodings === undefined || encodingArena.get(e.encodings, 'protobuf') === undefined).toBe(true);
    }
  });

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
        expect(entries.every((e, i) => encodingArena.get(e.encodings!, 'cbor')?.equals(encodeCbor(objects[i], { schemaName: k.schema.item, selfDescribed: false })))).toBe(true);
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

describe('lists packed into the writer\'s chunks (listChunks with take)', () => {
  const pb = new ProtobufSerializer(createNaming('cluster'));
  const cbor = cborSerializer();
  const entries = Array.from({ length: 40 }, (_, i) => entryOf(realisticPod(i), 300 + i));
  const items: Item[] = entries.map((entry) => ({ entry }));
  const schema = kinds[0]!.schema;
  // Chunk sizes that split items, commas, heads and tails at every kind of place.
  it.each([7, 8, 13, 64, 1000, 4096, 65536])('equal the whole list with %i-byte chunks, every chunk but the last (or one before a view of kept items) full', (size) => {
    const taken = new Set<ArrayBufferLike>();
    const take = () => {
      const b = Buffer.alloc(size);
      taken.add(b.buffer);
      return b;
    };
    for (const [name, whole, chunks] of [
      ['JSON', jsonSerializer.list('PodList', 'v1', meta, items), jsonSerializer.listChunks!('PodList', 'v1', meta, items, schema, take)],
      ['protobuf', pb.list('PodList', 'v1', meta, items, schema), pb.listChunks('PodList', 'v1', meta, items, schema, take)],
      ['CBOR', cbor.list('PodList', 'v1', meta, items, schema), cbor.listChunks!('PodList', 'v1', meta, items, schema, take)],
    ] as const) {
      const got = [...chunks];
      expect(Buffer.concat(got).equals(whole), name).toBe(true);
      expect(chunks.byteLength, name).toBe(whole.length);
      // JSON's chunks are all the caller's; protobuf's first (envelope and list metadata) is its
      // own, and protobuf and CBOR write items kept one after another as views of their slab.
      if (name === 'JSON') expect(got.every((c) => taken.has(c.buffer))).toBe(true);
      const beforeView = (i: number) => i + 1 < got.length && !taken.has(got[i + 1]!.buffer);
      expect(got.slice(0, -1).every((c, i) => !taken.has(c.buffer) || beforeView(i) || c.length === size || (name === 'protobuf' && c.length > size - 7)), name).toBe(true);
    }
  });

  it('JSON: an empty list is the head and tail', () => {
    const chunks = jsonSerializer.listChunks!('PodList', 'v1', meta, [], schema, () => Buffer.alloc(16));
    const whole = jsonSerializer.list('PodList', 'v1', meta, []);
    expect(Buffer.concat([...chunks]).equals(whole)).toBe(true);
    expect(chunks.byteLength).toBe(whole.length);
  });

  it('JSON: a list with items that are not cached bytes has no length up front', () => {
    const mixed: Item[] = [items[0]!, { object: parsed(entries[1]!) }];
    const chunks = jsonSerializer.listChunks!('PodList', 'v1', meta, mixed, schema, () => Buffer.alloc(4096));
    expect(chunks.byteLength).toBeUndefined();
    expect(Buffer.concat([...chunks]).equals(jsonSerializer.list('PodList', 'v1', meta, mixed))).toBe(true);
  });
});

describe('protobuf lists written from where their items are kept', () => {
  const pb = new ProtobufSerializer(createNaming('cluster'));
  const schema = kinds[0]!.schema;
  const pods = (from: number, n: number): Item[] => Array.from({ length: n }, (_, i) => ({ entry: entryOf(realisticPod(from + i), 1000 + from + i) }));
  const whole = (items: Item[]) => pb.codec.encode({ kind: 'PodList', apiVersion: 'v1', metadata: listMeta, items: items.map((i) => ('entry' in i ? parsed(i.entry) : i.object)) }, schema.list);
  /** Chunks from the writer's pool, told apart from views of where the items are kept. */
  const pool = (size: number) => {
    const taken = new Set<ArrayBufferLike>();
    const take = () => {
      const b = Buffer.alloc(size);
      taken.add(b.buffer);
      return b;
    };
    return { take, views: (chunks: Buffer[]) => chunks.slice(1).filter((c) => !taken.has(c.buffer)) };
  };

  it('writes items kept one after another as views of their slab, and the same bytes in any order or mix', () => {
    const items = pods(0, 200);
    const { take, views } = pool(65536);
    // The first list encodes and keeps every item, in list order; the second reads them.
    for (let round = 0; round < 2; round++) {
      const chunks = [...pb.listChunks('PodList', 'v1', meta, items, schema, take)];
      expect(concat(chunks).equals(whole(items)), `round ${round}`).toBe(true);
      expect(views(chunks).length, `round ${round}`).toBeGreaterThan(0);
      expect(views(chunks).every((v) => v.length >= 65536)).toBe(true);
    }
    const orders: Record<string, Item[]> = {
      reversed: [...items].reverse(),
      'every other item': items.filter((_, i) => i % 2 === 0),
      rotated: [...items.slice(150), ...items.slice(0, 150)],
      'with objects among them': items.map((item, i) => (i % 50 === 7 && 'entry' in item ? { object: parsed(item.entry) } : item)),
      'with items encoded by this list': [...items.slice(0, 100), ...pods(500, 30), ...items.slice(100)],
      'one item twice': [...items.slice(0, 120), items[119]!, ...items.slice(120)],
    };
    for (const [name, list] of Object.entries(orders)) {
      for (const size of [7, 4096, 65536]) expect(concat(pb.listChunks('PodList', 'v1', meta, list, schema, pool(size).take)).equals(whole(list)), `${name}, ${size}-byte chunks`).toBe(true);
    }
  });

  it('copies items kept without the list item\'s header before them', () => {
    const items = pods(700, 60);
    for (const item of items) {
      if (!('entry' in item)) continue;
      const raw = pb.codec.encodeStoredRaw(item.entry.bytes, schema.item);
      encodingArena.keep(encodingsOf(item.entry), 'protobuf', raw, raw.length);
    }
    const { take, views } = pool(65536);
    const chunks = [...pb.listChunks('PodList', 'v1', meta, items, schema, take)];
    expect(concat(chunks).equals(whole(items))).toBe(true);
    expect(views(chunks)).toEqual([]);
  });
});

describe('CBOR lists written from where their items are kept', () => {
  const cbor = cborSerializer();
  const schema = kinds[0]!.schema;
  it('writes items kept one after another as a view of their slab, and the same bytes in any order or mix', () => {
    const entries = Array.from({ length: 200 }, (_, i) => entryOf(realisticPod(900 + i), 2000 + i));
    const items: Item[] = entries.map((entry) => ({ entry }));
    const whole = (list: Item[]) => encodeCbor({ kind: 'PodList', apiVersion: 'v1', metadata: listMeta, items: list.map((i) => ('entry' in i ? parsed(i.entry) : i.object)) }, { schemaName: schema.list });
    const taken = new Set<ArrayBufferLike>();
    const take = (size: number) => () => {
      const b = Buffer.alloc(size);
      taken.add(b.buffer);
      return b;
    };
    for (let round = 0; round < 2; round++) {
      const chunks = [...cbor.listChunks!('PodList', 'v1', meta, items, schema, take(65536))];
      expect(Buffer.concat(chunks).equals(whole(items)), `round ${round}`).toBe(true);
      const views = chunks.filter((c) => !taken.has(c.buffer));
      expect(views.length, `round ${round}`).toBeGreaterThan(0);
      expect(views.every((v) => v.length >= 65536)).toBe(true);
    }
    const orders: Record<string, Item[]> = {
      reversed: [...items].reverse(),
      'every other item': items.filter((_, i) => i % 2 === 0),
      'with objects among them': items.map((item, i) => (i % 50 === 7 && 'entry' in item ? { object: parsed(item.entry) } : item)),
      'one item twice': [...items.slice(0, 120), items[119]!, ...items.slice(120)],
    };
    for (const [name, list] of Object.entries(orders)) {
      for (const size of [7, 4096, 65536]) expect(Buffer.concat([...cbor.listChunks!('PodList', 'v1', meta, list, schema, take(size))]).equals(whole(list)), `${name}, ${size}-byte chunks`).toBe(true);
    }
  });
});

/**
 * The built-in kinds that have a list kind, with sample objects as the cache would hold them
 * (named, namespaced, at a resourceVersion): lists assembled from per-entry memos must be the
 * bytes the whole-list encoders write, for every kind, not only the hand-picked ones above.
 */
describe('lists assembled from memoised items, for every built-in kind', () => {
  const naming = createNaming('cluster');
  const listed = kindSchemaNames().flatMap((item) => {
    const list = `${item}List`;
    const items = builtinSchemas.get(list)?.properties?.items;
    const gvk = builtinSchemas.get(item)?.['x-kubernetes-group-version-kind']?.[0];
    return items && gvk && builtinSchemas.get(item)?.properties?.metadata ? [{ schema: { item, list }, listKind: `${gvk.kind}List` }] : [];
  });
  const samples = (item: string): { entries: CacheEntry[]; objects: JsonObject[] } => {
    const entries = [1, 2, 3].map((seed) => {
      const o = sampleObject(item, { seed, naming }) as JsonObject;
      return entryOf({ ...o, metadata: { ...(o.metadata as JsonObject), name: `n${seed}`, namespace: 'ns' } }, 40 + seed);
    });
    return { entries, objects: entries.map(parsed) };
  };

  it('covers the kinds', () => {
    expect(listed.length).toBeGreaterThan(60);
    expect(listed.map((k) => k.listKind)).toEqual(expect.arrayContaining(['PodList', 'SecretList', 'DeploymentList', 'CustomResourceDefinitionList', 'EventList']));
  });

  it('protobuf: memo-assembled lists equal the whole-list encoding, and protobufjs reads every item back as our decoder does', () => {
    const pb = new ProtobufSerializer(naming);
    const root = protobuf.Root.fromJSON(JSON.parse(readDataFile('k8s-protos.json')) as protobuf.INamespace);
    const mismatches: string[] = [];
    for (const { schema, listKind } of listed) {
      const { entries, objects } = samples(schema.item);
      const apiVersion = String(objects[0]!.apiVersion);
      const whole = pb.codec.encode({ kind: listKind, apiVersion, metadata: listMeta, items: objects }, schema.list);
      const items: Item[] = entries.map((entry) => ({ entry }));
      for (let round = 0; round < 2; round++) {
        if (!concat(pb.listChunks(listKind, apiVersion, meta, items, schema)).equals(whole)) mismatches.push(`${listKind} (round ${round})`);
      }
      // protobufjs, from the same descriptors, splits the list into the memo's items and
      // re-encodes each to the same bytes; our decoder gives back each cached JSON object.
      const listType = root.lookupType(defaultProtoSchema().messageFor(schema.list)!);
      const itemType = root.lookupType(defaultProtoSchema().messageFor(schema.item)!);
      const decoded = listType.decode(pb.codec.readEnvelope(whole).raw) as unknown as { items: protobuf.Message[] };
      expect(decoded.items.length).toBe(entries.length);
      decoded.items.forEach((item, i) => {
        const again = Buffer.from(itemType.encode(item).finish());
        if (!again.equals(encodingArena.get(entries[i]!.encodings!, 'protobuf')!)) mismatches.push(`${listKind} item ${i} (protobufjs)`);
      });
      const { kind: _k, apiVersion: _a, ...untyped } = objects[0]!;
      expect(pb.codec.decodeRaw(encodingArena.get(entries[0]!.encodings!, 'protobuf')!, schema.item)).toEqual(untyped);
    }
    expect(mismatches).toEqual([]);
  });

  it('CBOR: memo-assembled lists equal the whole-list encoding, and cbor-x reads back the JSON objects', () => {
    const cbor = cborSerializer();
    const cborx = new CborxDecoder({ mapsAsObjects: false, useRecords: false });
    const mismatches: string[] = [];
    for (const { schema, listKind } of listed) {
      const { entries, objects } = samples(schema.item);
      const apiVersion = String(objects[0]!.apiVersion);
      const value = { kind: listKind, apiVersion, metadata: listMeta, items: objects };
      const whole = encodeCbor(value, { schemaName: schema.list });
      const items: Item[] = entries.map((entry) => ({ entry }));
      for (let round = 0; round < 2; round++) {
        if (!concat(cbor.listChunks!(listKind, apiVersion, meta, items, schema)).equals(whole)) mismatches.push(`${listKind} (round ${round})`);
      }
      expect(jsonForm(cborx.decode(whole))).toEqual(value);
      expect(decodeCbor(whole, { maxArrayElements: 10 }).value).toEqual(value);
    }
    expect(mismatches).toEqual([]);
  });
});

/** cbor-x's reading of our CBOR in the JSON form: byte strings as text, tag 22 (base64 expected) as base64. */
function jsonForm(v: unknown): unknown {
  if (v instanceof Tag) return v.tag === 22 && v.value instanceof Uint8Array ? Buffer.from(v.value).toString('base64') : jsonForm(v.value);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(jsonForm);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [jsonForm(k), jsonForm(x)]));
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonForm(x)]));
  return v;
}
