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
});
