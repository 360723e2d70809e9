// metadata-views writes the Table and PartialObjectMetadataList bodies from cached bytes: they
// must be the bytes the general path (parse, build with printers/table, JSON.stringify) gives,
// for odd metadata, reordered rows, and items that are objects rather than cache entries.
import { describe, it, expect } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { partialObjectMetadata, tableFor, type TableResource } from '../printers/index.js';
import { encodeStored, metadataAndRest, metadataBytes, withResourceVersion } from '../storedobject/stored-object.js';
import type { CacheEntry } from '../watchcache/types.js';
import { jsonMetadataTable, jsonPartialList, partialObjectMetadataJson } from './metadata-views.js';
import { itemObject, jsonSerializer, ProtobufSerializer, type Item, type ListMeta } from './serializers.js';

type Obj = Record<string, unknown>;

const entryItem = (obj: Obj, revision: number): Item => ({ entry: { bytes: withResourceVersion(encodeStored(obj), revision) } as CacheEntry });

const pod = (name: string, metadata: Obj = {}, extra: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, creationTimestamp: '2020-01-02T03:04:05Z', ...metadata },
  spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
  status: { phase: 'Running', podIP: '10.0.0.1', containerStatuses: [{ name: 'c', ready: true, restartCount: 2 }] },
  ...extra,
});

const PODS: TableResource = { upstreamGroup: '', resource: 'pods', version: 'v1' };
const FLOW_SCHEMAS: TableResource = { upstreamGroup: 'flowcontrol.apiserver.k8s.io', resource: 'flowschemas', version: 'v1' };
const META: ListMeta = { resourceVersion: '42', continue: 'abc', remainingItemCount: 3 };

/** The general path's Table body. */
function generalTable(r: TableResource, items: Item[], naming: ReturnType<typeof createNaming>, apiVersion: string, meta: ListMeta): Buffer {
  return jsonSerializer.object({ ...tableFor(r, items.map(itemObject), { naming, includeObject: 'Metadata', listMeta: meta }), apiVersion } as unknown as Obj);
}

const ODD_PODS: Obj[] = [
  pod('plain'),
  pod('labels', { labels: { app: 'x', '__proto__': 'kept' }, annotations: { note: 'quote " backslash \\ newline \n tab \t', 'ünï': '☃ \u2028 \ud83d\ude00' } }),
  pod('owned', {
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', controller: true }],
    finalizers: ['a/b'],
    managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time: '2020-01-02T03:04:05Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } } }],
  }),
  pod('deleting', { deletionTimestamp: '2020-01-02T03:04:06Z', deletionGracePeriodSeconds: 30, generation: 7 }),
  // A template's metadata comes before nothing here, but its object nests a metadata key.
  pod('nested', { labels: { 'metadata': '{' } }, { spec: { template: { metadata: { name: 'inner' } }, containers: [] } }),
];

describe('metadataBytes', () => {
  it('is the top-level metadata of serving bytes, as JSON.stringify writes it', () => {
    for (const [i, p] of ODD_PODS.entries()) {
      const bytes = withResourceVersion(encodeStored(p), 100 + i);
      const parsed = JSON.parse(bytes.toString()) as Obj;
      expect(metadataBytes(bytes)?.toString()).toBe(JSON.stringify(parsed.metadata));
    }
  });

  it('skips members before it, even a nested metadata, and refuses what is not compact JSON of an object', () => {
    const nestedFirst = Buffer.from('{"spec":{"template":{"metadata":{"name":"inner"}}},"metadata":{"name":"outer"}}');
    expect(metadataBytes(nestedFirst)?.toString()).toBe('{"name":"outer"}');
    for (const bad of ['{"kind":"Pod"}', '[]', '{ "metadata":{}}', '{"metadata":"x"}', '{"metadata":{"name":"x"', '']) expect(metadataBytes(Buffer.from(bad)), bad).toBeUndefined();
  });
});

describe('metadataAndRest', () => {
  const mf = [{ manager: 'm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': {} } } }];
  it.each([
    ['first', { managedFields: mf, name: 'a', labels: { managedFields: 'a label' } }],
    ['in the middle', { name: 'a', managedFields: mf, uid: 'u' }],
    ['last', { name: 'a', uid: 'u', managedFields: mf }],
    ['alone', { managedFields: mf }],
  ])('cuts managedFields %s, and only it', (_, metadata) => {
    const obj = { kind: 'Pod', apiVersion: 'v1', metadata, spec: { template: { metadata: { managedFields: mf } } } };
    const bytes = withResourceVersion(encodeStored(obj), 7);
    const at = metadataAndRest(bytes)!;
    const { managedFields: _mf, ...rest } = metadata as Obj;
    expect(at.withoutManagedFields.toString()).toBe(JSON.stringify({ ...obj, metadata: { resourceVersion: '7', ...rest } }));
    expect(at.metadata.toString()).toBe(JSON.stringify({ resourceVersion: '7', ...metadata }));
  });

  it('leaves bytes without managedFields as they are, and refuses bytes it cannot read', () => {
    const plain = withResourceVersion(encodeStored(pod('p')), 1);
    expect(metadataAndRest(plain)?.withoutManagedFields).toBe(plain);
    const empty = Buffer.from('{"kind":"Pod","metadata":{}}');
    expect(metadataAndRest(empty)).toEqual({ metadata: Buffer.from('{}'), withoutManagedFields: empty });
    for (const bad of ['{"metadata":{"managedFields":[}', '{"metadata":{"a":1,}}', '{"metadata":{"a":1']) expect(metadataAndRest(Buffer.from(bad)), bad).toBeUndefined();
  });
});

describe('jsonMetadataTable', () => {
  it.each([
    ['kubernetes', 'meta.k8s.io/v1'],
    ['kubernetes', 'meta.k8s.io/v1beta1'],
    ['cluster', 'meta.cluster.io/v1'],
  ] as const)('gives the general path’s bytes (naming %s, %s)', (namingName, apiVersion) => {
    const naming = createNaming(namingName);
    const items = ODD_PODS.map((p, i) => entryItem(p, 10 + i));
    expect(jsonMetadataTable(PODS, items, naming, apiVersion, META).toString()).toBe(generalTable(PODS, items, naming, apiVersion, META).toString());
  });

  it('puts each row’s metadata with its object when the printer reorders the rows, and encodes items that are objects', () => {
    const naming = createNaming('kubernetes');
    const fs = (name: string, precedence: number): Obj => ({
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name, uid: `u-${name}`, creationTimestamp: '2020-01-02T03:04:05Z', labels: { at: String(precedence) } },
      spec: { matchingPrecedence: precedence, priorityLevelConfiguration: { name: 'global-default' } },
    });
    const items: Item[] = [entryItem(fs('c', 900), 1), { object: { ...fs('a', 100), metadata: { ...(fs('a', 100).metadata as Obj), resourceVersion: '2' } } }, entryItem(fs('b', 500), 3), entryItem(fs('d', 100), 4)];
    const ours = jsonMetadataTable(FLOW_SCHEMAS, items, naming, 'meta.k8s.io/v1', { resourceVersion: '4' }).toString();
    expect(ours).toBe(generalTable(FLOW_SCHEMAS, items, naming, 'meta.k8s.io/v1', { resourceVersion: '4' }).toString());
    const rows = (JSON.parse(ours) as { rows: { cells: unknown[]; object: { metadata: { name: string; labels: Obj } } }[] }).rows;
    expect(rows.map((r) => [r.cells[0], r.object.metadata.name, r.object.metadata.labels.at])).toEqual([
      ['a', 'a', '100'],
      ['d', 'd', '100'],
      ['b', 'b', '500'],
      ['c', 'c', '900'],
    ]);
  });

  it('writes an empty list as the general path does', () => {
    const naming = createNaming('kubernetes');
    expect(jsonMetadataTable(PODS, [], naming, 'meta.k8s.io/v1', META).toString()).toBe(generalTable(PODS, [], naming, 'meta.k8s.io/v1', META).toString());
  });
});

describe('jsonPartialList', () => {
  it('gives the general path’s bytes without parsing cache entries', () => {
    const naming = createNaming('kubernetes');
    const items: Item[] = [...ODD_PODS.map((p, i) => entryItem(p, 10 + i)), { object: pod('converted', { resourceVersion: '99' }) }];
    for (const apiVersion of ['meta.k8s.io/v1', 'meta.k8s.io/v1beta1']) {
      const general = jsonSerializer.list('PartialObjectMetadataList', apiVersion, META, items.map((i) => ({ object: { ...partialObjectMetadata(itemObject(i), naming), apiVersion } as unknown as Obj })));
      expect(jsonPartialList(items, naming, apiVersion, META).toString()).toBe(general.toString());
    }
    expect(jsonPartialList([], naming, 'meta.k8s.io/v1', { resourceVersion: '1' }).toString()).toBe('{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"1"},"items":[]}\n');
  });
});

describe('a protobuf PartialObjectMetadataList from the items’ metadata JSON', () => {
  it('is what the protobuf list of the parsed items gives', () => {
    const naming = createNaming('kubernetes');
    const protobuf = new ProtobufSerializer(naming);
    const schema = { item: 'io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata', list: 'io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList' };
    const items: Item[] = [...ODD_PODS.map((p, i) => entryItem(p, 10 + i)), { object: pod('converted', { resourceVersion: '99' }) }];
    for (const apiVersion of ['meta.k8s.io/v1', 'meta.k8s.io/v1beta1']) {
      const general = protobuf.list('PartialObjectMetadataList', apiVersion, META, items.map((i) => ({ object: { ...partialObjectMetadata(itemObject(i), naming), apiVersion } as unknown as Obj })), schema);
      const ours = protobuf.listOfJsonItems('PartialObjectMetadataList', apiVersion, META, partialObjectMetadataJson(items, naming, apiVersion), schema);
      expect(ours.equals(general)).toBe(true);
      expect(ours.length).toBeGreaterThan(items.length * 50);
    }
  });
});
