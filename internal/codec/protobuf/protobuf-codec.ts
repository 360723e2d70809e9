// internal/codec/protobuf/protobuf-codec owns the protobuf wire format of built-in objects as
// upstream writes it: the envelope (magic `k8s\0` + runtime.Unknown{typeMeta, raw,
// contentEncoding, contentType}), the raw message of each kind, and the watch stream framing.
// Objects cross this boundary in their JSON form with served group names; the proto bytes carry
// group names only inside strings (typeMeta.apiVersion, ownerReferences, …), so the only naming
// work here is finding the schema of an enveloped object from its apiVersion.
// Imports: apierrors, naming, schema (OpenAPI index), protobuf internals.

import { errors } from '../../apierrors/status.js';
import type { Naming } from '../../naming/naming.js';
import { builtinSchemas, type SchemaIndex } from '../../schema/openapi-index.js';
import { CompiledMessages, ENVELOPE_MAGIC, tagBytes, type CodecHooks } from './compiled-messages.js';
import { JsonTranscoder } from './json-transcoder.js';
import { ProtoSchema, type FieldPlan } from './message-plans.js';
import { protobufError, WireReader } from './wire-reader.js';
import { acquireWriter, releaseWriter, type WireWriter } from './wire-writer.js';

export interface ProtobufCodecOptions {
  /** OpenAPI schemas (default: the built-in index). */
  schemas?: SchemaIndex;
  /** Shared descriptors; building them costs ~100 ms, so share one ProtoSchema per process. */
  protoSchema?: ProtoSchema;
  /** Maximum message nesting accepted when decoding (default 1000). */
  maxDepth?: number;
}

/** The decoded runtime.Unknown envelope. */
export interface Envelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

export interface WatchEventValue {
  type: string;
  /** The object in JSON form (decoded from its envelope). */
  object: unknown;
}

const WATCH_EVENT = 'k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent';
const META_PREFIX = 'io.k8s.apimachinery.pkg.apis.meta.';
/** Meta kinds that travel as whole objects but carry no group-version-kind marker. */
const META_KINDS = new Set([
  'APIGroup',
  'APIGroupList',
  'APIVersions',
  'APIResourceList',
  'Status',
  'WatchEvent',
  'DeleteOptions',
  'CreateOptions',
  'UpdateOptions',
  'PatchOptions',
  'ApplyOptions',
  'GetOptions',
  'ListOptions',
  'List',
  'PartialObjectMetadata',
  'PartialObjectMetadataList',
]);

let sharedProtoSchema: ProtoSchema | undefined;

/** One ProtoSchema per process for the built-in schemas (descriptors are immutable data). */
export function defaultProtoSchema(): ProtoSchema {
  sharedProtoSchema ??= new ProtoSchema();
  return sharedProtoSchema;
}

export class ProtobufCodec {
  private readonly schemas: SchemaIndex;
  private readonly proto: ProtoSchema;
  private readonly compiled: CompiledMessages;
  private readonly transcoder: JsonTranscoder;

  constructor(
    readonly naming: Naming,
    options: ProtobufCodecOptions = {},
  ) {
    this.schemas = options.schemas ?? builtinSchemas;
    this.proto = options.protoSchema ?? (options.schemas ? new ProtoSchema(options.schemas) : defaultProtoSchema());
    const hooks: CodecHooks = {
      decodeEmbeddedEnvelope: (raw, depth) => this.decodeAt(raw, undefined, depth),
    };
    this.compiled = new CompiledMessages(this.proto, hooks, options.maxDepth ?? 1000);
    this.transcoder = new JsonTranscoder(this.proto, this.compiled);
  }

  /** The media type of this codec under the configured naming. */
  get mediaType(): string {
    return this.naming.protobufMediaType;
  }

  /**
   * Whether a schema (OpenAPI component name in upstream spelling, or a proto full name) has a
   * protobuf message. False for Table, custom resources and aggregated kinds: the HTTP layer
   * answers 406/415 for those, as upstream does.
   */
  supports(schemaName: string): boolean {
    return this.proto.messageFor(schemaName) !== undefined;
  }

  /**
   * The schema name of a served apiVersion/kind (`apps/v1`, `Deployment`), or undefined when the
   * kind is not built in. Meta kinds without a group-version-kind marker (APIGroupList,
   * APIVersions, PartialObjectMetadataList, …) resolve under the meta group or the core `v1`.
   */
  schemaNameFor(apiVersion: string, kind: string): string | undefined {
    const slash = apiVersion.lastIndexOf('/');
    const servedGroup = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const group = servedGroup === '' ? '' : this.naming.upstreamGroup(servedGroup);
    if (group === undefined) return undefined;
    const byKind = this.schemas.schemaNameForKind(group, version, kind);
    if (byKind) return byKind;
    if ((group === '' || group === 'meta.k8s.io') && META_KINDS.has(kind)) {
      const metaVersion = group === '' ? 'v1' : version;
      const candidate = `${META_PREFIX}${metaVersion}.${kind}`;
      if (this.supports(candidate)) return candidate;
    }
    return undefined;
  }

  private messageOf(schemaName: string): string {
    const m = this.proto.messageFor(schemaName);
    if (!m) throw errors.internal(`no protobuf message for ${schemaName}`);
    return m;
  }

  /**
   * The full protobuf body of an object: envelope with typeMeta from the object's
   * apiVersion/kind and raw = the object's message. Throws a 500 StatusError when the object does
   * not fit its schema's types (a server bug) or the schema has no message (check supports()).
   */
  encode(obj: object, schemaName: string): Buffer {
    const encode = this.compiled.encoder(this.messageOf(schemaName));
    const o = obj as Record<string, unknown>;
    const w = acquireWriter();
    try {
      writeEnvelopeHead(w, stringOr(o.apiVersion), stringOr(o.kind));
      const s = w.fork();
      encode(w, obj);
      w.join(s);
      // contentEncoding and contentType: Go writes both, empty.
      w.byte2(0x1a, 0);
      w.byte2(0x22, 0);
      return w.finish();
    } finally {
      releaseWriter(w);
    }
  }

  /**
   * The object's message without the envelope, as list items and cached per-object encodings use
   * it. In repeated message fields (a list's `items`) a Uint8Array element is taken as an item's
   * already-encoded raw message, so a list can be assembled from cached item bytes.
   */
  encodeRaw(obj: unknown, schemaName: string): Buffer {
    const encode = this.compiled.encoder(this.messageOf(schemaName));
    const w = acquireWriter();
    try {
      encode(w, obj);
      return w.finish();
    } finally {
      releaseWriter(w);
    }
  }

  /**
   * encodeRaw of JSON.parse(bytes), for an object's compact JSON bytes as the server stores
   * them: transcoded straight from the bytes where the transcoder handles them (see
   * json-transcoder), else parsed and encoded: the transcoder declines only rare shapes (escaped or
   * repeated keys, unexpected types), so that path needs no shortcut of its own.
   */
  encodeStoredRaw(bytes: Buffer, schemaName: string): Buffer {
    return this.withStoredRaw(bytes, schemaName, (buf, length) => Buffer.from(buf.subarray(0, length)));
  }

  /**
   * encodeStoredRaw handing the message to `keep` as the first `length` bytes of a scratch
   * buffer, valid only during the call: a cached object's encoding is copied once, to where it
   * is kept.
   */
  withStoredRaw<T>(bytes: Buffer, schemaName: string, keep: (buf: Buffer, length: number) => T): T {
    const message = this.messageOf(schemaName);
    const w = acquireWriter();
    try {
      if (!this.transcoder.transcode(w, bytes, message)) {
        w.reset();
        this.compiled.encoder(message)(w, JSON.parse(bytes.toString('utf8')) as Record<string, unknown>);
      }
      return keep(w.buf, w.pos);
    } finally {
      releaseWriter(w);
    }
  }

  /**
   * A whole enveloped list as chunks to write in sequence: the envelope and list metadata, then
   * each item's field header and its already-encoded raw message — sources[i][offsets[i],
   * offsets[i] + lengths[i]) — then the envelope's tail. Items are copied straight from where
   * they are kept into chunks of LIST_CHUNK bytes, except those kept framed one after another
   * (see listChunks), which are written as views of where they lie, without a copy.
   * Concatenated, the chunks are what encode() writes for the list with those items; a list is
   * thus assembled from cached per-object encodings with at most one copy and no object per
   * item. `listMeta` is the JSON form of the list's
   * ListMeta. The chunks are made as they are read, from the sources held until then;
   * `byteLength` is their total (a response can say its length before they are made).
   */
  encodeListChunks(apiVersion: string, kind: string, listSchemaName: string, listMeta: object, sources: readonly Uint8Array[], offsets: Int32Array, lengths: Int32Array, take: () => Buffer = newChunk): Iterable<Buffer> & { byteLength: number } {
    const message = this.messageOf(listSchemaName);
    const fields = this.proto.plan(message).fields;
    const last = fields[fields.length - 1];
    if (!last || last.jsonKey !== 'items' || !last.repeated || last.message === undefined) {
      // Not the usual list shape (items the last field): no splicing, encode it whole.
      const items = sources.map((b, i) => b.subarray(offsets[i], offsets[i]! + lengths[i]!));
      const whole = this.wrapEnvelope(apiVersion, kind, this.encodeRaw({ metadata: listMeta, items }, listSchemaName));
      return Object.assign([whole], { byteLength: whole.length });
    }
    const head = this.listHead(fields, listMeta, listSchemaName);
    const tag = Uint8Array.from(tagBytes(last.number, 2));
    let rawLength = head.length;
    for (let i = 0; i < lengths.length; i++) rawLength += tag.length + uvarintSize(lengths[i]!) + lengths[i]!;
    const w = acquireWriter();
    let first: Buffer;
    try {
      writeEnvelopeHead(w, apiVersion, kind);
      w.uvarint32(rawLength);
      w.raw(head);
      first = w.finish();
    } finally {
      releaseWriter(w);
    }
    return Object.assign(listChunks(first, tag, sources, offsets, lengths, take), { byteLength: first.length - head.length + rawLength + ENVELOPE_TAIL.length });
  }

  /**
   * The list message without its items. For the usual list (metadata and items only) that is
   * the metadata field, written with ListMeta's encoder: the list's own encoder would be built
   * for the whole item type (about 20 ms for a PodList, on the first list of the kind) only to
   * write that one field.
   */
  private listHead(fields: readonly FieldPlan[], listMeta: object, listSchemaName: string): Buffer {
    const meta = fields[0]!;
    if (fields.length !== 2 || meta.jsonKey !== 'metadata' || meta.repeated || meta.message === undefined) return this.encodeRaw({ metadata: listMeta }, listSchemaName);
    const encode = this.compiled.encoder(meta.message);
    const w = acquireWriter();
    try {
      for (const b of tagBytes(meta.number, 2)) w.byte(b);
      const s = w.fork();
      encode(w, listMeta);
      w.join(s);
      return w.finish();
    } finally {
      releaseWriter(w);
    }
  }

  /** Wraps an already-encoded raw message in the envelope. */
  wrapEnvelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
    const w = acquireWriter();
    try {
      writeEnvelopeHead(w, apiVersion, kind);
      w.bytes(raw);
      w.raw(ENVELOPE_TAIL);
      return w.finish();
    } finally {
      releaseWriter(w);
    }
  }

  /** Reads the envelope. Throws 400 for a missing magic prefix or malformed Unknown message. */
  readEnvelope(bytes: Uint8Array): Envelope {
    if (bytes.length < 4 || bytes[0] !== 0x6b || bytes[1] !== 0x38 || bytes[2] !== 0x73 || bytes[3] !== 0x00) {
      throw errors.badRequest('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
    }
    const r = new WireReader(bytes);
    r.pos = 4;
    const end = bytes.length;
    const env: Envelope = { apiVersion: '', kind: '', raw: new Uint8Array(0), contentEncoding: '', contentType: '' };
    while (r.pos < end) {
      const t = r.tag(end);
      switch (t) {
        case 0x0a: {
          const e = r.lenEnd(end);
          while (r.pos < e) {
            const t2 = r.tag(e);
            if (t2 === 0x0a) env.apiVersion = r.string(e);
            else if (t2 === 0x12) env.kind = r.string(e);
            else if (t2 >>> 3 === 1 || t2 >>> 3 === 2) throw protobufError(`wrong wireType = ${t2 & 7} for field ${t2 >>> 3 === 1 ? 'APIVersion' : 'Kind'}`);
            else r.skip(t2, e, 1, 2);
          }
          break;
        }
        case 0x12:
          env.raw = r.bytes(end);
          break;
        case 0x1a:
          env.contentEncoding = r.string(end);
          break;
        case 0x22:
          env.contentType = r.string(end);
          break;
        default:
          if (t >>> 3 >= 1 && t >>> 3 <= 4) throw protobufError(`wrong wireType = ${t & 7} for field ${['', 'TypeMeta', 'Raw', 'ContentEncoding', 'ContentType'][t >>> 3]}`);
          r.skip(t, end, 0, 2);
      }
    }
    return env;
  }

  /**
   * Decodes a full protobuf body into the JSON form, `kind` and `apiVersion` first (from the
   * envelope). Without schemaName the schema is found from the envelope's apiVersion/kind.
   * Throws a 400 StatusError for anything malformed, hostile or of an unknown kind.
   */
  decode(bytes: Uint8Array, schemaName?: string): Record<string, unknown> {
    return guardStack(() => this.decodeAt(bytes, schemaName, 0));
  }

  private decodeAt(bytes: Uint8Array, schemaName: string | undefined, depth: number): Record<string, unknown> {
    const env = this.readEnvelope(bytes);
    if (env.contentEncoding !== '') throw errors.badRequest(`unsupported protobuf content encoding ${JSON.stringify(env.contentEncoding)}`);
    if (env.contentType !== '' && env.contentType !== 'application/vnd.kubernetes.protobuf' && env.contentType !== this.naming.protobufMediaType) {
      throw errors.badRequest(`unsupported content type ${JSON.stringify(env.contentType)} inside a protobuf envelope`);
    }
    const name = schemaName ?? this.schemaNameFor(env.apiVersion, env.kind);
    if (!name || !this.supports(name)) {
      throw errors.badRequest(`no kind ${JSON.stringify(env.kind)} is registered for version ${JSON.stringify(env.apiVersion)} with a protobuf encoding`);
    }
    const into: Record<string, unknown> = {};
    if (env.kind) into.kind = env.kind;
    if (env.apiVersion) into.apiVersion = env.apiVersion;
    const decode = this.compiled.decoder(this.messageOf(name));
    const r = new WireReader(env.raw);
    decode(r, env.raw.length, depth, into);
    return into;
  }

  /** Decodes a raw message (no envelope) into the JSON form. Throws 400 on bad input. */
  decodeRaw(bytes: Uint8Array, schemaName: string): Record<string, unknown> {
    const decode = this.compiled.decoder(this.messageOf(schemaName));
    const r = new WireReader(bytes);
    // Custom-JSON types (a bare Time, Quantity, …) decode to their string/number/array form.
    return guardStack(() => decode(r, bytes.length, 0) as Record<string, unknown>);
  }

  /**
   * One watch event as upstream's protobuf stream serializer writes it: a metav1.WatchEvent
   * message WITHOUT envelope (the stream uses the raw serializer), whose `object` RawExtension
   * holds the object's full enveloped encoding (the embedded encoder does use the envelope).
   * `object` is either those envelope bytes or the object in JSON form plus its schemaName.
   * Frame it with frameWatchEvent().
   */
  encodeWatchEvent(type: string, object: Uint8Array | object, schemaName?: string): Buffer {
    let raw: Uint8Array;
    if (object instanceof Uint8Array) raw = object;
    else {
      if (!schemaName) throw errors.internal('encodeWatchEvent needs the schema name of a JSON-form object');
      raw = this.encode(object, schemaName);
    }
    const w = acquireWriter();
    try {
      w.byte(0x0a);
      w.string(type);
      w.byte(0x12);
      const s = w.fork();
      w.byte(0x0a);
      w.bytes(raw);
      w.join(s);
      return w.finish();
    } finally {
      releaseWriter(w);
    }
  }

  /** Decodes one watch event (the frame's payload, raw or enveloped) into type and JSON object. */
  decodeWatchEvent(bytes: Uint8Array): WatchEventValue {
    const hasMagic = bytes.length >= 4 && bytes[0] === 0x6b && bytes[1] === 0x38 && bytes[2] === 0x73 && bytes[3] === 0x00;
    const event = hasMagic ? this.decode(bytes, WATCH_EVENT) : this.decodeRaw(bytes, WATCH_EVENT);
    return { type: typeof event.type === 'string' ? event.type : '', object: event.object ?? null };
  }
}

/**
 * maxDepth keeps recursion far below the stack limit, but a caller already deep in its own stack
 * could still overflow; that is the input's fault, so it becomes a 400 too.
 */
function guardStack<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof RangeError) throw protobufError('exceeded max depth');
    throw e;
  }
}

/** contentEncoding and contentType of the envelope: Go writes both, empty. */
const ENVELOPE_TAIL = Buffer.from([0x1a, 0, 0x22, 0]);
/** The size of the chunks encodeListChunks writes: what a streamed response writes at once. */
const LIST_CHUNK = 64 * 1024;

function uvarintSize(n: number): number {
  return n < 128 ? 1 : n < 16384 ? 2 : n < 2097152 ? 3 : n < 268435456 ? 4 : 5;
}

/** A chunk of LIST_CHUNK bytes of its own, when the caller does not pool them. */
const newChunk = (): Buffer => Buffer.allocUnsafe(LIST_CHUNK);

/** A run of items lying framed one after another in one buffer at least this long is written as a view of it, not copied. */
const LIST_VIEW_MIN = LIST_CHUNK;

/**
 * The chunks of encodeListChunks after its first (envelope and list metadata). An item kept
 * behind its own field header (the list's tag and its length, see EncodingArena.keep) is
 * framed already where it lies: items framed one after another in one buffer — a collection's
 * encodings kept in list order, as its first list keeps them — are written as one view of that
 * buffer instead of being copied (the bytes are the same either way). Everything else (other
 * items' headers and messages, short runs, the tail) is copied into chunks from `take`.
 */
function* listChunks(first: Buffer, tag: Uint8Array, sources: readonly Uint8Array[], offsets: Int32Array, lengths: Int32Array, take: () => Buffer): Generator<Buffer> {
  yield first;
  let chunk: Buffer | undefined;
  let p = 0;
  // The run of framed items not written yet: run[runStart, runEnd).
  let run: Uint8Array | undefined;
  let runStart = 0;
  let runEnd = 0;
  const n = sources.length;
  for (let i = 0; i <= n; i++) {
    let source: Uint8Array | undefined;
    let offset = 0;
    let length = 0;
    let framedAt = -1;
    if (i < n) {
      source = sources[i]!;
      offset = offsets[i]!;
      length = lengths[i]!;
      framedAt = framedStart(source, offset, length, tag);
      if (framedAt >= 0 && run === source && runEnd === framedAt) {
        runEnd = offset + length;
        continue;
      }
    }
    if (run !== undefined) {
      if (runEnd - runStart >= LIST_VIEW_MIN) {
        if (chunk !== undefined && p > 0) {
          yield chunk.subarray(0, p);
          chunk = undefined;
          p = 0;
        }
        yield Buffer.from(run.buffer, run.byteOffset + runStart, runEnd - runStart);
      } else {
        for (let from = runStart; from < runEnd; ) {
          if (chunk === undefined || p === chunk.length) {
            if (chunk !== undefined) yield chunk;
            chunk = take();
            p = 0;
          }
          const count = Math.min(runEnd - from, chunk.length - p);
          chunk.set(new Uint8Array(run.buffer, run.byteOffset + from, count), p);
          p += count;
          from += count;
        }
      }
      run = undefined;
    }
    if (source === undefined) break;
    if (framedAt >= 0) {
      run = source;
      runStart = framedAt;
      runEnd = offset + length;
      continue;
    }
    // The item's tag and length: at most 7 bytes, kept in one chunk.
    if (chunk === undefined || p + 7 > chunk.length) {
      if (chunk !== undefined) yield chunk.subarray(0, p);
      chunk = take();
      p = 0;
    }
    for (let t = 0; t < tag.length; t++) chunk[p++] = tag[t]!;
    let v = length;
    while (v > 127) {
      chunk[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    chunk[p++] = v;
    let from = offset;
    const end = offset + length;
    while (from < end) {
      if (p === chunk.length) {
        yield chunk;
        chunk = take();
        p = 0;
      }
      const count = Math.min(end - from, chunk.length - p);
      // A plain Uint8Array view: cheaper to make than a Buffer's subarray, once per item.
      chunk.set(new Uint8Array(source.buffer, source.byteOffset + from, count), p);
      p += count;
      from += count;
    }
  }
  if (chunk === undefined || p + ENVELOPE_TAIL.length > chunk.length) {
    if (chunk !== undefined) yield chunk.subarray(0, p);
    chunk = take();
    p = 0;
  }
  chunk.set(ENVELOPE_TAIL, p);
  yield chunk.subarray(0, p + ENVELOPE_TAIL.length);
}

/**
 * Where the item source[offset, offset + length) starts framed as a list item — preceded in
 * `source` by `tag` and its length as a varint — or -1 when the bytes before it are not that.
 */
function framedStart(source: Uint8Array, offset: number, length: number, tag: Uint8Array): number {
  const start = offset - tag.length - uvarintSize(length);
  if (start < 0) return -1;
  let q = start;
  for (let t = 0; t < tag.length; t++) if (source[q++] !== tag[t]) return -1;
  let v = length;
  while (v > 127) {
    if (source[q++] !== ((v & 127) | 128)) return -1;
    v >>>= 7;
  }
  return source[q] === v ? start : -1;
}

function stringOr(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The envelope up to its raw message: the magic, typeMeta, and the tag of `raw`. */
function writeEnvelopeHead(w: WireWriter, apiVersion: string, kind: string): void {
  w.raw(ENVELOPE_MAGIC);
  writeTypeMeta(w, apiVersion, kind);
  w.byte(0x12);
}

function writeTypeMeta(w: WireWriter, apiVersion: string, kind: string): void {
  // runtime.TypeMeta is all non-pointer strings: Go writes both even when empty.
  w.byte(0x0a);
  const s = w.fork();
  w.byte(0x0a);
  w.string(apiVersion);
  w.byte(0x12);
  w.string(kind);
  w.join(s);
}

/** The frame of one watch event: a 4-byte big-endian length, then the payload. */
export function frameWatchEvent(payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(4 + payload.length);
  out.writeUInt32BE(payload.length, 0);
  out.set(payload, 4);
  return out;
}

/**
 * Splits a protobuf watch stream into frame payloads as chunks arrive. A frame announcing more
 * than maxFrameBytes is rejected with a 400 instead of being buffered.
 */
export class WatchFrameDecoder {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly maxFrameBytes = 64 * 1024 * 1024) {}

  push(chunk: Uint8Array): Buffer[] {
    this.pending = this.pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.pending, chunk]);
    const frames: Buffer[] = [];
    for (;;) {
      if (this.pending.length < 4) break;
      const len = this.pending.readUInt32BE(0);
      if (len > this.maxFrameBytes) throw errors.badRequest(`watch frame of ${len} bytes exceeds the limit of ${this.maxFrameBytes}`);
      if (this.pending.length < 4 + len) break;
      frames.push(this.pending.subarray(4, 4 + len));
      this.pending = this.pending.subarray(4 + len);
    }
    return frames;
  }

  /** Bytes received that do not yet form a whole frame. */
  get buffered(): number {
    return this.pending.length;
  }
}
