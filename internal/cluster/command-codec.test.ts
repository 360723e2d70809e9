import { describe, expect, it } from 'vitest';
import { CommandCodecError, decodeCommand, encodeCommand } from './command-codec.js';
import type { Command } from '../store/types.js';

const enc = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));

describe('command codec', () => {
  const cases: Array<[string, Command]> = [
    ['empty txn', { type: 'txn', compares: [], ops: [] }],
    ['create', { type: 'txn', compares: [{ key: '/registry/core/pods/a/b', modRevision: 0 }], ops: [{ type: 'put', key: '/registry/core/pods/a/b', value: enc('{"x":1}') }] }],
    [
      'multi-key with unicode and delete',
      {
        type: 'txn',
        compares: [{ key: '/k/ü', modRevision: 2 ** 40 }, { key: '/k/2', modRevision: 7 }],
        ops: [{ type: 'delete', key: '/k/ü' }, { type: 'put', key: '/k/2', value: new Uint8Array(0) }],
      },
    ],
    ['compact', { type: 'compact', revision: 123456789 }],
  ];
  it.each(cases)('round-trips %s', (_name, command) => {
    const origin = { incarnation: 0xdeadbeef, seq: 42 };
    const decoded = decodeCommand(encodeCommand(command, origin));
    expect(decoded.origin).toEqual(origin);
    expect(decoded.command).toEqual(command);
  });

  it('refuses truncated, trailing and unknown bytes', () => {
    const good = encodeCommand(cases[1]![1], { incarnation: 1, seq: 1 });
    expect(() => decodeCommand(good.subarray(0, good.length - 1))).toThrow(CommandCodecError);
    expect(() => decodeCommand(Buffer.concat([good, Buffer.from([0])]))).toThrow(/trailing/);
    const bad = Buffer.from(good);
    bad[0] = 9;
    expect(() => decodeCommand(bad)).toThrow(/format/);
    expect(() => decodeCommand(new Uint8Array(0))).toThrow(CommandCodecError);
  });

  it('carries attribute bytes per put op (format 2), and writes format 1 when there are none', () => {
    const command: Command = {
      type: 'txn',
      compares: [{ key: '/a', modRevision: 0 }],
      ops: [{ type: 'put', key: '/a', value: enc('{"a":1}') }, { type: 'delete', key: '/b' }, { type: 'put', key: '/c', value: enc('{}') }],
    };
    const origin = { incarnation: 7, seq: 9 };
    const attributes = new Map([['/c', enc('["ns","c",{},{}]')], ['/b', enc('ignored: not a put')]]);
    const bytes = encodeCommand(command, origin, attributes);
    expect(bytes[0]).toBe(2);
    const decoded = decodeCommand(bytes);
    expect(decoded.command).toEqual(command);
    expect(decoded.origin).toEqual(origin);
    expect(decoded.attributes).toEqual(new Map([['/c', enc('["ns","c",{},{}]')]]));
    // Without attributes: the format-1 bytes replicas of every version read.
    const plain = encodeCommand(command, origin, new Map());
    expect(plain[0]).toBe(1);
    expect(Buffer.from(plain)).toEqual(Buffer.from(encodeCommand(command, origin)));
    expect(decodeCommand(plain).attributes).toBeUndefined();
    // Truncated or trailing attribute bytes are refused like any other.
    expect(() => decodeCommand(bytes.subarray(0, bytes.length - 1))).toThrow(CommandCodecError);
    expect(() => decodeCommand(Buffer.concat([bytes, Buffer.from([0])]))).toThrow(/trailing/);
  });

  it("decodes a put's value and attributes as views of the entry (no copy per entry), plain Uint8Arrays at their offsets", () => {
    const command: Command = { type: 'txn', compares: [], ops: [{ type: 'put', key: '/a', value: enc('{"v":1}') }] };
    // Inside a larger buffer, as an entry's bytes are inside a received frame.
    const bytes = encodeCommand(command, { incarnation: 1, seq: 1 }, new Map([['/a', enc('["x"]')]]));
    const frame = new Uint8Array(bytes.length + 16);
    frame.set(bytes, 7);
    const decoded = decodeCommand(frame.subarray(7, 7 + bytes.length));
    const op = decoded.command.type === 'txn' ? decoded.command.ops[0]! : undefined;
    if (op?.type !== 'put') throw new Error('no put');
    expect(op.value.buffer).toBe(frame.buffer);
    expect(Buffer.isBuffer(op.value)).toBe(false);
    expect(Buffer.from(op.value).toString()).toBe('{"v":1}');
    expect(decoded.attributes!.get('/a')!.buffer).toBe(frame.buffer);
    expect(Buffer.from(decoded.attributes!.get('/a')!).toString()).toBe('["x"]');
  });

  it('refuses attributes that name an op which is not a put', () => {
    const command: Command = { type: 'txn', compares: [], ops: [{ type: 'put', key: '/a', value: enc('{}') }, { type: 'delete', key: '/b' }] };
    const bytes = Buffer.from(encodeCommand(command, { incarnation: 1, seq: 1 }, new Map([['/a', enc('[]')]])));
    // The op index of the one attribute record sits 4 + 2 bytes before the end ('[]').
    bytes.writeUInt32BE(1, bytes.length - 2 - 8);
    expect(() => decodeCommand(bytes)).toThrow(/not a put/);
  });
});
