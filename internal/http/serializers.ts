// internal/http/serializers owns the wire formats of responses: JSON, YAML, protobuf and CBOR
// writers for objects, lists and framed watch events, and the request-body readers that go
// with them. JSON writes the watch cache's serving bytes as they are (serialize once, write
// many); protobuf keeps each cached object's encoded bytes beside the entry, so a list of
// cached objects is a concatenation too. Imports: codec, watchcache (types), apierrors.

import { decodeCbor, decodeJson, decodeYaml, encodeCbor, encodeCborWatchEvent, encodeYaml, frameWatchEvent, ProtobufCodec } from '../codec/index.js';
import { errors } from '../apierrors/status.js';
import type { Naming } from '../naming/naming.js';
import type { CacheEntry } from '../watchcache/types.js';

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
  list(kind: string, apiVersion: string, meta: ListMeta, items: readonly Item[], schema?: SchemaNames): Buffer;
  watchEvent(type: string, item: Item, schema?: SchemaNames): Buffer;
  /** Optional: the same event as buffers to write in sequence, without copying cached bytes. */
  watchEventParts?(type: string, item: Item, schema?: SchemaNames): Buffer[];
  /**
   * The list as a sequence of chunks, for streaming large lists without building them whole.
   * Optional: formats without it are written with list().
   */
  listChunks?(kind: string, apiVersion: string, meta: ListMeta, items: readonly Item[]): Generator<Buffer>;
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

export const jsonSerializer: Serializer = {
  name: 'json',
  mediaType: 'application/json',
  watchMediaType: 'application/json',
  object: (obj) => Buffer.from(`${JSON.stringify(obj)}\n`),
  list(kind, apiVersion, meta, items) {
    const head = Buffer.from(`{"kind":${JSON.stringify(kind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(listMetaObject(meta))},"items":[`);
    const parts: Buffer[] = [head];
    let size = head.length + 2;
    items.forEach((item, i) => {
      if (i > 0) {
        parts.push(COMMA);
        size++;
      }
      const b = jsonItemBytes(item);
      parts.push(b);
      size += b.length;
    });
    parts.push(LIST_TAIL);
    return Buffer.concat(parts, size + 1);
  },
  watchEvent: (type, item) => Buffer.concat(jsonWatchEventParts(type, item)),
  watchEventParts: jsonWatchEventParts,
  *listChunks(kind, apiVersion, meta, items) {
    yield Buffer.from(`{"kind":${JSON.stringify(kind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(listMetaObject(meta))},"items":[`);
    for (let i = 0; i < items.length; i++) {
      if (i > 0) yield COMMA;
      yield jsonItemBytes(items[i]!);
    }
    yield LIST_TAIL;
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

export function cborSerializer(): Serializer {
  return {
    name: 'cbor',
    mediaType: 'application/cbor',
    watchMediaType: 'application/cbor-seq',
    object: (obj, schema) => encodeCbor(obj, schema?.item ? { schemaName: schema.item } : {}),
    list: (kind, apiVersion, meta, items) => encodeCbor({ kind, apiVersion, metadata: listMetaObject(meta), items: items.map(itemObject) }),
    watchEvent: (type, item) => encodeCborWatchEvent(type, itemObject(item)),
  };
}

/**
 * Protobuf: envelopes, lists from per-entry cached bytes, length-framed watch events. The
 * codec (about 25 MB of compiled message plans) is built on first use, not at start-up.
 */
export class ProtobufSerializer implements Serializer {
  readonly name = 'protobuf' as const;
  readonly mediaType: string;
  readonly watchMediaType: string;
  /** Encoded (unenveloped) bytes of cached objects, kept as long as the entry lives. */
  private readonly raw = new WeakMap<CacheEntry, Buffer>();
  private built: ProtobufCodec | undefined;

  constructor(private readonly naming: Naming) {
    this.mediaType = naming.protobufMediaType;
    this.watchMediaType = `${naming.protobufMediaType};stream=watch`;
  }

  get codec(): ProtobufCodec {
    this.built ??= new ProtobufCodec(this.naming);
    return this.built;
  }

  /** Every built-in kind has a message; custom resources (no upstream schema name) do not. */
  supports(schemaName: string | undefined): boolean {
    return schemaName !== undefined && schemaName.startsWith('io.k8s.') && (this.built === undefined || this.built.supports(schemaName));
  }

  private rawOf(item: Item, schemaName: string): Buffer {
    if ('object' in item) return this.codec.encodeRaw(item.object, schemaName);
    let b = this.raw.get(item.entry);
    if (!b) {
      b = this.codec.encodeRaw(itemObject(item), schemaName);
      this.raw.set(item.entry, b);
    }
    return b;
  }

  object(obj: JsonObject, schema?: SchemaNames): Buffer {
    if (!schema?.item) throw errors.notAcceptable(['application/json']);
    return this.codec.encode(obj, schema.item);
  }

  list(kind: string, apiVersion: string, meta: ListMeta, items: readonly Item[], schema?: SchemaNames): Buffer {
    if (!schema?.item || !schema.list) throw errors.notAcceptable(['application/json']);
    const raw = this.codec.encodeRaw({ metadata: listMetaObject(meta), items: items.map((i) => this.rawOf(i, schema.item!)) }, schema.list);
    return this.codec.wrapEnvelope(apiVersion, kind, raw);
  }

  watchEvent(type: string, item: Item, schema?: SchemaNames): Buffer {
    if (!schema?.item) throw errors.notAcceptable(['application/json']);
    const obj = itemObject(item);
    const envelope = this.codec.wrapEnvelope(String(obj.apiVersion ?? ''), String(obj.kind ?? ''), this.rawOf(item, schema.item));
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
