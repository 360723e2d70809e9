import { Decoder, encode as cborxEncode, Tag } from 'cbor-x';

// Byte-string keys need Map results from cbor-x.
const cborx = new Decoder({ mapsAsObjects: false, useRecords: false });
import { describe, expect, it } from 'vitest';
import { StatusError } from '../../apierrors/status.js';
import { createNaming } from '../../naming/naming.js';
import { kindSchemaNames, sampleObject } from '../samples/sample-objects.js';
import { decodeCbor, decodeCborSeq, encodeCbor, encodeCborSeq, encodeCborWatchEvent, looksLikeCbor } from './cbor-codec.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const fromHex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

function decodeError(bytes: Uint8Array, options?: Parameters<typeof decodeCbor>[1]): StatusError {
  try {
    decodeCbor(bytes, options);
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    expect((e as StatusError).code).toBe(400);
    return e as StatusError;
  }
  throw new Error(`expected ${hex(bytes)} to fail`);
}

describe('encodeCbor', () => {
  it.each([
    // Strings as byte strings (major type 2), keys sorted by encoded form, shortest floats.
    [{ b: 1, a: 'x' }, 'd9d9f7 a2 4161 4178 4162 01'],
    [{ kind: 'Pod', apiVersion: 'v1' }, 'd9d9f7 a2 446b696e64 43506f64 4a61706956657273696f6e 427631'],
    [[1, -1, 24, -25, 256, 65536, 4294967296], 'd9d9f7 87 01 20 1818 3818 190100 1a00010000 1b0000000100000000'],
    [[0.5, 1.1, 100000.5, -0], 'd9d9f7 84 f93800 fb3ff199999999999a fa47c35040 00'],
    [[true, false, null], 'd9d9f7 83 f5 f4 f6'],
    ['é', 'd9d9f7 42c3a9'],
    [Uint8Array.of(1, 2), 'd9d9f7 d6 420102'],
  ])('%j', (value, expected) => {
    expect(hex(encodeCbor(value))).toBe(expected.replace(/\s+/g, ''));
  });

  it('writes format: byte fields as tag 22 byte strings when the schema is named', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', data: { k: Buffer.from([0, 255]).toString('base64') }, stringData: { s: 'AP8=' } };
    const bytes = encodeCbor(secret, { schemaName: 'io.k8s.api.core.v1.Secret' });
    expect(hex(bytes)).toContain('a1416bd64200ff'); // data: {"k": 22(h'00ff')}
    expect(hex(bytes)).toContain('a141734441503f3d'.replace('3f', '38')); // stringData stays a string
    expect(decodeCbor(bytes).value).toEqual(secret);
  });

  it('refuses NaN and infinities', () => {
    expect(() => encodeCbor({ a: Number.NaN })).toThrow(StatusError);
    expect(() => encodeCbor([Number.POSITIVE_INFINITY])).toThrow(StatusError);
  });

  it('can omit the self-described prefix', () => {
    expect(hex(encodeCbor(1, { selfDescribed: false }))).toBe('01');
    expect(looksLikeCbor(encodeCbor(1))).toBe(true);
  });
});

describe('decodeCbor', () => {
  it('round-trips a sample of every kind and agrees with cbor-x both ways', () => {
    const naming = createNaming('cluster');
    for (const name of kindSchemaNames()) {
      const sample = sampleObject(name, { naming });
      const bytes = encodeCbor(sample, { schemaName: name });
      expect(decodeCbor(bytes).value).toEqual(sample);
      // cbor-x reads our byte strings as bytes; compare after mapping them back to text.
      expect(toText(cborx.decode(encodeCbor(sample)))).toEqual(sample);
      // And we read what cbor-x writes (text strings, unsorted keys, float32/64).
      expect(decodeCbor(cborxEncode(sample)).value).toEqual(sample);
    }
  });

  it('accepts input with or without the self-described tag, text or byte strings, indefinite lengths', () => {
    expect(decodeCbor(fromHex('a1 6161 01')).value).toEqual({ a: 1 });
    expect(decodeCbor(fromHex('d9d9f7 a1 4161 01')).value).toEqual({ a: 1 });
    expect(decodeCbor(fromHex('bf 6161 9f 01 02 ff ff')).value).toEqual({ a: [1, 2] });
    expect(decodeCbor(fromHex('7f 6161 6162 ff')).value).toBe('ab');
    expect(decodeCbor(fromHex('f93c00')).value).toBe(1);
    expect(decodeCbor(fromHex('c0 74 323032342d30312d30325430333a30343a30355a')).value).toBe('2024-01-02T03:04:05Z');
    expect(decodeCbor(fromHex('d5 43 fbff00')).value).toBe('-_8A');
    expect(decodeCbor(fromHex('d7 42 00ff')).value).toBe('00ff');
  });

  it.each([
    ['empty', '', /unexpected EOF/],
    ['truncated map', 'a2 4161 01', /unexpected EOF/],
    ['length beyond input', '5a ffffffff 00', /unexpected EOF/],
    ['huge array count', '9b 00000000ffffffff', /exceeded max number of elements 1024/],
    ['array over 1024', '99 0401' + '00'.repeat(1025), /exceeded max number of elements 1024 for CBOR array/],
    ['duplicate key', 'a2 4161 01 6161 02', /found duplicate map key "a" at map element index 1/],
    ['invalid UTF-8 text', '62 c328', /invalid UTF-8/],
    ['integer key', 'a1 01 02', /map key/],
    ['unsupported tag', 'c2 41 01', /unsupported tag number 2/],
    ['epoch time tag', 'c1 01', /unsupported tag number 1/],
    ['NaN', 'f97e00', /floating-point number NaN/],
    ['infinity', 'fb7ff0000000000000', /Infinity/],
    ['int64 overflow', '1b ffffffffffffffff', /overflows/],
    ['trailing data', '01 02', /1 bytes of extraneous data starting at index 1/],
    ['stray break', 'ff', /unexpected break/],
    ['reserved info', '1c', /invalid additional information/],
    ['simple value', 'f0', /unsupported simple value/],
  ])('rejects %s', (_name, body, message) => {
    expect(decodeError(fromHex(body)).message).toMatch(message);
  });

  it('bounds nesting at 64 levels without recursion trouble', () => {
    expect(decodeError(Buffer.alloc(100_000, 0x81)).message).toMatch(/exceeded max nested level 64/);
    expect(decodeCbor(Buffer.concat([Buffer.alloc(60, 0x81), Buffer.from([0x01])])).value).toBeDefined();
  });

  it('reports duplicates like the JSON decoder when asked', () => {
    const r = decodeCbor(fromHex('a1 4473706563 a2 4161 01 4161 02'), { duplicateKeys: 'report' });
    expect(r.value).toEqual({ spec: { a: 2 } });
    expect(r.duplicateFields).toEqual(['spec.a']);
  });

  it('keeps __proto__ as an own key', () => {
    const v = decodeCbor(encodeCbor({ ['__proto__']: 1 })).value as object;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
  });

  it('survives a seeded fuzz loop: only 400s', () => {
    let seed = 4242;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const base = encodeCbor(sampleObject('io.k8s.api.apps.v1.Deployment'));
    for (let i = 0; i < 3000; i++) {
      let b = Buffer.from(base);
      for (let k = 0; k < 1 + rnd(3); k++) {
        const pos = rnd(b.length);
        const op = rnd(3);
        if (op === 0) b[pos] = rnd(256);
        else if (op === 1) b = b.subarray(0, pos);
        else b = Buffer.concat([b.subarray(0, pos), Buffer.from([rnd(256)]), b.subarray(pos)]);
      }
      try {
        decodeCbor(b);
      } catch (e) {
        if (!(e instanceof StatusError) || e.code !== 400) throw e;
      }
    }
  });
});

describe('CBOR sequences and watch events', () => {
  it('writes one self-described item per event', () => {
    const pod = { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'a' } };
    const body = Buffer.concat([encodeCborWatchEvent('ADDED', pod), encodeCborWatchEvent('DELETED', encodeCbor(pod))]);
    expect(decodeCborSeq(body)).toEqual([
      { type: 'ADDED', object: pod },
      { type: 'DELETED', object: pod },
    ]);
    expect(hex(encodeCborWatchEvent('ADDED', {})).startsWith('d9d9f7a2447479706545414444454446')).toBe(true);
    expect(decodeCborSeq(encodeCborSeq([1, 'a']))).toEqual([1, 'a']);
  });
});

function toText(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Tag) return toText(v.value);
  if (Array.isArray(v)) return v.map(toText);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [toText(k), toText(x)]));
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toText(x)]));
  return v;
}
