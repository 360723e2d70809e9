// raft/node/proposal-envelope.ts owns the few bytes RaftNode puts in front of every command it
// proposes, so that when the entry is committed the proposer can tell it is its own:
//   version byte (1) | 8-byte incarnation id | uvarint sequence | command bytes
// The incarnation is random per RaftNode instance, so a restarted process never mistakes an
// entry proposed by its previous life for one of its own pending proposals.
// Entries without a valid envelope (the leader's empty no-op) are passed through as commands
// with no proposer.

import { BinaryReader } from '../codec/binary-reader.js';

const VERSION = 1;
export const INCARNATION_BYTES = 8;

export interface ProposalId {
  incarnation: Uint8Array;
  seq: number;
}

export function wrapCommand(id: ProposalId, command: Uint8Array): Uint8Array {
  // One allocation of the exact size: every proposal passes here.
  let seqBytes = 1;
  for (let n = id.seq; n >= 0x80; n = Math.floor(n / 0x80)) seqBytes++;
  const head = 1 + INCARNATION_BYTES + seqBytes;
  const out = new Uint8Array(head + command.length);
  out[0] = VERSION;
  out.set(id.incarnation.subarray(0, INCARNATION_BYTES), 1);
  let at = 1 + INCARNATION_BYTES;
  let n = id.seq;
  // Unsigned LEB128, as BinaryWriter.uvarint writes it.
  while (n >= 0x80) {
    out[at++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  out[at] = n;
  out.set(command, head);
  return out;
}

/** Splits an entry's data into its proposal id and command; null id for foreign data. */
export function unwrapCommand(data: Uint8Array): { id: ProposalId | null; command: Uint8Array } {
  if (data.length < 1 + INCARNATION_BYTES + 1 || data[0] !== VERSION) return { id: null, command: data };
  try {
    const r = new BinaryReader(data);
    r.byte();
    const incarnation = r.raw(INCARNATION_BYTES);
    const seq = r.uvarint();
    return { id: { incarnation, seq }, command: data.subarray(r.offset) };
  } catch {
    return { id: null, command: data };
  }
}

/**
 * The proposer (its incarnation, as a string key) and sequence number of an entry's data,
 * without copying the command; null for foreign data. What a leader needs per forwarded entry.
 */
export function proposalSeqKey(data: Uint8Array): { key: string; seq: number } | null {
  if (data.length < 1 + INCARNATION_BYTES + 1 || data[0] !== VERSION) return null;
  let key = '';
  for (let i = 1; i <= INCARNATION_BYTES; i++) key += String.fromCharCode(data[i]!);
  let seq = 0;
  let scale = 1;
  for (let at = 1 + INCARNATION_BYTES; at < data.length && at < 1 + INCARNATION_BYTES + 8; at++) {
    const b = data[at]!;
    seq += (b & 0x7f) * scale;
    if (b < 0x80) return { key, seq };
    scale *= 0x80;
  }
  return null;
}

export function sameIncarnation(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
