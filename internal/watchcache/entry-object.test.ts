import { describe, expect, it } from 'vitest';
import { encodeStored } from '../storedobject/stored-object.js';
import { decodedEntry, entryMetadata, rememberDecoded } from './entry-object.js';
import { memoryCacheFixture } from './memory-cache-fixture.js';
import type { CacheEntry } from './types.js';

const PREFIX = '/registry/core/configmaps/';
const entryOf = (bytes: string, corrupt?: string): CacheEntry => ({
  key: `${PREFIX}ns/x`,
  namespace: 'ns',
  name: 'x',
  revision: 3,
  bytes: Buffer.from(bytes),
  labels: {},
  fields: {},
  ...(corrupt ? { corrupt } : {}),
});

describe('decodedEntry', () => {
  it('parses an entry once and hands the same object to every consumer', () => {
    const e = entryOf('{"kind":"ConfigMap","metadata":{"resourceVersion":"3","name":"x"},"data":{"a":"b"}}');
    const first = decodedEntry(e);
    expect(first).toEqual({ kind: 'ConfigMap', metadata: { resourceVersion: '3', name: 'x' }, data: { a: 'b' } });
    expect(decodedEntry(e)).toBe(first);
    // Another entry with the same bytes is another change: its own parse.
    expect(decodedEntry(entryOf(e.bytes.toString()))).not.toBe(first);
  });

  it('answers undefined for a corrupt entry and for bytes that are not a JSON object', () => {
    expect(decodedEntry(entryOf('', 'unable to decode'))).toBeUndefined();
    expect(decodedEntry(entryOf('{"kind":'))).toBeUndefined();
    expect(decodedEntry(entryOf('[1,2]'))).toBeUndefined();
    expect(decodedEntry(entryOf('null'))).toBeUndefined();
  });

  it('keeps only the most recent entries (bounded), parsing older ones again', () => {
    const old = entryOf('{"metadata":{"name":"old"}}');
    const kept = { metadata: { name: 'old' } };
    rememberDecoded(old, kept);
    expect(decodedEntry(old)).toBe(kept);
    for (let i = 0; i < 600; i++) decodedEntry(entryOf(`{"metadata":{"name":"n${i}"}}`));
    const again = decodedEntry(old);
    expect(again).toEqual(kept);
    expect(again).not.toBe(kept);
  });
});

describe('the watch cache shares what it parsed', () => {
  const f = memoryCacheFixture();

  const put = (name: string, decoded?: Map<string, unknown>) => {
    const obj = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name, namespace: 'ns', labels: { a: 'b' } }, data: { k: 'v' } };
    return f.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: `${PREFIX}ns/${name}`, value: encodeStored(obj) }] }, decoded?.set(`${PREFIX}ns/${name}`, obj));
  };

  it('an applied entry it parsed decodes to exactly what its bytes parse to, without parsing again', async () => {
    await f.cache.start();
    await put('one');
    const entry = f.cache.resource(PREFIX).get(`${PREFIX}ns/one`)!;
    const shared = decodedEntry(entry);
    expect(shared).toEqual(JSON.parse(entry.bytes.toString('utf8')));
    // Same key order too (resourceVersion first in metadata, as the serving bytes have it).
    expect(JSON.stringify(shared)).toBe(entry.bytes.toString('utf8'));
    expect(decodedEntry(entry)).toBe(shared);
  });

  it("never shares the writer's own object (the writer goes on changing it)", async () => {
    await f.cache.start();
    const hint = new Map<string, unknown>();
    const writing = put('two', hint);
    // The writer changes its object after encoding it: the cache read its attributes from it
    // (no parse), and a consumer must still see what was stored.
    (hint.get(`${PREFIX}ns/two`) as { metadata: { labels: Record<string, string> } }).metadata.labels = { a: 'changed by the writer' };
    await writing;
    const entry = f.cache.resource(PREFIX).get(`${PREFIX}ns/two`)!;
    expect(entry.labels).toEqual({ a: 'changed by the writer' });
    expect(decodedEntry(entry)).toEqual(JSON.parse(entry.bytes.toString('utf8')));
    expect((decodedEntry(entry) as { metadata: { labels: Record<string, string> } }).metadata.labels).toEqual({ a: 'b' });
  });
});

describe('entryMetadata', () => {
  it('reads the named members alone, without keeping a parse of the entry', () => {
    const e = entryOf('{"kind":"ConfigMap","metadata":{"resourceVersion":"3","name":"x","finalizers":["f"]},"data":{"a":"}"}}');
    expect(entryMetadata(e, ['name', 'finalizers'])).toEqual({ name: 'x', finalizers: ['f'] });
    // Nothing was kept: the whole object is parsed afresh for whoever asks for it.
    const whole = decodedEntry(e);
    expect(whole).toEqual({ kind: 'ConfigMap', metadata: { resourceVersion: '3', name: 'x', finalizers: ['f'] }, data: { a: '}' } });
    // Now a parse is kept: its metadata is shared, not parsed again.
    expect(entryMetadata(e, ['name'])).toBe(whole!.metadata);
  });

  it('answers undefined for a corrupt entry and for bytes that are not an object; empty metadata without a metadata member', () => {
    expect(entryMetadata(entryOf('', 'unable to decode'), ['name'])).toBeUndefined();
    expect(entryMetadata(entryOf('{"kind":"K","metadata":{"name":'), ['name'])).toBeUndefined();
    expect(entryMetadata(entryOf('[1,2]'), ['name'])).toBeUndefined();
    expect(entryMetadata(entryOf('{"kind":"K"}'), ['name'])).toEqual({});
    // Not in the compact stored shape: the whole object is parsed instead.
    expect(entryMetadata(entryOf('{"kind":"K", "metadata": {"name": "n", "uid": "u"}}'), ['name'])).toEqual({ name: 'n', uid: 'u' });
  });
});
