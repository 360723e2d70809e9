// internal/http/encoders owns turning API objects, lists and watch events into response
// bytes for each negotiated media type. JSON reuses the watch cache's serving bytes for list
// items and watch events (serialize once, write many); other encodings decode those bytes
// first. Issue-specific encoders (YAML, protobuf, CBOR, Table) plug in as more Encoders.
// Imports: storedobject (types), watchcache (types).

import type { JsonObject } from '../storedobject/stored-object.js';
import type { CacheEntry } from '../watchcache/types.js';

export interface ListMeta {
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** An item of a list or watch event: cached bytes (fast path) or an object. */
export type Item = { entry: CacheEntry } | { object: JsonObject };

export interface Encoder {
  readonly mediaType: string;
  /** Content-Type header value. */
  readonly contentType: string;
  object(obj: JsonObject): Buffer;
  list(kind: string, apiVersion: string, meta: ListMeta, items: readonly Item[]): Buffer;
  /** One framed watch event. */
  watchEvent(type: string, item: Item): Buffer;
  /** True when items must be objects (the encoder cannot use JSON bytes). */
  readonly needsObjects: boolean;
}

const COMMA = Buffer.from(',');

const itemBytes = (item: Item): Buffer => ('entry' in item ? item.entry.bytes : Buffer.from(JSON.stringify(item.object)));

export const jsonEncoder: Encoder = {
  mediaType: 'application/json',
  contentType: 'application/json',
  needsObjects: false,
  object: (obj) => Buffer.from(JSON.stringify(obj)),
  list(kind, apiVersion, meta, items) {
    const m: Record<string, unknown> = { resourceVersion: meta.resourceVersion };
    if (meta.continue) m.continue = meta.continue;
    if (meta.remainingItemCount !== undefined) m.remainingItemCount = meta.remainingItemCount;
    const head = Buffer.from(`{"kind":${JSON.stringify(kind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(m)},"items":[`);
    const parts: Buffer[] = [head];
    let size = head.length + 2;
    items.forEach((item, i) => {
      if (i > 0) {
        parts.push(COMMA);
        size++;
      }
      const b = itemBytes(item);
      parts.push(b);
      size += b.length;
    });
    parts.push(Buffer.from(']}'));
    return Buffer.concat(parts, size);
  },
  watchEvent(type, item) {
    const b = itemBytes(item);
    return Buffer.concat([Buffer.from(`{"type":"${type}","object":`), b, Buffer.from('}\n')]);
  },
};

/** Decodes an item to an object (for encoders that need one). */
export function itemObject(item: Item): JsonObject {
  return 'entry' in item ? (JSON.parse(item.entry.bytes.toString('utf8')) as JsonObject) : item.object;
}
