import { describe, expect, it } from 'vitest';
import { decodeRecord, decodeRecordHead, encodeRecord, historyKey, parseHistoryKey, parseHistoryKeyBytes } from './layout.js';

describe('layout', () => {
  const keys: Array<[string, number]> = [
    ['/registry/core/pods/ns/p', 1],
    ['/registry/core/pods/ns/p', 0xabcdef],
    ['/registry/core/configmaps/ns/ünïcødé-名前', 2 ** 40 + 7],
    ['/a', 2 ** 48 - 1],
  ];
  it.each(keys)('a history key read as bytes parses as its string does: %s @ %d', (key, revision) => {
    const stored = historyKey(key, revision);
    expect(parseHistoryKeyBytes(Buffer.from(stored, 'utf8'))).toEqual({ key, revision });
    expect(parseHistoryKey(stored)).toEqual({ key, revision });
  });

  it.each(['x//a\u0000000000000001', 'h//a\u00000000000000g1', 'h//a-000000000001', 'h/\u000000000000000'])('refuses what is not a history key: %j', (bad) => {
    expect(() => parseHistoryKeyBytes(Buffer.from(bad, 'utf8'))).toThrow(/not a history key/);
  });

  const heads: Array<[boolean, number, number]> = [
    [false, 1, 1],
    [false, 2 ** 40 + 3, 2 ** 33 + 1],
    [true, 2 ** 48 - 1, 0],
  ];
  it.each(heads)('a record head reads as decodeRecord reads it: tombstone %s, create %d, version %d', (tombstone, createRevision, version) => {
    for (const attrs of [undefined, Buffer.from('["n","p",{},{}]')]) {
      const rec = encodeRecord(tombstone, createRevision, version, Buffer.from('{}'), attrs);
      const full = decodeRecord(rec);
      expect(decodeRecordHead(rec)).toEqual({ tombstone: full.tombstone, createRevision: full.createRevision, version: full.version });
      expect(decodeRecordHead(rec)).toEqual({ tombstone, createRevision, version });
    }
    expect(() => decodeRecordHead(new Uint8Array(5))).toThrow(/too short/);
  });
});
