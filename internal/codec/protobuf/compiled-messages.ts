// internal/codec/protobuf/compiled-messages owns the per-message encoder and decoder functions.
// Each message gets straight-line JavaScript generated from its plan (constant property names,
// tag bytes and field order baked in), compiled once on first use, because the hot paths encode
// 10,000-object lists per request and reflective per-field lookups cost several times more. The
// custom-JSON types (Time, Quantity, IntOrString, RawExtension, …) are written by hand here.
// Imports: apierrors, message-plans, well-known-values, wire-reader, wire-writer.
//
// Encoders take the JSON form and write exactly the fields present (see message-plans for why);
// a value of the wrong JSON type is a server bug and throws a 500 StatusError naming the field.
// Decoders validate wire types and bounds and throw 400 StatusErrors; they never recurse deeper
// than maxDepth.

import { errors } from '../../apierrors/status.js';
import type { FieldPlan, MessagePlan, ProtoSchema, ScalarType } from './message-plans.js';
import {
  formatGoDuration,
  formatRfc3339,
  GO_ZERO_TIME_SECONDS,
  isQuantity,
  parseGoDuration,
  parseRfc3339,
  setOwn,
  sortedKeys,
} from './well-known-values.js';
import { protobufError, type WireReader } from './wire-reader.js';
import type { WireWriter } from './wire-writer.js';

export type EncodeFn = (w: WireWriter, value: unknown) => void;
export type DecodeFn = (r: WireReader, end: number, depth: number, into?: Record<string, unknown>) => unknown;

/** What the compiled code needs from the codec that owns it. */
export interface CodecHooks {
  /** Decodes RawExtension bytes that start with the protobuf envelope magic. */
  decodeEmbeddedEnvelope(raw: Uint8Array, depth: number): unknown;
}

export const ENVELOPE_MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

const utf8 = new TextDecoder('utf-8');

/** Helpers the generated code calls; one object per codec so hooks stay per instance. */
export interface Helpers {
  typeErr(expected: string, value: unknown, where: string): never;
  wrongWire(tag: number, field: string): never;
  tooDeep(): never;
  sortedKeys(o: object): string[];
  setOwn(o: Record<string, unknown>, k: string, v: unknown): void;
  assign(o: Record<string, unknown>, from: unknown): void;
  b64enc(b: Uint8Array): string;
  b64dec(v: unknown, where: string): Uint8Array;
  isInt64(v: unknown): boolean;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

const INT64_LIMIT = 9223372036854775807;

function makeHelpers(): Helpers {
  return {
    typeErr(expected, value, where) {
      throw errors.internal(`protobuf encoding of ${where}: expected ${expected}, got ${describe(value)}`);
    },
    wrongWire(tag, field) {
      throw protobufError(`wrong wireType = ${tag & 7} for field ${field}`);
    },
    tooDeep() {
      throw protobufError('exceeded max depth');
    },
    sortedKeys,
    setOwn,
    assign(o, from) {
      if (typeof from !== 'object' || from === null) return;
      for (const k of Object.keys(from)) setOwn(o, k, (from as Record<string, unknown>)[k]);
    },
    b64enc(b) {
      return Buffer.from(b.buffer as ArrayBuffer, b.byteOffset, b.length).toString('base64');
    },
    b64dec(v, where) {
      if (v instanceof Uint8Array) return v;
      if (typeof v !== 'string') return this.typeErr('base64 string', v, where);
      return Buffer.from(v, 'base64');
    },
    isInt64(v) {
      return Number.isInteger(v) && Math.abs(v as number) <= INT64_LIMIT;
    },
  };
}

/** The varint bytes of a field's tag. */
export function tagBytes(number: number, wireType: number): number[] {
  let v = (number << 3) | wireType;
  const out: number[] = [];
  while (v > 127) {
    out.push((v & 127) | 128);
    v >>>= 7;
  }
  out.push(v);
  return out;
}

function tagValue(number: number, wireType: number): number {
  return ((number << 3) | wireType) >>> 0;
}

function writeTag(number: number, wireType: number): string {
  const b = tagBytes(number, wireType);
  if (b.length === 1) return `w.byte(${b[0]});`;
  if (b.length === 2) return `w.byte2(${b[0]}, ${b[1]});`;
  return b.map((x) => `w.byte(${x});`).join(' ');
}

const WIRE: Record<ScalarType, number> = { string: 2, bytes: 2, bool: 0, int32: 0, int64: 0, double: 1 };

function goFieldName(protoName: string): string {
  return protoName.charAt(0).toUpperCase() + protoName.slice(1);
}

/** Code that type-checks scalar `x` and writes it (without the tag). */
function scalarWrite(type: ScalarType, x: string, where: string): string {
  const w = JSON.stringify(where);
  switch (type) {
    case 'string':
      return `if (typeof ${x} !== 'string') H.typeErr('string', ${x}, ${w}); w.string(${x});`;
    case 'bool':
      return `if (typeof ${x} !== 'boolean') H.typeErr('boolean', ${x}, ${w}); w.byte(${x} ? 1 : 0);`;
    case 'int32':
      return `if (!Number.isInteger(${x}) || ${x} < -2147483648 || ${x} > 2147483647) H.typeErr('int32', ${x}, ${w}); w.varint(${x});`;
    case 'int64':
      return `if (!H.isInt64(${x})) H.typeErr('int64', ${x}, ${w}); w.varint(${x});`;
    case 'double':
      return `if (typeof ${x} !== 'number' || !Number.isFinite(${x})) H.typeErr('number', ${x}, ${w}); w.double(${x});`;
    case 'bytes':
      return `w.bytes(H.b64dec(${x}, ${w}));`;
  }
}

function scalarRead(type: ScalarType, end: string): string {
  switch (type) {
    case 'string':
      return `r.string(${end})`;
    case 'bool':
      return `r.bool(${end})`;
    case 'int32':
      return `r.int32(${end})`;
    case 'int64':
      return `r.int64(${end})`;
    case 'double':
      return `r.double(${end})`;
    case 'bytes':
      return `r.bytes(${end})`;
  }
}

export class CompiledMessages {
  private readonly enc: EncodeFn[] = [];
  private readonly dec: DecodeFn[] = [];
  private readonly encSlots = new Map<string, number>();
  private readonly decSlots = new Map<string, number>();
  private readonly encPending: string[] = [];
  private readonly decPending: string[] = [];
  private readonly H: Helpers = makeHelpers();

  constructor(
    private readonly schema: ProtoSchema,
    private readonly hooks: CodecHooks,
    readonly maxDepth: number,
  ) {}

  encoder(fullName: string): EncodeFn {
    const slot = this.slot('enc', fullName);
    this.drain();
    return this.enc[slot]!;
  }

  decoder(fullName: string): DecodeFn {
    const slot = this.slot('dec', fullName);
    this.drain();
    return this.dec[slot]!;
  }

  private slot(kind: 'enc' | 'dec', fullName: string): number {
    const slots = kind === 'enc' ? this.encSlots : this.decSlots;
    let i = slots.get(fullName);
    if (i === undefined) {
      i = slots.size;
      slots.set(fullName, i);
      (kind === 'enc' ? this.encPending : this.decPending).push(fullName);
    }
    return i;
  }

  private drain(): void {
    for (;;) {
      const e = this.encPending.pop();
      if (e !== undefined) {
        this.enc[this.encSlots.get(e)!] = this.buildEncoder(this.schema.plan(e));
        continue;
      }
      const d = this.decPending.pop();
      if (d !== undefined) {
        this.dec[this.decSlots.get(d)!] = this.buildDecoder(this.schema.plan(d));
        continue;
      }
      return;
    }
  }

  // ---- encoders ----

  private buildEncoder(plan: MessagePlan): EncodeFn {
    if (plan.special) return this.specialEncoder(plan);
    const typeName = plan.fullName;
    const lines: string[] = [
      `if (o === null || o === undefined) return;`,
      `if (typeof o !== 'object' || Array.isArray(o)) H.typeErr('object', o, ${JSON.stringify(typeName)});`,
      'let v;',
    ];
    for (const f of plan.fields) lines.push(this.fieldEncoder(plan, f));
    const body = lines.join('\n');
    const factory = new Function('E', 'H', `return function encode(w, o) {\n${body}\n};`) as (
      E: EncodeFn[],
      H: Helpers,
    ) => EncodeFn;
    return factory(this.enc, this.H);
  }

  private fieldEncoder(plan: MessagePlan, f: FieldPlan): string {
    const where = `${plan.fullName}.${f.protoName}`;
    const key = JSON.stringify(f.jsonKey);
    if (f.inline) {
      const slot = this.slot('enc', f.message!);
      return `${writeTag(f.number, 2)} { const s = w.fork(); E[${slot}](w, o); w.join(s); }`;
    }
    const head = `v = o[${key}];\nif (v !== undefined && v !== null) {`;
    if (f.map) {
      if (f.scalar && WIRE[f.scalar] !== 2) throw new Error(`unsupported map value type ${f.scalar} in ${where}`);
      // Go writes a string value always, bytes only when non-nil, a message value always.
      const valueWrite =
        f.scalar === 'bytes'
          ? `if (x !== null && x !== undefined) { w.byte(18); ${scalarWrite('bytes', 'x', where)} }`
          : f.scalar === 'string'
            ? `w.byte(18); if (x === null || x === undefined) w.byte(0); else { ${scalarWrite('string', 'x', where)} }`
            : `w.byte(18); { const s2 = w.fork(); E[${this.slot('enc', f.message!)}](w, x); w.join(s2); }`;
      return `${head}
  if (typeof v !== 'object' || Array.isArray(v)) H.typeErr('object', v, ${JSON.stringify(where)});
  const ks = H.sortedKeys(v);
  for (let i = 0; i < ks.length; i++) {
    const k = ks[i]; const x = v[k]; if (x === undefined) continue;
    ${writeTag(f.number, 2)} const s = w.fork(); w.byte(10); w.string(k); ${valueWrite} w.join(s);
  }
}`;
    }
    if (f.repeated) {
      const elem = f.scalar
        ? `${writeTag(f.number, WIRE[f.scalar])} ${scalarWrite(f.scalar, 'x', where)}`
        : `${writeTag(f.number, 2)} if (x instanceof Uint8Array) w.bytes(x); else { const s = w.fork(); E[${this.slot('enc', f.message!)}](w, x); w.join(s); }`;
      return `${head}
  if (!Array.isArray(v)) H.typeErr('array', v, ${JSON.stringify(where)});
  for (let i = 0; i < v.length; i++) { const x = v[i]; ${elem} }
}`;
    }
    if (f.scalar) return `${head} ${writeTag(f.number, WIRE[f.scalar])} ${scalarWrite(f.scalar, 'v', where)} }`;
    const slot = this.slot('enc', f.message!);
    return `${head} ${writeTag(f.number, 2)} const s = w.fork(); E[${slot}](w, v); w.join(s); }`;
  }

  private specialEncoder(plan: MessagePlan): EncodeFn {
    const H: Helpers = this.H;
    const where = plan.fullName;
    const pkg = plan.fullName.slice(0, plan.fullName.lastIndexOf('.'));
    switch (plan.special!) {
      case 'time':
      case 'microtime': {
        const micro = plan.special === 'microtime';
        return (w, v) => {
          if (typeof v !== 'string') H.typeErr('RFC 3339 time string', v, where);
          const t = parseRfc3339(v);
          if (!t) H.typeErr('RFC 3339 time string', v, where);
          // Go writes nothing for its zero time, and Time drops sub-second precision (time_proto.go).
          if (t.seconds === GO_ZERO_TIME_SECONDS && (t.nanos === 0 || !micro)) return;
          w.byte(8);
          w.varint(t.seconds);
          w.byte(16);
          w.varint(micro ? t.nanos : 0);
        };
      }
      case 'duration':
        return (w, v) => {
          const d = typeof v === 'string' ? parseGoDuration(v) : undefined;
          if (d === undefined) H.typeErr('Go duration string', v, where);
          w.byte(8);
          w.varintBig(d);
        };
      case 'quantity':
        return (w, v) => {
          if (typeof v === 'number' && Number.isFinite(v)) v = String(v);
          if (typeof v !== 'string') H.typeErr('quantity string', v, where);
          w.byte(10);
          w.string(v);
        };
      case 'intorstring':
        // Go's generated marshal writes all three fields: type, intVal, strVal.
        return (w, v) => {
          if (typeof v === 'number') {
            if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) H.typeErr('int32 or string', v, where);
            w.byte2(8, 0);
            w.byte(16);
            w.varint(v);
            w.byte2(26, 0);
          } else if (typeof v === 'string') {
            w.byte2(8, 1);
            w.byte2(16, 0);
            w.byte(26);
            w.string(v);
          } else {
            H.typeErr('int32 or string', v, where);
          }
        };
      case 'rawjson':
      case 'rawextension':
        // A Uint8Array is taken as the already-encoded raw content (an enveloped object in a
        // WatchEvent); anything else is the embedded JSON value.
        return (w, v) => {
          const raw = v instanceof Uint8Array ? v : Buffer.from(JSON.stringify(v === undefined ? null : v), 'utf8');
          w.byte(10);
          w.bytes(raw);
        };
      case 'stringlist':
        return (w, v) => {
          if (!Array.isArray(v)) H.typeErr('array of strings', v, where);
          for (const x of v) {
            if (typeof x !== 'string') H.typeErr('string', x, where);
            w.byte(10);
            w.string(x);
          }
        };
      case 'orbool': {
        const props = this.slot('enc', `${pkg}.JSONSchemaProps`);
        return (w, v) => {
          if (typeof v === 'boolean') {
            w.byte2(8, v ? 1 : 0);
          } else {
            w.byte2(8, 1);
            w.byte(18);
            const s = w.fork();
            this.enc[props]!(w, v);
            w.join(s);
          }
        };
      }
      case 'orarray': {
        const props = this.slot('enc', `${pkg}.JSONSchemaProps`);
        return (w, v) => {
          if (Array.isArray(v)) {
            for (const x of v) {
              w.byte(18);
              const s = w.fork();
              this.enc[props]!(w, x);
              w.join(s);
            }
          } else {
            w.byte(10);
            const s = w.fork();
            this.enc[props]!(w, v);
            w.join(s);
          }
        };
      }
      case 'orstringarray': {
        const props = this.slot('enc', `${pkg}.JSONSchemaProps`);
        return (w, v) => {
          if (Array.isArray(v)) {
            for (const x of v) {
              if (typeof x !== 'string') H.typeErr('string', x, where);
              w.byte(18);
              w.string(x);
            }
          } else {
            w.byte(10);
            const s = w.fork();
            this.enc[props]!(w, v);
            w.join(s);
          }
        };
      }
    }
  }

  // ---- decoders ----

  private buildDecoder(plan: MessagePlan): DecodeFn {
    if (plan.special) return this.specialDecoder(plan);
    const locals = plan.declared.map((_, i) => `f${i}`);
    const index = new Map(plan.declared.map((f, i) => [f, i]));
    const cases: string[] = [];
    for (const f of plan.fields) cases.push(...this.fieldDecoderCases(f, `f${index.get(f)}`));
    const known = plan.fields.map((f) => `case ${f.number}: H.wrongWire(t, ${JSON.stringify(goFieldName(f.protoName))});`);
    const assembly = plan.declared.map((f, i) => this.fieldAssembly(f, `f${i}`));
    const body = `
if (depth > ${this.maxDepth}) H.tooDeep();
${locals.length ? `let ${locals.join(', ')};` : ''}
while (r.pos < end) {
  const t = r.tag(end);
  switch (t) {
${cases.join('\n')}
    default:
      switch (t >>> 3) {
${known.join('\n')}
      }
      r.skip(t, end, depth, ${this.maxDepth});
  }
}
const o = into === undefined ? {} : into;
${assembly.join('\n')}
return o;`;
    const factory = new Function('D', 'H', `return function decode(r, end, depth, into) {${body}\n};`) as (
      D: DecodeFn[],
      H: Helpers,
    ) => DecodeFn;
    return factory(this.dec, this.H);
  }

  private fieldDecoderCases(f: FieldPlan, local: string): string[] {
    if (f.map) {
      // Map values in the built-in types are strings, bytes or messages (all length-delimited).
      let valueRead: string;
      let zero: string;
      if (f.scalar) {
        if (WIRE[f.scalar] !== 2) throw new Error(`unsupported map value type ${f.scalar}`);
        valueRead = f.scalar === 'bytes' ? `x = H.b64enc(r.bytes(e));` : `x = r.string(e);`;
        zero = zeroJson(f.scalar);
      } else {
        const slot = this.slot('dec', f.message!);
        valueRead = `{ const e2 = r.lenEnd(e); x = D[${slot}](r, e2, depth + 1); if (x === undefined) x = null; r.pos = e2; }`;
        zero = this.zeroMessageJson(f.message!);
      }
      return [
        `    case ${tagValue(f.number, 2)}: {
      const e = r.lenEnd(end); let k = ''; let x;
      while (r.pos < e) {
        const t2 = r.tag(e);
        if (t2 === 10) k = r.string(e);
        else if (t2 === 18) ${valueRead}
        else if ((t2 >>> 3) === 1 || (t2 >>> 3) === 2) H.wrongWire(t2, ${JSON.stringify(goFieldName(f.protoName))});
        else r.skip(t2, e, depth, ${this.maxDepth});
      }
      if (${local} === undefined) ${local} = {};
      H.setOwn(${local}, k, x === undefined ? ${zero} : x);
      break;
    }`,
      ];
    }
    if (f.scalar) {
      const wt = WIRE[f.scalar];
      if (f.repeated) {
        const read = f.scalar === 'bytes' ? `H.b64enc(r.bytes(end))` : scalarRead(f.scalar, 'end');
        const cases = [`    case ${tagValue(f.number, wt)}: (${local} === undefined ? (${local} = []) : ${local}).push(${read}); break;`];
        if (wt !== 2) {
          // Go accepts the packed form of repeated numbers too.
          cases.push(`    case ${tagValue(f.number, 2)}: {
      const e = r.lenEnd(end); if (${local} === undefined) ${local} = [];
      while (r.pos < e) ${local}.push(${scalarRead(f.scalar, 'e')});
      break;
    }`);
        }
        return cases;
      }
      return [`    case ${tagValue(f.number, wt)}: ${local} = ${scalarRead(f.scalar, 'end')}; break;`];
    }
    const slot = this.slot('dec', f.message!);
    const call = `D[${slot}](r, e, depth + 1)`;
    if (f.repeated) {
      return [
        `    case ${tagValue(f.number, 2)}: { const e = r.lenEnd(end); const y = ${call}; (${local} === undefined ? (${local} = []) : ${local}).push(y === undefined ? null : y); r.pos = e; break; }`,
      ];
    }
    return [`    case ${tagValue(f.number, 2)}: { const e = r.lenEnd(end); ${local} = ${call}; r.pos = e; break; }`];
  }

  private fieldAssembly(f: FieldPlan, local: string): string {
    const key = JSON.stringify(f.jsonKey);
    if (f.inline) return `if (${local} !== undefined) H.assign(o, ${local});`;
    if (f.map) return `if (${local} !== undefined) o[${key}] = ${local};`;
    if (f.repeated) {
      return f.emptyListWhenAbsent
        ? `o[${key}] = ${local} === undefined ? [] : ${local};`
        : `if (${local} !== undefined) o[${key}] = ${local};`;
    }
    if (f.scalar === 'string') {
      return f.keepEmpty ? `if (${local} !== undefined) o[${key}] = ${local};` : `if (${local} !== undefined && ${local} !== '') o[${key}] = ${local};`;
    }
    if (f.scalar === 'bytes') {
      return f.keepEmpty
        ? `if (${local} !== undefined) o[${key}] = H.b64enc(${local});`
        : `if (${local} !== undefined && ${local}.length > 0) o[${key}] = H.b64enc(${local});`;
    }
    if (f.scalar && f.dropZero) return `if (${local} !== undefined && ${local} !== 0 && ${local} !== false) o[${key}] = ${local};`;
    if (f.scalar) return `if (${local} !== undefined) o[${key}] = ${local};`;
    return `if (${local} !== undefined && ${local} !== null) o[${key}] = ${local};`;
  }

  private zeroMessageJson(fullName: string): string {
    const special = this.schema.plan(fullName).special;
    switch (special) {
      case 'quantity':
        return `'0'`;
      case 'intorstring':
        return '0';
      case 'stringlist':
      case 'orstringarray':
      case 'orarray':
        return '[]';
      case 'time':
      case 'microtime':
      case 'rawjson':
      case 'rawextension':
        return 'null';
      case 'duration':
        return `'0s'`;
      case 'orbool':
        return 'false';
      default:
        return '{}';
    }
  }

  private specialDecoder(plan: MessagePlan): DecodeFn {
    const maxDepth = this.maxDepth;
    const H: Helpers = this.H;
    const pkg = plan.fullName.slice(0, plan.fullName.lastIndexOf('.'));
    // Reads the fields of a small fixed message, rejecting wrong wire types for known numbers.
    const fields = plan.fields;
    const fieldByNumber = new Map(fields.map((f) => [f.number, f]));
    const expectedWire = (f: FieldPlan): number => (f.scalar ? WIRE[f.scalar] : 2);
    const each = (r: WireReader, end: number, depth: number, on: (n: number) => void): void => {
      if (depth > maxDepth) H.tooDeep();
      while (r.pos < end) {
        const t = r.tag(end);
        const f = fieldByNumber.get(t >>> 3);
        if (f) {
          const wt = t & 7;
          const packedOk = f.repeated && f.scalar !== undefined && WIRE[f.scalar] !== 2 && wt === 2;
          if (wt !== expectedWire(f) && !packedOk) H.wrongWire(t, goFieldName(f.protoName));
          on(t >>> 3);
        } else {
          r.skip(t, end, depth, maxDepth);
        }
      }
    };
    switch (plan.special!) {
      case 'time':
      case 'microtime': {
        const micro = plan.special === 'microtime';
        return (r, end, depth) => {
          if (r.pos >= end) return null; // Go: empty bytes are the zero time, printed as null.
          let seconds = 0;
          let nanos = 0;
          each(r, end, depth, (n) => {
            if (n === 1) seconds = r.int64(end);
            else nanos = r.int32(end);
          });
          if (!micro) nanos = 0;
          if (seconds === GO_ZERO_TIME_SECONDS && nanos === 0) return null;
          const s = formatRfc3339(seconds, nanos, micro);
          if (s === undefined) throw protobufError(`time out of range: ${seconds}s`);
          return s;
        };
      }
      case 'duration':
        return (r, end, depth) => {
          let d = 0n;
          each(r, end, depth, () => {
            d = r.int64Big(end);
          });
          return formatGoDuration(d);
        };
      case 'quantity':
        return (r, end, depth) => {
          let s = '0';
          each(r, end, depth, () => {
            s = r.string(end);
          });
          if (!isQuantity(s)) throw protobufError(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(s)}`);
          return s;
        };
      case 'intorstring':
        return (r, end, depth) => {
          let type = 0;
          let intVal = 0;
          let strVal = '';
          each(r, end, depth, (n) => {
            if (n === 1) type = r.int64(end);
            else if (n === 2) intVal = r.int32(end);
            else strVal = r.string(end);
          });
          if (type === 0) return intVal;
          if (type === 1) return strVal;
          throw protobufError(`impossible IntOrString.Type ${type}`);
        };
      case 'rawjson':
      case 'rawextension': {
        const allowEnvelope = plan.special === 'rawextension';
        return (r, end, depth) => {
          let raw: Uint8Array | undefined;
          each(r, end, depth, () => {
            raw = r.bytes(end);
          });
          if (raw === undefined || raw.length === 0) return undefined;
          if (allowEnvelope && raw.length >= 4 && raw[0] === 0x6b && raw[1] === 0x38 && raw[2] === 0x73 && raw[3] === 0x00) {
            return this.hooks.decodeEmbeddedEnvelope(raw, depth + 1);
          }
          try {
            return JSON.parse(utf8.decode(raw)) as unknown;
          } catch {
            throw protobufError(`${plan.fullName} does not hold valid JSON`);
          }
        };
      }
      case 'stringlist':
        return (r, end, depth) => {
          const items: string[] = [];
          each(r, end, depth, () => {
            items.push(r.string(end));
          });
          return items;
        };
      case 'orbool': {
        const props = this.slot('dec', `${pkg}.JSONSchemaProps`);
        return (r, end, depth) => {
          let allows = false;
          let schema: unknown;
          each(r, end, depth, (n) => {
            if (n === 1) allows = r.bool(end);
            else {
              const e = r.lenEnd(end);
              schema = this.dec[props]!(r, e, depth + 1);
            }
          });
          return schema !== undefined ? schema : allows;
        };
      }
      case 'orarray': {
        const props = this.slot('dec', `${pkg}.JSONSchemaProps`);
        return (r, end, depth) => {
          let schema: unknown;
          const list: unknown[] = [];
          each(r, end, depth, (n) => {
            const e = r.lenEnd(end);
            const v = this.dec[props]!(r, e, depth + 1);
            if (n === 1) schema = v;
            else list.push(v);
          });
          return list.length > 0 ? list : schema === undefined ? null : schema;
        };
      }
      case 'orstringarray': {
        const props = this.slot('dec', `${pkg}.JSONSchemaProps`);
        return (r, end, depth) => {
          let schema: unknown;
          const list: string[] = [];
          each(r, end, depth, (n) => {
            if (n === 1) {
              const e = r.lenEnd(end);
              schema = this.dec[props]!(r, e, depth + 1);
            } else list.push(r.string(end));
          });
          return list.length > 0 ? list : schema === undefined ? null : schema;
        };
      }
    }
  }
}

function zeroJson(type: ScalarType): string {
  switch (type) {
    case 'string':
    case 'bytes':
      return `''`;
    case 'bool':
      return 'false';
    case 'int32':
    case 'int64':
    case 'double':
      return '0';
  }
}
