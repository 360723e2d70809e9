// internal/cluster/command-codec owns the bytes a store Command travels as in the Raft log:
// a compact binary form (values are copied as they are, never re-encoded as text), prefixed
// with the proposing replica's origin tag so that the replica that proposed a command can find
// the local hints (the writer's decoded objects) it kept for it when the entry comes back.
// The format is versioned by its first byte; an entry that does not decode is a fatal error of
// the replica (every replica must apply the same log the same way). Format 2 is format 1 plus
// opaque per-put attribute bytes (what the proposer's watch cache derived from the object it
// wrote: the other replicas build their cache entries from them instead of parsing the
// object); format 1 is still written when there are none, and read.
// Imports: store (types).

import type { Command, Op } from '../store/types.js';

const FORMAT = 1;
const FORMAT_ATTRIBUTES = 2;
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

/** Opaque bytes per put key, carried beside the command (see the header). */
export type OpAttributes = ReadonlyMap<string, Uint8Array>;

export function encodeCommand(command: Command, origin: Origin, attributes?: OpAttributes): Uint8Array {
  let size = 1 + 4 + 4 + 1;
  const keys: Buffer[] = [];
  // [op index, bytes] of the put ops that have attributes.
  const carried: Array<[number, Uint8Array]> = [];
  if (command.type === 'txn') {
    size += 4;
    for (const c of command.compares) {
      const k = Buffer.from(c.key, 'utf8');
      keys.push(k);
      size += 4 + k.length + 8;
    }
    size += 4;
    command.ops.forEach((op, i) => {
      const k = Buffer.from(op.key, 'utf8');
      keys.push(k);
      size += 1 + 4 + k.length + (op.type === 'put' ? 4 + op.value.length : 0);
      const a = op.type === 'put' ? attributes?.get(op.key) : undefined;
      if (a) carried.push([i, a]);
    });
    if (carried.length > 0) size += 4 + carried.reduce((n, [, a]) => n + 8 + a.length, 0);
  } else {
    size += 8;
  }
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  out[o++] = carried.length > 0 ? FORMAT_ATTRIBUTES : FORMAT;
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
  if (carried.length > 0) {
    out.writeUInt32BE(carried.length, o);
    o += 4;
    for (const [i, a] of carried) {
      out.writeUInt32BE(i, o);
      out.writeUInt32BE(a.length, o + 4);
      o += 8;
      out.set(a, o);
      o += a.length;
    }
  }
  return out;
}

export function decodeCommand(bytes: Uint8Array): { command: Command; origin: Origin; attributes?: Map<string, Uint8Array> } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let o = 0;
  const need = (n: number): void => {
    if (o + n > b.length) throw new CommandCodecError(`command entry truncated at byte ${o}`);
  };
  need(10);
  const format = b[o++];
  if (format !== FORMAT && format !== FORMAT_ATTRIBUTES) throw new CommandCodecError(`unknown command format ${b[0]}`);
  const origin = { incarnation: b.readUInt32BE(o), seq: b.readUInt32BE(o + 4) };
  o += 8;
  const type = b[o++];
  if (type === COMPACT) {
    if (format !== FORMAT) throw new CommandCodecError('a compaction carries no attributes');
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
      // A view, not a copy: the entry's bytes are never written to, and nothing keeps a put's
      // value past its apply (the record and the watch cache's serving bytes are copies), so
      // a copy per entry was an allocation (and, at this size, an ArrayBuffer) for nothing.
      ops.push({ type: 'put', key, value: new Uint8Array(b.buffer, b.byteOffset + o, n) });
      o += n;
    } else if (t === OP_DELETE) {
      ops.push({ type: 'delete', key });
    } else {
      throw new CommandCodecError(`unknown op type ${t}`);
    }
  }
  let attributes: Map<string, Uint8Array> | undefined;
  if (format === FORMAT_ATTRIBUTES) {
    attributes = new Map();
    need(4);
    const n = b.readUInt32BE(o);
    o += 4;
    for (let i = 0; i < n; i++) {
      need(8);
      const at = b.readUInt32BE(o);
      const len = b.readUInt32BE(o + 4);
      o += 8;
      const op = ops[at];
      if (!op || op.type !== 'put') throw new CommandCodecError(`attributes for op ${at}, which is not a put`);
      need(len);
      attributes.set(op.key, new Uint8Array(b.buffer, b.byteOffset + o, len));
      o += len;
    }
  }
  if (o !== b.length) throw new CommandCodecError(`command entry has ${b.length - o} trailing bytes`);
  return attributes ? { command: { type: 'txn', compares, ops }, origin, attributes } : { command: { type: 'txn', compares, ops }, origin };
}
