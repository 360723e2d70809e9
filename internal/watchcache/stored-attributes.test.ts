// Tests of the attributes the store's records keep beside values (watch-cache attributeBytes):
// a restart builds entries from them without parsing objects when they were derived under the
// resource's current stamp; otherwise (another stamp, no stamp, none stored, a data directory
// written before records carried them) it parses, and the entries are the same either way.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeRecord, encodeRecord, historyKey, META_REVISION } from '../store/layout.js';
import { LevelRevisionStore } from '../store/revision-store.js';
import { encodeStored } from '../storedobject/stored-object.js';
import type { ResourceSpec } from './types.js';
import { WatchCache } from './watch-cache.js';

const PREFIX = '/registry/core/pods/';
const pod = (ns: string, name: string, labels: Record<string, string>, nodeName: string) =>
  ({ kind: 'Pod', apiVersion: 'v1', metadata: { name, namespace: ns, labels }, spec: { nodeName } }) as Record<string, unknown>;

/** A pods spec deriving spec.nodeName under `stamp`, counting the objects it derives from. */
function podSpec(stamp: string) {
  const spec = {
    derived: 0,
    stamp,
    attributes(obj: Record<string, unknown>) {
      spec.derived++;
      const meta = obj.metadata as { name: string; namespace: string; labels?: Record<string, string> };
      return {
        labels: meta.labels ?? {},
        fields: { 'metadata.name': meta.name, 'metadata.namespace': meta.namespace, 'spec.nodeName': String((obj.spec as { nodeName?: string }).nodeName ?? '') },
      };
    },
  } satisfies ResourceSpec & { derived: number };
  return spec;
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'clusterd-attrs-'));
  dirs.push(d);
  return d;
}

/** Starts a cache over the store at `path` with `spec` for pods; returns what it holds. */
async function loadWith(path: string, spec: ResourceSpec | undefined) {
  const store = await LevelRevisionStore.open({ storage: 'leveldb', path });
  const cache = new WatchCache(store, { root: '/registry/', specFor: (p) => (p === PREFIX ? spec : undefined) });
  await cache.start();
  const entries = cache.resource(PREFIX).list().entries.map((e) => ({ key: e.key, namespace: e.namespace, name: e.name, labels: { ...e.labels }, fields: { ...e.fields }, json: JSON.parse(e.bytes.toString('utf8')) as unknown }));
  cache.stop();
  await store.close();
  return entries;
}

/** Writes pods through a store whose records get attributes from a cache with `spec` (as the server wires it). */
async function writePods(path: string, spec: ResourceSpec, withAttributes: boolean): Promise<void> {
  const store = await LevelRevisionStore.open({ storage: 'leveldb', path });
  const cache = new WatchCache(store, { root: '/registry/', specFor: (p) => (p === PREFIX ? spec : undefined) });
  if (withAttributes) store.describeWith((key, obj) => cache.attributeBytes(key, obj));
  await cache.start();
  const objects = [pod('a', 'p1', { app: 'web' }, 'node-1'), pod('a', 'p2', {}, ''), pod('b', 'p1', { app: 'db', tier: 'x' }, 'node-2')];
  for (const o of objects) {
    const meta = o.metadata as { name: string; namespace: string };
    const key = `${PREFIX}${meta.namespace}/${meta.name}`;
    await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key, value: encodeStored(o) }] }, new Map([[key, o]]));
  }
  cache.stop();
  await store.close();
}

describe('records with attributes', () => {
  it('encode and decode with and without attributes; a record in the format before attributes reads as before', () => {
    const value = Buffer.from('{"kind":"Pod"}');
    const attrs = Buffer.from('["ns","n",{},{},"s"]');
    expect(decodeRecord(encodeRecord(false, 7, 3, value, attrs))).toMatchObject({ tombstone: false, createRevision: 7, version: 3 });
    expect(Buffer.from(decodeRecord(encodeRecord(false, 7, 3, value, attrs)).value).toString()).toBe('{"kind":"Pod"}');
    expect(Buffer.from(decodeRecord(encodeRecord(false, 7, 3, value, attrs)).attributes!).toString()).toBe('["ns","n",{},{},"s"]');
    expect(decodeRecord(encodeRecord(false, 7, 3, value)).attributes).toBeUndefined();
    expect(decodeRecord(encodeRecord(true, 7, 0, new Uint8Array(0)))).toMatchObject({ tombstone: true, createRevision: 7, version: 0 });
    // The old layout, byte by byte: flags, 6 bytes createRevision, 6 bytes version, value.
    const old = Buffer.concat([Buffer.from([0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 3]), value]);
    const r = decodeRecord(old);
    expect(r).toMatchObject({ tombstone: false, createRevision: 7, version: 3 });
    expect(r.attributes).toBeUndefined();
    expect(Buffer.from(r.value).toString()).toBe('{"kind":"Pod"}');
    // Attributes that claim more bytes than the record holds are refused, not read past.
    const bad = Buffer.from(encodeRecord(false, 1, 1, value, attrs));
    bad.writeUInt32BE(1000, 13);
    expect(() => decodeRecord(bad)).toThrow(/overrun/);
  });

  it('a restart derives nothing for records stored under the current stamp, and the entries equal parsed ones', async () => {
    const dir = tempDir();
    const spec = podSpec('v1');
    await writePods(join(dir, 'db'), spec, true);
    const fresh = podSpec('v1');
    const loaded = await loadWith(join(dir, 'db'), fresh);
    expect(fresh.derived).toBe(0);
    expect(loaded.map((e) => e.key)).toEqual([`${PREFIX}a/p1`, `${PREFIX}a/p2`, `${PREFIX}b/p1`]);

    // The same data parsed (records without attributes) gives the same entries.
    const plain = tempDir();
    await writePods(join(plain, 'db'), podSpec('v1'), false);
    const parsedSpec = podSpec('v1');
    const parsed = await loadWith(join(plain, 'db'), parsedSpec);
    expect(parsedSpec.derived).toBe(3);
    expect(loaded).toEqual(parsed);
    expect(loaded[2]).toMatchObject({ namespace: 'b', name: 'p1', labels: { app: 'db', tier: 'x' }, fields: { 'spec.nodeName': 'node-2', 'metadata.namespace': 'b' } });
  });

  it('attributes stored under another stamp are derived again from the object', async () => {
    const dir = tempDir();
    await writePods(join(dir, 'db'), podSpec('v1'), true);
    // A spec that now derives fields differently: its stamp changed with it.
    const changed = podSpec('v2');
    const inner = changed.attributes;
    changed.attributes = (obj) => {
      const a = inner(obj);
      return { labels: a.labels, fields: { ...a.fields, 'spec.nodeName': `!${a.fields['spec.nodeName']}` } };
    };
    const loaded = await loadWith(join(dir, 'db'), changed);
    expect(changed.derived).toBe(3);
    expect(loaded.map((e) => e.fields['spec.nodeName'])).toEqual(['!node-1', '!', '!node-2']);
  });

  it('a resource without a spec at start (a custom resource before its definition is served) keeps what was stored', async () => {
    const dir = tempDir();
    await writePods(join(dir, 'db'), podSpec('v1'), true);
    const loaded = await loadWith(join(dir, 'db'), undefined);
    expect(loaded.map((e) => e.fields['spec.nodeName'])).toEqual(['node-1', '', 'node-2']);
  });

  it('opens a data directory written before records carried attributes, and rewrites add them', async () => {
    const dir = tempDir();
    const path = join(dir, 'db');
    // The old format exactly: history records with the 13-byte header and the value, and the
    // revision metadata, written straight into LevelDB as the store before this change did.
    const db = new Level<string, Uint8Array>(path, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    const old = (createRevision: number, version: number, value: Uint8Array) => {
      const head = Buffer.alloc(13);
      head.writeUIntBE(createRevision, 1, 6);
      head.writeUIntBE(version, 7, 6);
      return Buffer.concat([head, value]);
    };
    await db.put(historyKey(`${PREFIX}a/p1`, 1), old(1, 1, encodeStored(pod('a', 'p1', { app: 'web' }, 'node-1'))));
    await db.put(historyKey(`${PREFIX}a/p1`, 2), old(1, 2, encodeStored(pod('a', 'p1', { app: 'web', v: '2' }, 'node-1'))));
    await db.put(historyKey(`${PREFIX}a/p2`, 3), old(3, 1, encodeStored(pod('a', 'p2', {}, ''))));
    await db.put(historyKey(`${PREFIX}a/p2`, 4), Buffer.from([1, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0])); // tombstone
    await db.put(META_REVISION, Buffer.from('4'));
    await db.close();

    const spec = podSpec('v1');
    const loaded = await loadWith(path, spec);
    expect(spec.derived).toBe(1);
    expect(loaded).toHaveLength(1);
    expect(loaded[0]).toMatchObject({ name: 'p1', labels: { app: 'web', v: '2' }, fields: { 'spec.nodeName': 'node-1' }, json: { metadata: { resourceVersion: '2' } } });

    // Reads and history work as before; a write through the wired store stores attributes.
    const store = await LevelRevisionStore.open({ storage: 'leveldb', path });
    expect(store.currentRevision()).toBe(4);
    expect((await store.get(`${PREFIX}a/p1`))?.version).toBe(2);
    expect((await store.eventsSince(PREFIX, 0)).map((e) => `${e.type}@${e.kv.modRevision}`)).toEqual(['put@1', 'put@2', 'put@3', 'delete@4']);
    const cache = new WatchCache(store, { root: '/registry/', specFor: (p) => (p === PREFIX ? spec : undefined) });
    store.describeWith((key, obj) => cache.attributeBytes(key, obj));
    const o = pod('a', 'p1', { app: 'web', v: '3' }, 'node-9');
    await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: `${PREFIX}a/p1`, value: encodeStored(o) }] }, new Map([[`${PREFIX}a/p1`, o]]));
    const kv = (await store.range(PREFIX, { attributes: true })).kvs[0]!;
    expect(JSON.parse(Buffer.from(kv.attributes!).toString())).toEqual(['a', 'p1', { app: 'web', v: '3' }, { 'metadata.name': 'p1', 'metadata.namespace': 'a', 'spec.nodeName': 'node-9' }, 'v1']);
    // Without asking, a range's key-values stay as they were.
    expect((await store.range(PREFIX)).kvs[0]!.attributes).toBeUndefined();
    await store.close();
    const after = podSpec('v1');
    expect((await loadWith(path, after))[0]).toMatchObject({ labels: { v: '3' }, fields: { 'spec.nodeName': 'node-9' } });
    expect(after.derived).toBe(0);
  });

  it('stored label and field values that are not strings load as a parse of the object reads them', async () => {
    const dir = tempDir();
    const path = join(dir, 'db');
    const db = new Level<string, Uint8Array>(path, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    const o = pod('a', 'p1', {}, 'n');
    const attrs = Buffer.from(JSON.stringify(['a', 'p1', { nil: null, n: 3, b: true, o: { x: 1 }, s: 'web' }, { 'metadata.name': 'p1', 'metadata.namespace': 'a', 'spec.nodeName': null, 'status.x': [1] }, 'v1']));
    await db.put(historyKey(`${PREFIX}a/p1`, 1), encodeRecord(false, 1, 1, encodeStored(o), attrs));
    await db.put(META_REVISION, Buffer.from('1'));
    await db.close();
    const spec = podSpec('v1');
    const [e] = await loadWith(path, spec);
    expect(spec.derived).toBe(0);
    expect(e!.labels).toEqual({ nil: '', n: '3', b: 'true', s: 'web' });
    expect(e!.fields).toEqual({ 'metadata.name': 'p1', 'metadata.namespace': 'a', 'spec.nodeName': '' });
    expect(e!.name).toBe('p1');
  });

  it('a describe that throws stores the value without attributes instead of failing the write', async () => {
    const dir = tempDir();
    const path = join(dir, 'db');
    const store = await LevelRevisionStore.open({ storage: 'leveldb', path });
    store.describeWith(() => {
      throw new Error('no');
    });
    const o = pod('a', 'p1', {}, 'n');
    const r = await store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: `${PREFIX}a/p1`, value: encodeStored(o) }] }, new Map([[`${PREFIX}a/p1`, o]]));
    expect(r.succeeded).toBe(true);
    expect((await store.range(PREFIX, { attributes: true })).kvs[0]!.attributes).toBeUndefined();
    await store.close();
  });
});
