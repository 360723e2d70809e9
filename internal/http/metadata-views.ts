// internal/http/metadata-views owns the JSON bodies of the metadata views of a list (a Table with
// each row's PartialObjectMetadata, which is what `kubectl get` asks for, and a
// PartialObjectMetadataList, what metadata informers ask for) written from the cached objects'
// bytes: an object's metadata, managedFields and all, is copied from its serving bytes instead of
// being parsed and encoded again, a metadata list parses nothing (in protobuf, each item's JSON
// is transcoded, as cached objects' are), and a Table's printers get the
// object parsed without its managedFields. The bytes are what JSON.stringify of the objects
// built by printers/table gives (the cache holds compact JSON), so the answer is the same.
// Objects that are not cache entries (converted to another version) are encoded as before.
// Imports: printers, storedobject, http/serializers.

import type { Naming } from '../naming/naming.js';
import { partialObjectMetadata, printedRows, tableFor, type TableResource } from '../printers/index.js';
import { metadataAndRest, metadataBytes } from '../storedobject/stored-object.js';
import { itemObject, jsonListOfItemBytes, type Item, type ListMeta } from './serializers.js';

/** The metadata of an item as JSON bytes: `fromBytes` (a cache entry's), or encoded from the object. */
function metadataJson(fromBytes: Buffer | undefined, object: unknown, naming: Naming): Buffer {
  return fromBytes ?? Buffer.from(JSON.stringify(partialObjectMetadata(object, naming).metadata));
}

/** `{"kind":"PartialObjectMetadata","apiVersion":…,"metadata":` — the bytes before an item's metadata. */
function partialHead(apiVersion: string): Buffer {
  return Buffer.from(`{"kind":"PartialObjectMetadata","apiVersion":${JSON.stringify(apiVersion)},"metadata":`);
}

const CLOSE = Buffer.from('}');
const CLOSE2 = Buffer.from('}}');
const COMMA = Buffer.from(',');
const ROW_OBJECT = Buffer.from(',"object":');
const TABLE_TAIL = Buffer.from(']}\n');

/**
 * Each item as the JSON of its PartialObjectMetadata in `apiVersion` (the meta group and version
 * asked for): what a PartialObjectMetadataList holds, in JSON, or for a format to transcode.
 */
export function partialObjectMetadataJson(items: readonly Item[], naming: Naming, apiVersion: string): Buffer[] {
  const head = partialHead(apiVersion);
  return items.map((item) => {
    const fromBytes = 'entry' in item ? metadataBytes(item.entry.bytes) : undefined;
    return Buffer.concat([head, metadataJson(fromBytes, fromBytes ? undefined : itemObject(item), naming), CLOSE]);
  });
}

/** A PartialObjectMetadataList of the items in `apiVersion`, as JSON. */
export function jsonPartialList(items: readonly Item[], naming: Naming, apiVersion: string, meta: ListMeta): Buffer {
  return jsonListOfItemBytes('PartialObjectMetadataList', apiVersion, meta, partialObjectMetadataJson(items, naming, apiVersion));
}

/**
 * A Table of the items with each row's object as PartialObjectMetadata (`includeObject`
 * Metadata, the default), in `apiVersion`; `naming` gives the rows' objects their apiVersion as
 * printers/table does.
 */
export function jsonMetadataTable(r: TableResource, items: readonly Item[], naming: Naming, apiVersion: string, meta: ListMeta): Buffer {
  // The rows' metadata comes from the bytes, and the printers read no managedFields: a cached
  // object is parsed without it (half the parse of a typical pod). One pass finds both.
  const metadata: (Buffer | undefined)[] = [];
  const objects = items.map((item) => {
    if (!('entry' in item)) {
      metadata.push(undefined);
      return item.object;
    }
    const at = metadataAndRest(item.entry.bytes);
    metadata.push(at?.metadata);
    return JSON.parse((at?.withoutManagedFields ?? item.entry.bytes).toString('utf8')) as unknown;
  });
  // The table without rows, as the general path encodes it, open at its rows.
  const empty = JSON.stringify({ ...tableFor(r, [], { naming, listMeta: meta }), apiVersion });
  if (!empty.endsWith('"rows":[]}')) throw new Error('unexpected Table encoding');
  const parts: Buffer[] = [Buffer.from(empty.slice(0, -2))];
  const head = partialHead(`${naming.metaGroup}/v1`);
  printedRows(r, objects, { naming }).forEach(({ row, index }, n) => {
    if (n > 0) parts.push(COMMA);
    const printed = JSON.stringify(row);
    // The row's own members, then its object where the general path puts it (last).
    parts.push(Buffer.from(printed.slice(0, -1)), ROW_OBJECT, head, metadataJson(metadata[index], objects[index], naming), CLOSE2);
  });
  parts.push(TABLE_TAIL);
  return Buffer.concat(parts);
}
