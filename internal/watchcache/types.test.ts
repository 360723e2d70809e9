import { describe, expect, it } from 'vitest';
import { replaceResourceVersion, withResourceVersion, encodeStored } from '../storedobject/stored-object.js';
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
  it('keeps one memo per entry for as long as its bytes are the same', () => {
    const entry = entryAt(5);
    const memo = encodingsOf(entry);
    memo.cbor = Buffer.from('x');
    expect(encodingsOf(entry)).toBe(memo);
    expect(encodingsOf(entry).cbor?.toString()).toBe('x');
  });

  it('does not serve a memo carried into a copy with other bytes (a DELETED event at a new revision)', () => {
    const prev = entryAt(5);
    encodingsOf(prev).protobuf = Buffer.from('old');
    const last: CacheEntry = { ...prev, revision: 9, bytes: replaceResourceVersion(prev.bytes, 9) };
    expect(last.encodings?.protobuf?.toString()).toBe('old');
    const memo = encodingsOf(last);
    expect(memo.of).toBe(last.bytes);
    expect(memo.protobuf).toBeUndefined();
    // The original keeps its own.
    expect(encodingsOf(prev).protobuf?.toString()).toBe('old');
  });
});
