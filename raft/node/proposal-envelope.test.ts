// The proposal envelope round-trips every sequence number width and command size, and entries
// without an envelope (the leader's no-op, foreign data) come back as commands with no proposer.
import { describe, expect, it } from 'vitest';
import { INCARNATION_BYTES, proposalSeqKey, sameIncarnation, unwrapCommand, wrapCommand } from './proposal-envelope.js';

const incarnation = Uint8Array.from({ length: INCARNATION_BYTES }, (_, i) => 0xa0 + i);
const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => i % 251);

describe('proposal envelope', () => {
  const cases: [string, number, number][] = [
    ['seq 1, empty command', 1, 0],
    ['seq 127 (one varint byte), 1-byte command', 127, 1],
    ['seq 128 (two varint bytes), 2-byte command', 128, 2],
    ['seq 2^21 (four varint bytes)', 2 ** 21, 300],
    ['seq 2^40', 2 ** 40, 17],
    ['largest safe seq', Number.MAX_SAFE_INTEGER, 5],
  ];
  it.each(cases)('%s', (_name, seq, size) => {
    const command = bytes(size);
    const wrapped = wrapCommand({ incarnation, seq }, command);
    const { id, command: back } = unwrapCommand(wrapped);
    expect(id).not.toBeNull();
    expect(id!.seq).toBe(seq);
    expect(sameIncarnation(id!.incarnation, incarnation)).toBe(true);
    expect([...back]).toEqual([...command]);
  });

  it('proposalSeqKey reads the proposer and sequence number without copying the command', () => {
    const a = new Uint8Array(INCARNATION_BYTES).fill(7);
    const b = new Uint8Array(INCARNATION_BYTES).fill(7);
    b[INCARNATION_BYTES - 1] = 8;
    for (const seq of [1, 127, 128, 300, 2 ** 21, 2 ** 35 + 5, Number.MAX_SAFE_INTEGER]) {
      const got = proposalSeqKey(wrapCommand({ incarnation: a, seq }, new Uint8Array([1, 2, 3])));
      expect(got?.seq).toBe(seq);
      expect(got?.key).toBe(proposalSeqKey(wrapCommand({ incarnation: a, seq: 1 }, new Uint8Array(0)))?.key);
      expect(got?.key).not.toBe(proposalSeqKey(wrapCommand({ incarnation: b, seq }, new Uint8Array(0)))?.key);
    }
    expect(proposalSeqKey(new Uint8Array(0))).toBeNull();
    expect(proposalSeqKey(new Uint8Array([9, 1, 2, 3, 4, 5, 6, 7, 8, 1]))).toBeNull();
  });

  it('passes foreign data through with no proposer', () => {
    for (const data of [new Uint8Array(0), bytes(3), Uint8Array.of(2, ...bytes(20))]) {
      const { id, command } = unwrapCommand(data);
      expect(id).toBeNull();
      expect(command).toBe(data);
    }
  });
});
