import { describe, expect, it } from 'vitest';
import { replaceResourceVersion, withResourceVersion, encodeStored } from '../storedobject/stored-object.js';
import { EncodingArena } from './encoding-arena.js';
import { encodingsOf, type CacheEntry } from './types.js';

const entryAt = (revision: number): CacheEntry => ({
  key: '/registry/configmaps/default/a',
  namespace: 'default',
  name: 'a',
  revision,
  bytes: withResourceVersion(encodeStored({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'default' } }), revision),
  labels: {},
  fields: {},
});

describe('encodingsOf', () => {
  const arena = new EncodingArena();
  const kept = (s: string) => Buffer.from(s);

  it('keeps one memo per entry for as long as its bytes are the same', () => {
    const entry = entryAt(5);
    const memo = encodingsOf(entry);
    arena.keep(memo, 'cbor', kept('x'), 1);
    expect(encodingsOf(entry)).toBe(memo);
    expect(arena.get(encodingsOf(entry), 'cbor')?.toString()).toBe('x');
    expect(arena.get(encodingsOf(entry), 'protobuf')).toBeUndefined();
  });

  it('does not serve a memo carried into a copy with other bytes (a DELETED event at a new revision)', () => {
    const prev = entryAt(5);
    arena.keep(encodingsOf(prev), 'protobuf', kept('old'), 3);
    const last: CacheEntry = { ...prev, revision: 9, bytes: replaceResourceVersion(prev.bytes, 9) };
    expect(last.encodings?.protobuf).toBeDefined();
    const memo = encodingsOf(last);
    expect(memo.of).toBe(last.bytes);
    expect(arena.get(memo, 'protobuf')).toBeUndefined();
    // The original keeps its own.
    expect(arena.get(encodingsOf(prev), 'protobuf')?.toString()).toBe('old');
  });
});
