// internal/cluster/command-codec owns the bytes a store Command travels as in the Raft log:
// a compact binary form (values are copied as they are, never re-encoded as text), prefixed
// with the proposing replica's origin tag so that the replica that proposed a command can find
// the local hints (the writer's decoded objects) it kept for it when the entry comes back.
// The format is versioned by its first byte; an entry that does not decode is a fatal error of
// the replica (every replica must apply the same log the same way).
// Imports: store (types).

import type { Command, Op } from '../store/types.js';

const FORMAT = 1;
const TXN = 1;
const COMPACT = 2;
const OP_PUT = 1;
const OP_DELETE = 2;

/** Who proposed a command, and which of its proposals it was (unique per process lifetime). */
export interface Origin {
  /** Random per process start: a restarted replica never mistakes an old entry for its own. */
  incarnation: number;
  seq: number;
}

export class CommandCodecError extends Error {
  override name = 'CommandCodecError';
}

export function encodeCommand(command: Command, origin: Origin): Uint8Array {
  let size = 1 + 4 + 4 + 1;
  const keys: Buffer[] = [];
  if (command.type === 'txn') {
    size += 4;
    for (const c of command.compares) {
      const k = Buffer.from(c.key, 'utf8');
      keys.push(k);
      size += 4 + k.length + 8;
    }
    size += 4;
    for (const op of command.ops) {
      const k = Buffer.from(op.key, 'utf8');
      keys.push(k);
      size += 1 + 4 + k.length + (op.type === 'put' ? 4 + op.value.length : 0);
    }
  } else {
    size += 8;
  }
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  out[o++] = FORMAT;
  out.writeUInt32BE(origin.incarnation >>> 0, o);
  o += 4;
  out.writeUInt32BE(origin.seq >>> 0, o);
  o += 4;
  if (command.type === 'compact') {
    out[o++] = COMPACT;
    out.writeDoubleBE(command.revision, o);
    return out;
  }
  out[o++] = TXN;
  let ki = 0;
  out.writeUInt32BE(command.compares.length, o);
  o += 4;
  for (const c of command.compares) {
    const k = keys[ki++]!;
    out.writeUInt32BE(k.length, o);
    o += 4;
    k.copy(out, o);
    o += k.length;
    out.writeDoubleBE(c.modRevision, o);
    o += 8;
  }
  out.writeUInt32BE(command.ops.length, o);
  o += 4;
  for (const op of command.ops) {
    const k = keys[ki++]!;
    out[o++] = op.type === 'put' ? OP_PUT : OP_DELETE;
    out.writeUInt32BE(k.length, o);
    o += 4;
    k.copy(out, o);
    o += k.length;
    if (op.type === 'put') {
      out.writeUInt32BE(op.value.length, o);
      o += 4;
      out.set(op.value, o);
      o += op.value.length;
    }
  }
  return out;
}

export function decodeCommand(bytes: Uint8Array): { command: Command; origin: Origin } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let o = 0;
  const need = (n: number): void => {
    if (o + n > b.length) throw new CommandCodecError(`command entry truncated at byte ${o}`);
  };
  need(10);
  if (b[o++] !== FORMAT) throw new CommandCodecError(`unknown command format ${b[0]}`);
  const origin = { incarnation: b.readUInt32BE(o), seq: b.readUInt32BE(o + 4) };
  o += 8;
  const type = b[o++];
  if (type === COMPACT) {
    need(8);
    return { command: { type: 'compact', revision: b.readDoubleBE(o) }, origin };
  }
  if (type !== TXN) throw new CommandCodecError(`unknown command type ${type}`);
  const str = (): string => {
    need(4);
    const n = b.readUInt32BE(o);
    o += 4;
    need(n);
    const s = b.toString('utf8', o, o + n);
    o += n;
    return s;
  };
  need(4);
  const nc = b.readUInt32BE(o);
  o += 4;
  const compares = [];
  for (let i = 0; i < nc; i++) {
    const key = str();
    need(8);
    compares.push({ key, modRevision: b.readDoubleBE(o) });
    o += 8;
  }
  need(4);
  const no = b.readUInt32BE(o);
  o += 4;
  const ops: Op[] = [];
  for (let i = 0; i < no; i++) {
    need(1);
    const t = b[o++];
    const key = str();
    if (t === OP_PUT) {
      need(4);
      const n = b.readUInt32BE(o);
      o += 4;
      need(n);
      // A copy: the log entry's buffer may be reused or held by the log image.
      ops.push({ type: 'put', key, value: new Uint8Array(b.subarray(o, o + n)) });
      o += n;
    } else if (t === OP_DELETE) {
      ops.push({ type: 'delete', key });
    } else {
      throw new CommandCodecError(`unknown op type ${t}`);
    }
  }
  if (o !== b.length) throw new CommandCodecError(`command entry has ${b.length - o} trailing bytes`);
  return { command: { type: 'txn', compares, ops }, origin };
}
