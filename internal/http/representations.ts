// internal/http/representations owns what a read answers with (spec §2.5, §4.4): a wire format
// (JSON, YAML, protobuf, CBOR) and a view of the objects — full, Table
// (`as=Table;g=meta.<domain>;v=v1`; upstream's `meta.k8s.io` under either naming, answered in the
// group and version asked for) or metadata only (`as=PartialObjectMetadata[List]`) — chosen
// from Accept among what this resource supports, and the writing of objects, lists and watch
// events in that representation. Imports: http (negotiation, serializers, metadata-views),
// printers, schema.

import type { Context } from 'hono';
import { createGzip, gzipSync } from 'node:zlib';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { errors } from '../apierrors/status.js';
import { columnDefinitionsFor, partialObjectMetadata, rowsFor, tableFor, type IncludeObject, type TableResource } from '../printers/index.js';
import type { ResourceInfo } from '../schema/catalog.js';
import type { GenericRegistry } from '../registry/generic-registry.js';
import type { Env } from './context.js';
import type { HttpDeps } from './deps.js';
import { negotiate, type MediaRange, type Offer } from './negotiation.js';
import { wantsPretty } from './respond.js';
import { indentJson } from '../codec/json/json-codec.js';
import type { CacheEntry } from '../watchcache/types.js';
import { CHUNK_BYTES, listChunkPool, type ChunkPool } from './chunk-pool.js';
import { jsonMetadataTable, jsonPartialList, partialObjectMetadataJson } from './metadata-views.js';
import { itemObject, jsonSerializer, ProtobufSerializer, yamlSerializer, type Item, type JsonObject, type ListChunks, type ListMeta, type SchemaNames, type Serializer } from './serializers.js';

export type View = 'full' | 'table' | 'partial';

export interface Representation {
  serializer: Serializer;
  view: View;
  /**
   * For the Table and metadata views, the `<meta group>/<version>` the client asked for: the
   * configured naming's meta group or upstream's `meta.k8s.io` (stock clients hard-code it),
   * `v1` or `v1beta1`. The response carries it as its apiVersion.
   */
  metaApiVersion?: string;
}

/** The meta group names a Table or metadata request may use: the naming's and upstream's. */
const UPSTREAM_META_GROUP = 'meta.k8s.io';

export type ReadShape = 'object' | 'list' | 'watch';

export const META_SCHEMA = 'io.k8s.apimachinery.pkg.apis.meta.v1.';

/** Candidates for a request on `resource` (undefined: not a resource, JSON only), server preference order. */
export function offersFor(deps: HttpDeps, resource: ResourceInfo | undefined, shape: ReadShape | 'write'): Array<Offer<Representation>> {
  const { protobuf, cbor } = deps.serializers;
  const plain = (serializer: Serializer): Offer<Representation> => ({ mediaType: serializer.mediaType, value: { serializer, view: 'full' } });
  const offers: Array<Offer<Representation>> = [plain(jsonSerializer)];
  if (!resource) return offers;
  if (shape !== 'watch') offers.push(plain(yamlSerializer));
  if (protobuf?.supports(resource.schemaName)) offers.push(plain(protobuf));
  if (cbor) offers.push(plain(cbor));
  if (shape === 'write') return offers;
  const metaGroups = new Set([deps.naming.metaGroup, UPSTREAM_META_GROUP]);
  const asView = (serializer: Serializer, view: View, as: readonly string[]): Offer<Representation> => ({
    mediaType: serializer.mediaType,
    value: { serializer, view },
    accepts: (r: MediaRange) => as.includes(r.params.as ?? '') && metaGroups.has(r.params.g ?? '') && (r.params.v === 'v1' || r.params.v === 'v1beta1'),
  });
  const tableSerializers = shape === 'watch' ? [jsonSerializer] : [jsonSerializer, yamlSerializer];
  for (const s of tableSerializers) offers.push(asView(s, 'table', ['Table']));
  const partialAs = shape === 'list' ? ['PartialObjectMetadataList'] : ['PartialObjectMetadata'];
  const partialSerializers = [jsonSerializer, ...(shape === 'watch' ? [] : [yamlSerializer]), ...(protobuf ? [protobuf] : []), ...(cbor ? [cbor] : [])];
  for (const s of partialSerializers) offers.push(asView(s, 'partial', partialAs));
  return offers;
}

/**
 * Representations already chosen, per server (deps), resource and `shape + Accept`: the answer
 * depends on nothing else, and nearly every request of a client repeats its Accept header.
 * Bounded, since the header is the client's to vary.
 */
const chosen = new WeakMap<HttpDeps, WeakMap<object, Map<string, Representation>>>();
const CHOSEN_PER_RESOURCE = 64;
const NO_RESOURCE = {};

export function chooseRepresentation(c: Context<Env>, deps: HttpDeps, resource: ResourceInfo | undefined, shape: ReadShape | 'write'): Representation {
  let perDeps = chosen.get(deps);
  if (!perDeps) chosen.set(deps, (perDeps = new WeakMap()));
  let perResource = perDeps.get(resource ?? NO_RESOURCE);
  if (!perResource) perDeps.set(resource ?? NO_RESOURCE, (perResource = new Map()));
  // Whether protobuf supports a schema is a guess until its codec is built (see supports()).
  const key = `${shape} ${deps.serializers.protobuf?.codecBuilt ? 1 : 0} ${c.req.header('accept') ?? ''}`;
  const known = perResource.get(key);
  if (known) return known;
  const rep = negotiateRepresentation(c, deps, resource, shape);
  if (perResource.size >= CHOSEN_PER_RESOURCE) perResource.clear();
  perResource.set(key, rep);
  return rep;
}

function negotiateRepresentation(c: Context<Env>, deps: HttpDeps, resource: ResourceInfo | undefined, shape: ReadShape | 'write'): Representation {
  const offers = offersFor(deps, resource, shape);
  try {
    const { offer, range } = negotiate(c.req.header('accept'), offers);
    if (offer.value.view === 'full') return offer.value;
    // Members listed, not a spread followed by a member the offer lacks (a V8 slow path).
    return { serializer: offer.value.serializer, view: offer.value.view, metaApiVersion: `${range.params.g}/${range.params.v}` };
  } catch (e) {
    // Asked only for something this resource cannot produce (protobuf of a custom resource,
    // YAML for a watch, a Table in protobuf): 406 listing what it can.
    throw e instanceof Error ? e : errors.notAcceptable(offers.map((o) => o.mediaType));
  }
}

/** The naming a view's objects are written in: the configured one with the meta group asked for. */
function viewNaming(deps: HttpDeps, rep: Representation): HttpDeps['naming'] {
  const group = rep.metaApiVersion?.split('/')[0];
  return group && group !== deps.naming.metaGroup ? { ...deps.naming, metaGroup: group } : deps.naming;
}

/** The apiVersion of a Table or metadata body: the one asked for. */
const metaApiVersionOf = (deps: HttpDeps, rep: Representation): string => rep.metaApiVersion ?? `${deps.naming.metaGroup}/v1`;

function includeObjectOf(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject');
  if (v === null || v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  // Upstream's optionsForTransform wording; ValidateTableOptions lists the values sorted.
  throw errors.badRequest(`Unable to convert to Table as requested: includeObject: Unsupported value: ${JSON.stringify(v)}: supported values: "Metadata", "None", "Object"`);
}

function schemasOf(resource: ResourceInfo, view: View): SchemaNames {
  if (view === 'partial') return { item: `${META_SCHEMA}PartialObjectMetadata`, list: `${META_SCHEMA}PartialObjectMetadataList` };
  return { item: resource.schemaName, list: resource.schemaName ? `${resource.schemaName}List` : undefined };
}

/**
 * The response's media type: the serializer's alone, whatever the view. Upstream writes Table and
 * PartialObjectMetadata[List] responses with the negotiated serializer's media type (only
 * discovery names its kind in Content-Type); the body's kind and apiVersion say what it is.
 */
function contentTypeOf(rep: Representation, _deps: HttpDeps): string {
  return rep.serializer.mediaType;
}

const NEWLINE = Buffer.from('\n');

/**
 * A cached object's bytes with the newline Go's encoder ends compact JSON with, made once per
 * stored version that is read by GET (a polled object is served many times), and dropped with
 * the cache entry's bytes.
 */
const newlineTerminated = new WeakMap<Buffer, Buffer>();
function withNewline(bytes: Buffer): Buffer {
  if (bytes.length === 0 || bytes[bytes.length - 1] === 0x0a) return bytes;
  let out = newlineTerminated.get(bytes);
  if (!out) {
    // Its own memory, not a slice of the shared pool (which a kept slice would pin whole).
    out = Buffer.allocUnsafeSlow(bytes.length + 1);
    bytes.copy(out);
    out[bytes.length] = 0x0a;
    newlineTerminated.set(bytes, out);
  }
  return out;
}

/** Response headers every representation shares; gzip when allowed, asked for and worth it. */
function respond(c: Context<Env>, deps: HttpDeps, body: Buffer, contentType: string, status: number): Response {
  // A plain record: the node adapter writes it as it is, where a Headers object is converted
  // on every response. Warnings (one header each) need Headers.append.
  const headers: Record<string, string> = { 'content-type': contentType, 'cache-control': 'no-cache, private' };
  // JSON for people (?pretty=true, curl): indented as upstream's pretty serializer. YAML and the
  // binary encodings have no pretty form. (Lists large enough to stream stay compact.)
  const json = contentType === 'application/json';
  let out = json && wantsPretty(c) ? indentJson(body) : body;
  // Compact JSON ends with a newline as Go's encoder writes it (serialized lists carry theirs;
  // a cached object's bytes do not).
  if (json && out === body && out.length > 0 && out[out.length - 1] !== 0x0a) out = Buffer.concat([out, NEWLINE]);
  if (wantsGzip(c, deps, out.length)) {
    out = gzipSync(out, { level: 1 });
    headers['content-encoding'] = 'gzip';
    headers.vary = 'Accept-Encoding';
  }
  const warnings = c.get('warnings');
  if (!warnings?.length) return new Response(out, { status, headers });
  const withWarnings = new Headers(headers);
  for (const w of warnings) withWarnings.append('warning', w);
  return new Response(out, { status, headers: withWarnings });
}

/**
 * Writes an object the registry just stored: straight from the cache's serving bytes when the
 * representation is plain JSON of the stored version, else serialized.
 */
export function writeStored(c: Context<Env>, deps: HttpDeps, rep: Representation, resource: ResourceInfo, registry: GenericRegistry, namespace: string, obj: JsonObject, status: number, dryRun: boolean): Response {
  // A dry run stored nothing: the cache holds the previous version under the same name.
  if (!dryRun && rep.view === 'full' && rep.serializer.name === 'json' && registry.servesStoredShape(resource)) {
    const meta = (obj.metadata ?? {}) as JsonObject;
    const bytes = registry.writtenBytes(namespace, String(meta.name ?? ''), meta.resourceVersion as string | undefined);
    if (bytes) return respond(c, deps, bytes, 'application/json', status);
  }
  return writeObject(c, deps, rep, resource, obj, status);
}

/**
 * Writes one object. `schemaName` overrides the resource's schema for bodies of another kind
 * (a Scale, a Status).
 */
export function writeObject(
  c: Context<Env>,
  deps: HttpDeps,
  rep: Representation,
  resource: ResourceInfo,
  obj: JsonObject,
  status = 200,
  schemaName?: string,
  tableAs: TableResource = resource,
): Response {
  let body: JsonObject = obj;
  const naming = viewNaming(deps, rep);
  if (rep.view === 'table') body = { ...tableFor(tableAs, [obj], { naming, includeObject: includeObjectOf(c.get('query')), listMeta: { resourceVersion: String((obj.metadata as JsonObject | undefined)?.resourceVersion ?? '') } }), apiVersion: metaApiVersionOf(deps, rep) } as unknown as JsonObject;
  else if (rep.view === 'partial') body = { ...partialObjectMetadata(obj, naming), apiVersion: metaApiVersionOf(deps, rep) } as unknown as JsonObject;
  const schema = rep.view === 'table' ? {} : schemaName && rep.view === 'full' ? { item: schemaName } : schemasOf(resource, rep.view);
  return respond(c, deps, rep.serializer.object(body, schema), contentTypeOf(rep, deps), status);
}

/** Writes one cached object in full view: from its memoised encoding when the format keeps one. */
export function writeEntry(c: Context<Env>, deps: HttpDeps, rep: Representation, resource: ResourceInfo, entry: CacheEntry): Response {
  if (rep.serializer.name === 'json') return respond(c, deps, withNewline(entry.bytes), 'application/json', 200);
  if (rep.serializer.cachedObject) return respond(c, deps, rep.serializer.cachedObject(entry, schemasOf(resource, 'full')), contentTypeOf(rep, deps), 200);
  return writeObject(c, deps, rep, resource, itemObject({ entry }));
}

export function writeList(c: Context<Env>, deps: HttpDeps, rep: Representation, resource: ResourceInfo, meta: ListMeta, items: readonly Item[]): Response {
  const naming = viewNaming(deps, rep);
  if (rep.view === 'table') {
    const includeObject = includeObjectOf(c.get('query'));
    // kubectl's default: each row's metadata copied from the cached bytes (metadata-views).
    if (rep.serializer.name === 'json' && includeObject === 'Metadata') return respond(c, deps, jsonMetadataTable(resource, items, naming, metaApiVersionOf(deps, rep), meta), contentTypeOf(rep, deps), 200);
    const table = { ...tableFor(resource, items.map(itemObject), { naming, includeObject, listMeta: meta }), apiVersion: metaApiVersionOf(deps, rep) };
    return respond(c, deps, rep.serializer.object(table as unknown as JsonObject), contentTypeOf(rep, deps), 200);
  }
  if (rep.view === 'partial') {
    const apiVersion = metaApiVersionOf(deps, rep);
    if (rep.serializer.name === 'json') return respond(c, deps, jsonPartialList(items, naming, apiVersion, meta), contentTypeOf(rep, deps), 200);
    // Metadata informers' first choice: each item's metadata JSON transcoded, nothing parsed.
    if (rep.serializer instanceof ProtobufSerializer) return respond(c, deps, rep.serializer.listOfJsonItems('PartialObjectMetadataList', apiVersion, meta, partialObjectMetadataJson(items, naming, apiVersion), schemasOf(resource, 'partial')), contentTypeOf(rep, deps), 200);
    const partial = items.map((i) => ({ object: { ...partialObjectMetadata(itemObject(i), naming), apiVersion } as unknown as JsonObject }));
    const body = rep.serializer.list('PartialObjectMetadataList', apiVersion, meta, partial, schemasOf(resource, 'partial'));
    return respond(c, deps, body, contentTypeOf(rep, deps), 200);
  }
  const kind = resource.listKind ?? `${resource.kind}List`;
  const outgoing = c.env?.outgoing as unknown as StreamTarget | undefined;
  if (rep.serializer.listChunks && outgoing && typeof outgoing.writeHead === 'function' && estimatedSize(items) > STREAM_THRESHOLD) {
    // Large lists go out in chunks with backpressure: memory stays near one chunk, not the whole body (twice).
    const gzip = wantsGzip(c, deps, STREAM_THRESHOLD);
    void streamChunks(outgoing, rep.serializer.listChunks(kind, resource.apiVersion, meta, items, schemasOf(resource, 'full'), listChunkPool.take), baseHeaders(c, contentTypeOf(rep, deps)), gzip);
    return RESPONSE_ALREADY_SENT;
  }
  const body = rep.serializer.list(kind, resource.apiVersion, meta, items, schemasOf(resource, 'full'));
  return respond(c, deps, body, contentTypeOf(rep, deps), 200);
}

/** Lists beyond this many bytes are streamed. */
const STREAM_THRESHOLD = 1024 * 1024;

function estimatedSize(items: readonly Item[]): number {
  let n = 0;
  for (const i of items) {
    n += 'entry' in i ? i.entry.bytes.length : 1024;
    if (n > STREAM_THRESHOLD) break;
  }
  return n;
}

function wantsGzip(c: Context<Env>, deps: HttpDeps, size: number): boolean {
  return size > 128 * 1024 && deps.features.enabled('APIResponseCompression') && /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
}

function baseHeaders(c: Context<Env>, contentType: string): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = { 'content-type': contentType, 'cache-control': 'no-cache, private' };
  const warnings = c.get('warnings') ?? [];
  if (warnings.length) h.warning = warnings;
  return h;
}

/** The part of Node's HTTP/1.1 and HTTP/2 compatibility responses a streamed body uses. */
export interface StreamTarget {
  writeHead(status: number, headers: Record<string, string | string[]>): unknown;
  write(chunk: Buffer, callback: (error?: Error | null) => void): boolean;
  end(): unknown;
  destroy(error?: Error): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  readonly destroyed?: boolean;
}

function drained(res: StreamTarget): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/**
 * Writes a list's chunks in 64 KiB writes from pooled chunks (chunk-pool), through gzip when
 * asked, honouring backpressure. A chunk the serializer wrote into a pooled chunk itself is
 * written as it is; other buffers (JSON items, heads, tails) are copied into one. Each pooled
 * chunk goes back to the pool when its write has completed.
 */
export async function streamChunks(res: StreamTarget, chunks: ListChunks, headers: Record<string, string | string[]>, gzip: boolean, pool: ChunkPool = listChunkPool): Promise<void> {
  let closed = false;
  const onClose = () => (closed = true);
  res.once('close', onClose);
  let open: Buffer | undefined;
  // A body whose length is known is sent with Content-Length: HTTP/1.1 then writes each chunk
  // as it is, without chunked framing around it (which TLS copied into one buffer per write).
  const length = gzip ? undefined : chunks.byteLength;
  let sent = 0;
  try {
    if (gzip) {
      headers['content-encoding'] = 'gzip';
      headers.vary = 'Accept-Encoding';
    }
    if (length !== undefined) headers['content-length'] = String(length);
    res.writeHead(200, headers);
    const zip = gzip ? createGzip({ level: 1 }) : undefined;
    // pipe() carries the socket's backpressure back to the compressor and ends the response.
    if (zip) zip.pipe(res as unknown as NodeJS.WritableStream);
    const send = async (b: Buffer): Promise<void> => {
      sent += b.length;
      const done = () => pool.give(b);
      if (zip) {
        if (!zip.write(b, done)) await new Promise<void>((r) => zip.once('drain', () => r()));
      } else if (!res.write(b, done) && !closed) await drained(res);
    };
    let p = 0;
    for (const chunk of chunks) {
      if (closed || res.destroyed) return;
      if (pool.owns(chunk)) {
        if (open !== undefined && p > 0) {
          const part = open.subarray(0, p);
          open = undefined;
          p = 0;
          await send(part);
        }
        await send(chunk);
        continue;
      }
      let from = 0;
      while (from < chunk.length) {
        if (p === 0 && chunk.length - from >= CHUNK_BYTES) {
          // A chunk's worth or more in one buffer: written as it is, no copy.
          await send(from === 0 ? chunk : chunk.subarray(from));
          break;
        }
        open ??= pool.take();
        const take = Math.min(chunk.length - from, CHUNK_BYTES - p);
        if (from === 0 && take === chunk.length) open.set(chunk, p);
        else chunk.copy(open, p, from, from + take);
        p += take;
        from += take;
        if (p === CHUNK_BYTES) {
          const full = open;
          open = undefined;
          p = 0;
          await send(full);
        }
      }
    }
    if (open !== undefined && p > 0) {
      const last = open.subarray(0, p);
      open = undefined;
      await send(last);
    }
    if (zip) zip.end();
    else if (length !== undefined && sent !== length) {
      // Never a short body behind a Content-Length: the client sees the connection fail.
      res.destroy(new Error(`list body of ${sent} bytes, announced ${length}`));
    } else if (!closed) res.end();
  } finally {
    if (open !== undefined) pool.give(open);
    res.off('close', onClose);
  }
}

export interface WatchEventWriter {
  contentType: string;
  /**
   * Names everything an object event's bytes depend on besides the event, when that is all
   * they depend on (streams with the same key may share bytes); undefined for stateful views.
   */
  shareKey: string | undefined;
  write(type: string, item: Item): Buffer;
  /** The event as buffers to write in sequence (cached object bytes referenced, not copied). */
  parts(type: string, item: Item): Buffer[];
}

/** A stateful writer of one watch stream's events (Tables carry column definitions once). */
export function watchEventWriter(c: Context<Env>, deps: HttpDeps, rep: Representation, resource: ResourceInfo): WatchEventWriter {
  if (!rep.serializer.watchMediaType) throw errors.notAcceptable(['application/json']);
  let headersSent = false;
  const includeObject = rep.view === 'table' ? includeObjectOf(c.get('query')) : 'Metadata';
  const naming = viewNaming(deps, rep);
  const metaApiVersion = metaApiVersionOf(deps, rep);
  // Upstream names only the stream's media type (application/json, or the protobuf type with
  // stream=watch), whatever the view: the event objects say they are Tables or metadata.
  const contentType = rep.serializer.watchMediaType;
  const fullParts = rep.view === 'full' ? rep.serializer.watchEventParts?.bind(rep.serializer) : undefined;
  return {
    contentType,
    shareKey: rep.view === 'table' ? undefined : `${contentType} ${rep.view} ${rep.view === 'partial' ? metaApiVersion : ''} ${resource.apiVersion} ${resource.kind}`,
    parts(type, item) {
      return fullParts && type !== 'ERROR' ? fullParts(type, item, schemasOf(resource, 'full')) : [this.write(type, item)];
    },
    write(type, item) {
      if (type === 'ERROR') return rep.serializer.watchEvent(type, item, { item: `${META_SCHEMA}Status` });
      if (rep.view === 'full') return rep.serializer.watchEvent(type, item, schemasOf(resource, 'full'));
      const obj = itemObject(item);
      if (type === 'BOOKMARK') {
        if (rep.view === 'partial') {
          // Upstream transforms bookmarks like every other event: a PartialObjectMetadata that
          // carries only the resourceVersion (and the initial-events-end annotation). Metadata
          // clients decode nothing else; a ConfigMap-kinded bookmark broke their streams.
          const bookmark = { kind: 'PartialObjectMetadata', apiVersion: metaApiVersion, metadata: obj.metadata };
          return rep.serializer.watchEvent(type, { object: bookmark as JsonObject }, schemasOf(resource, 'partial'));
        }
        // Table streams keep the bookmark's own shape (kind, apiVersion, resourceVersion).
        return rep.serializer.watchEvent(type, { object: obj }, schemasOf(resource, 'full'));
      }
      if (rep.view === 'partial') {
        return rep.serializer.watchEvent(type, { object: { ...partialObjectMetadata(obj, naming), apiVersion: metaApiVersion } as unknown as JsonObject }, schemasOf(resource, 'partial'));
      }
      const table = {
        kind: 'Table',
        apiVersion: metaApiVersion,
        metadata: { resourceVersion: String((obj.metadata as JsonObject | undefined)?.resourceVersion ?? '') },
        columnDefinitions: headersSent ? [] : columnDefinitionsFor(resource),
        rows: rowsFor(resource, [obj], { naming, includeObject }),
      };
      headersSent = true;
      return rep.serializer.watchEvent(type, { object: table });
    },
  };
}
