// internal/http/serializers owns the wire formats of responses: JSON, YAML, protobuf and CBOR
// writers for objects, lists and framed watch events, and the request-body readers that go
// with them. JSON writes the watch cache's serving bytes as they are (serialize once, write
// many); protobuf and CBOR encode a cached object once, on first use, into the entry's
// encodings memo, and gets, lists and watch events of it are then assembled from those bytes
// (a list is its head, the items' bytes referenced, and its tail). Imports: codec, watchcache
// (types, encoding-arena), apierrors, chunk-pool (whether a list is streaming, for encoding ahead).

import { decodeCbor, decodeJson, decodeYaml, EncodedCbor, encodeCbor, encodeCborParts, encodeCborWatchEvent, encodeYaml, frameWatchEvent, ProtobufCodec, SELF_DESCRIBED_CBOR } from '../codec/index.js';
import { errors } from '../apierrors/status.js';
import type { Naming } from '../naming/naming.js';
import { typeMetaOf } from '../storedobject/stored-object.js';
import { aheadEncoding, encodingArena } from '../watchcache/encoding-arena.js';
import { listChunkPool } from './chunk-pool.js';
import { encodingsOf, type CacheEntry, type EntryEncodings } from '../watchcache/types.js';

export type JsonObject = Record<string, unknown>;

export interface ListMeta {
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** An item of a list or watch event: cached bytes (fast path) or an object. */
export type Item = { entry: CacheEntry } | { object: JsonObject };

export function itemObject(item: Item): JsonObject {
  return 'entry' in item ? (JSON.parse(item.entry.bytes.toString('utf8')) as JsonObject) : item.object;
}

/** A list's chunks; `byteLength`, when known before they are made, is their total. */
export type ListChunks = Iterable<Buffer> & { readonly byteLength?: number };

/** Which schema to encode with (protobuf needs it; the others ignore it). */
export interface SchemaNames {
  item?: string;
  list?: string;
}

export interface Serializer {
  readonly name: 'json' | 'yaml' | 'protobuf' | 'cbor';
  readonly mediaType: string;
  /** Content-Type of a watch stream, or undefined when the format cannot stream (YAML). */
  readonly watchMediaType: string | undefined;
  object(obj: JsonObject, schema?: SchemaNames): Buffer;
  /**
   * Optional: the same body as object() for a cached object, from its memoised encoding (made
   * on first use). Formats without it are written with object() of the parsed entry.
   */
  cachedObject?(entry: CacheEntry, schema: SchemaNames): Buffer;
  list(kind: string, apiVersion: string, meta: ListMeta, items: readonly Item[], schema?: SchemaNames): Buffer;
  watchEvent(type: string, item: Item, schema?: SchemaNames): Buffer;
  /** Optional: the same event as buffers to write in sequence, without copying cached bytes. */
  watchEventParts?(type: string, item: Item, schema?: SchemaNames): Buffer[];
  /**
   * The list as a sequence of chunks, for streaming large lists without building them whole.
   * Optional: formats without it are written with list(). With `take`, a format that copies
   * into chunks of its own takes them from there (chunk-pool's CHUNK_BYTES each) and yields
   * them (or their start) for the writer to give back once written.
   */
  listChunks?(kind: string, apiVersion: string, meta: ListMeta, items: readonly Item[], schema?: SchemaNames, take?: () => Buffer): ListChunks;
}

const COMMA = Buffer.from(',');
// Go's encoder ends each value with a newline.
const LIST_TAIL = Buffer.from(']}\n');

function listMetaObject(meta: ListMeta): JsonObject {
  const m: JsonObject = { resourceVersion: meta.resourceVersion };
  if (meta.continue) m.continue = meta.continue;
  if (meta.remainingItemCount !== undefined) m.remainingItemCount = meta.remainingItemCount;
  return m;
}

const jsonItemBytes = (item: Item): Buffer => ('entry' in item ? item.entry.bytes : Buffer.from(JSON.stringify(item.object)));

/** A JSON list (`{"kind":…,"items":[…]}` and a newline) of items already encoded as JSON. */
export function jsonListOfItemBytes(kind: string, apiVersion: string, meta: ListMeta, items: readonly Buffer[]): Buffer {
  const head = Buffer.from(`{"kind":${JSON.stringify(kind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(listMetaObject(meta))},"items":[`);
  const parts: Buffer[] = [head];
  let size = head.length + 2;
  items.forEach((b, i) => {
    if (i > 0) {
      parts.push(COMMA);
      size++;
    }
    parts.push(b);
    size += b.length;
  });
  parts.push(LIST_TAIL);
  return Buffer.concat(parts, size + 1);
}

const jsonEventHeads = new Map<string, Buffer>();
const JSON_EVENT_TAIL = Buffer.from('}\n');

/**
 * A JSON watch event as the buffers to write in sequence. A cached object's serving bytes are
 * referenced, not copied: a batch of events is then assembled with one copy (and shared by
 * every stream that drains the same batch, see watch-batches).
 */
function jsonWatchEventParts(type: string, item: Item): Buffer[] {
  let head = jsonEventHeads.get(type);
  if (!head) {
    head = Buffer.from(`{"type":${JSON.stringify(type)},"object":`);
    jsonEventHeads.set(type, head);
  }
  return [head, jsonItemBytes(item), JSON_EVENT_TAIL];
}

/** A JSON list's head, items and tail; packed into chunks from `take` when given. */
function* jsonListChunks(head: Buffer, items: readonly Item[], take: (() => Buffer) | undefined): Generator<Buffer> {
  if (take === undefined) {
    yield head;
    for (let i = 0; i < items.length; i++) {
      if (i > 0) yield COMMA;
      yield jsonItemBytes(items[i]!);
    }
    yield LIST_TAIL;
    return;
  }
  // Packed into the caller's chunks here: the writer then handles a chunk, not each item. The
  // loop is packedParts' with the comma written as a byte; feeding packedParts from a generator
  // of the parts cost 0.2-0.8 ms more CPU per 10,000-item list (a generator resume per part).
  let chunk = take();
  let p = 0;
  for (let i = -1; i <= items.length; i++) {
    if (i > 0 && i < items.length) {
      if (p === chunk.length) {
        yield chunk;
        chunk = take();
        p = 0;
      }
      chunk[p++] = 0x2c; // ','
    }
    const src = i < 0 ? head : i === items.length ? LIST_TAIL : jsonItemBytes(items[i]!);
    let from = 0;
    while (from < src.length) {
      if (p === chunk.length) {
        yield chunk;
        chunk = take();
        p = 0;
      }
      const count = Math.min(src.length - from, chunk.length - p);
      // A plain Uint8Array view where an item is split (cheaper than a Buffer's subarray).
      chunk.set(count === src.length ? src : new Uint8Array(src.buffer, src.byteOffset + from, count), p);
      p += count;
      from += count;
    }
  }
  yield chunk.subarray(0, p);
}

export const jsonSerializer: Serializer = {
  name: 'json',
  mediaType: 'application/json',
  watchMediaType: 'application/json',
  object: (obj) => Buffer.from(`${JSON.stringify(obj)}\n`),
  list(kind, apiVersion, meta, items) {
    return jsonListOfItemBytes(kind, apiVersion, meta, items.map(jsonItemBytes));
  },
  watchEvent: (type, item) => Buffer.concat(jsonWatchEventParts(type, item)),
  watchEventParts: jsonWatchEventParts,
  listChunks(kind, apiVersion, meta, items, _schema, take) {
    const head = Buffer.from(`{"kind":${JSON.stringify(kind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(listMetaObject(meta))},"items":[`);
    const chunks = jsonListChunks(head, items, take);
    // The length is known up front when every item is a cached object's bytes.
    let length = head.length + LIST_TAIL.length + Math.max(0, items.length - 1);
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (!('entry' in item)) return chunks;
      length += item.entry.bytes.length;
    }
    return Object.assign(chunks, { byteLength: length });
  },
};

export const yamlSerializer: Serializer = {
  name: 'yaml',
  mediaType: 'application/yaml',
  watchMediaType: undefined,
  object: (obj) => encodeYaml(obj),
  list: (kind, apiVersion, meta, items) => encodeYaml({ apiVersion, items: items.map(itemObject), kind, metadata: listMetaObject(meta) }),
  watchEvent: () => {
    throw errors.notAcceptable(['application/json']);
  },
};

/** A cached object's CBOR data item (no self-described tag), encoded once per entry (while the encoding arena keeps it). */
function cborItem(item: Item, schemaName: string | undefined): Buffer {
  const options = { selfDescribed: false, ...(schemaName ? { schemaName } : {}) };
  if ('object' in item) return encodeCbor(item.object, options);
  const memo = encodingsOf(item.entry);
  const kept = encodingArena.get(memo, 'cbor');
  if (kept) return kept;
  const encoded = encodeCbor(itemObject(item), options);
  return encodingArena.keep(memo, 'cbor', encoded, encoded.length);
}

/** Parts lying one after another in one buffer over at least this many bytes are written as a view of it, not copied. */
const PART_VIEW_MIN = 64 * 1024;

/**
 * `parts` copied in sequence into chunks from `take`, every chunk full but the one before a
 * view and the last; parts lying one after another in one buffer (a collection's CBOR items
 * kept in list order in their arena slab) are taken together, and written as one view of
 * that buffer when they come to PART_VIEW_MIN bytes or more.
 */
function* packedParts(parts: readonly Buffer[], take: () => Buffer): Generator<Buffer> {
  let chunk: Buffer | undefined;
  let p = 0;
  for (let k = 0; k < parts.length; ) {
    let src = parts[k]!;
    let length = src.length;
    let next = k + 1;
    for (; next < parts.length; next++) {
      const part = parts[next]!;
      if (part.buffer !== src.buffer || part.byteOffset !== src.byteOffset + length) break;
      length += part.length;
    }
    if (next > k + 1) src = Buffer.from(src.buffer, src.byteOffset, length);
    k = next;
    if (length >= PART_VIEW_MIN) {
      if (chunk !== undefined && p > 0) {
        yield chunk.subarray(0, p);
        chunk = undefined;
        p = 0;
      }
      yield src;
      continue;
    }
    let from = 0;
    while (from < length) {
      if (chunk === undefined || p === chunk.length) {
        if (chunk !== undefined) yield chunk;
        chunk = take();
        p = 0;
      }
      const count = Math.min(length - from, chunk.length - p);
      chunk.set(count === length ? src : new Uint8Array(src.buffer, src.byteOffset + from, count), p);
      p += count;
      from += count;
    }
  }
  if (chunk !== undefined) yield chunk.subarray(0, p);
}

export function cborSerializer(): Serializer {
  const listParts = (kind: string, apiVersion: string, meta: ListMeta, items: readonly Item[], schema?: SchemaNames): Buffer[] =>
    encodeCborParts({ kind, apiVersion, metadata: listMetaObject(meta), items: items.map((i) => new EncodedCbor(cborItem(i, schema?.item))) });
  return {
    name: 'cbor',
    mediaType: 'application/cbor',
    watchMediaType: 'application/cbor-seq',
    object: (obj, schema) => encodeCbor(obj, schema?.item ? { schemaName: schema.item } : {}),
    cachedObject: (entry, schema) => {
      const item = cborItem({ entry }, schema.item);
      return Buffer.concat([SELF_DESCRIBED_CBOR, item], SELF_DESCRIBED_CBOR.length + item.length);
    },
    list: (kind, apiVersion, meta, items, schema) => Buffer.concat(listParts(kind, apiVersion, meta, items, schema)),
    listChunks: (kind, apiVersion, meta, items, schema, take) => {
      const parts = listParts(kind, apiVersion, meta, items, schema);
      if (take === undefined) return parts;
      let length = 0;
      for (const part of parts) length += part.length;
      return Object.assign(packedParts(parts, take), { byteLength: length });
    },
    watchEvent: (type, item, schema) => encodeCborWatchEvent(type, cborItem(item, schema?.item)),
  };
}

/** The tag of a list message's `items` (field 2, length-delimited): every built-in list's. */
const LIST_ITEM_TAG = 0x12;

/**
 * Protobuf: envelopes, lists from per-entry cached bytes, length-framed watch events. The
 * codec is built on first use, not at start-up (a few MB of RSS and ~10 ms; message encoders compile per kind on first use).
 */
export class ProtobufSerializer implements Serializer {
  readonly name = 'protobuf' as const;
  readonly mediaType: string;
  readonly watchMediaType: string;
  private built: ProtobufCodec | undefined;

  constructor(private readonly naming: Naming) {
    this.mediaType = naming.protobufMediaType;
    this.watchMediaType = `${naming.protobufMediaType};stream=watch`;
    // The process has one arena and one ahead encoding: the latest serializer encodes (an
    // object's message does not depend on the naming, only finding its schema does).
    aheadEncoding.setEncoder(this.encodeAhead);
    aheadEncoding.setBusy(() => listChunkPool.streaming);
  }

  /**
   * Keeps a cached built-in object's message in its memo, as a list would keep it (see
   * AheadEncoding): the same bytes, made before a reader asks. Entries of kinds without a
   * message (custom resources) are left alone.
   */
  readonly encodeAhead = (entry: CacheEntry): void => {
    const memo = encodingsOf(entry);
    if (memo.protobuf?.buffer !== undefined) return;
    const { apiVersion, kind } = typeMetaOf(entry.bytes);
    const schema = apiVersion === '' || kind === '' ? undefined : this.codec.schemaNameFor(apiVersion, kind);
    if (schema === undefined || !this.supports(schema)) return;
    this.storing = memo;
    try {
      this.codec.withStoredRaw(entry.bytes, schema, this.storeAhead);
    } finally {
      this.storing = undefined;
    }
  };

  get codec(): ProtobufCodec {
    this.built ??= new ProtobufCodec(this.naming);
    return this.built;
  }

  get codecBuilt(): boolean {
    return this.built !== undefined;
  }

  /** Every built-in kind has a message; custom resources (no upstream schema name) do not. */
  supports(schemaName: string | undefined): boolean {
    return schemaName !== undefined && schemaName.startsWith('io.k8s.') && (this.built === undefined || this.built.supports(schemaName));
  }

  /**
   * The object's raw message: a cached object's is encoded once and kept in its entry's memo
   * (while the encoding arena keeps it), behind a list item's field header, so that the items
   * a list encodes one after another lie in their slab as that list writes them.
   */
  /** The memo storeListed keeps into: one function for every item, instead of a closure per item. */
  private storing: EntryEncodings | undefined;
  private readonly storeListed = (buf: Buffer, length: number): boolean => encodingArena.store(this.storing!, 'protobuf', buf, length, LIST_ITEM_TAG);
  /** As storeListed, into the ahead encoding's own arena. */
  private readonly storeAhead = (buf: Buffer, length: number): boolean => aheadEncoding.arena.store(this.storing!, 'protobuf', buf, length, LIST_ITEM_TAG);

  private rawOf(item: Item, schemaName: string): Buffer {
    if ('object' in item) return this.codec.encodeRaw(item.object, schemaName);
    const memo = encodingsOf(item.entry);
    return encodingArena.get(memo, 'protobuf') ?? this.codec.withStoredRaw(item.entry.bytes, schemaName, (buf, length) => encodingArena.keep(memo, 'protobuf', buf, length, LIST_ITEM_TAG));
  }

  object(obj: JsonObject, schema?: SchemaNames): Buffer {
    if (!schema?.item) throw errors.notAcceptable(['application/json']);
    return this.codec.encode(obj, schema.item);
  }

  cachedObject(entry: CacheEntry, schema: SchemaNames): Buffer {
    if (!schema.item) throw errors.notAcceptable(['application/json']);
    const { apiVersion, kind } = typeMetaOf(entry.bytes);
    return this.codec.wrapEnvelope(apiVersion, kind, this.rawOf({ entry }, schema.item));
  }

  list(kind: string, apiVersion: string, meta: ListMeta, items: readonly Item[], schema?: SchemaNames): Buffer {
    return Buffer.concat([...this.listChunks(kind, apiVersion, meta, items, schema)]);
  }

  /**
   * The list of items given as their compact JSON (not cache entries: nothing is kept), each
   * transcoded from its bytes as a cached object's first encoding is: the same bytes as list()
   * of the parsed items.
   */
  listOfJsonItems(kind: string, apiVersion: string, meta: ListMeta, items: readonly Buffer[], schema: SchemaNames): Buffer {
    if (!schema.item || !schema.list) throw errors.notAcceptable(['application/json']);
    const n = items.length;
    const sources = items.map((bytes) => this.codec.encodeStoredRaw(bytes, schema.item!));
    const lengths = Int32Array.from(sources, (s) => s.length);
    return Buffer.concat([...this.codec.encodeListChunks(apiVersion, kind, schema.list, listMetaObject(meta), sources, new Int32Array(n), lengths)]);
  }

  listChunks(kind: string, apiVersion: string, meta: ListMeta, items: readonly Item[], schema?: SchemaNames, take?: () => Buffer): ListChunks {
    if (!schema?.item || !schema.list) throw errors.notAcceptable(['application/json']);
    // Where each item's message is: a cached one's slab and place in it (no object per item).
    const n = items.length;
    const sources = new Array<Uint8Array>(n);
    const offsets = new Int32Array(n);
    const lengths = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const item = items[i]!;
      if ('entry' in item) {
        const memo = encodingsOf(item.entry);
        let slab = encodingArena.slabOf(memo, 'protobuf');
        if (slab === undefined) {
          // Encoded now and kept as rawOf keeps it, then read from where it was kept (a first
          // list allocates nothing per item but the memo).
          this.storing = memo;
          const kept = this.codec.withStoredRaw(item.entry.bytes, schema.item, this.storeListed);
          this.storing = undefined;
          slab = kept ? encodingArena.slabOf(memo, 'protobuf') : undefined;
        }
        if (slab) {
          sources[i] = slab;
          offsets[i] = memo.protobufOffset;
          lengths[i] = memo.protobufLength;
          continue;
        }
      }
      const raw = this.rawOf(item, schema.item);
      sources[i] = raw;
      lengths[i] = raw.length;
    }
    return this.codec.encodeListChunks(apiVersion, kind, schema.list, listMetaObject(meta), sources, offsets, lengths, take);
  }

  watchEvent(type: string, item: Item, schema?: SchemaNames): Buffer {
    if (!schema?.item) throw errors.notAcceptable(['application/json']);
    const { apiVersion, kind } = 'entry' in item ? typeMetaOf(item.entry.bytes) : { apiVersion: String(item.object.apiVersion ?? ''), kind: String(item.object.kind ?? '') };
    const envelope = this.codec.wrapEnvelope(apiVersion, kind, this.rawOf(item, schema.item));
    return frameWatchEvent(this.codec.encodeWatchEvent(type, envelope));
  }
}

/** Reads a request body in one media type into the JSON form, with duplicate field paths. */
export type BodyReader = (bytes: Buffer, schemaName: string | undefined) => { value: unknown; duplicateFields: string[] };

export function bodyReaders(protobuf: ProtobufSerializer | undefined, cbor: boolean): Map<string, BodyReader> {
  const readers = new Map<string, BodyReader>([
    ['application/json', (b) => decodeJson(b)],
    ['application/yaml', (b) => decodeYaml(b)],
  ]);
  if (protobuf) {
    const read: BodyReader = (b, schemaName) => {
      if (!schemaName || !protobuf.supports(schemaName)) throw errors.unsupportedMediaType(['application/json', 'application/yaml']);
      return { value: protobuf.codec.decode(b, schemaName), duplicateFields: [] };
    };
    readers.set(protobuf.mediaType, read);
    // Typed clients hard-code the upstream protobuf type for request bodies and have no
    // fallback, so it is read under either naming; responses use the configured type only.
    readers.set('application/vnd.kubernetes.protobuf', read);
  }
  if (cbor) readers.set('application/cbor', (b) => decodeCbor(b, { duplicateKeys: 'report' }));
  return readers;
}
