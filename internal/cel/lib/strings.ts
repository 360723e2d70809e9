// internal/cel/lib/strings owns the functions of upstream's `strings` extension (version 2, as
// Kubernetes 1.32 enables it) that the engine does not have: charAt, replace, format and
// strings.quote. indexOf, lastIndexOf, lowerAscii, upperAscii, join, split, substring and trim
// are the engine's own. Imports: lib/common.

import { CelLibraryError, type Environment, fn, isDuration } from './common.js';

class StringsNamespace {}

function codePoints(s: string): string[] {
  return Array.from(s);
}

function replace(s: string, from: string, to: string, n: number): string {
  if (n === 0) return s;
  if (n < 0) return s.split(from).join(to);
  let out = '';
  let rest = s;
  for (let i = 0; i < n; i++) {
    const at = rest.indexOf(from);
    if (at < 0) break;
    out += rest.slice(0, at) + to;
    rest = rest.slice(at + from.length);
    if (from === '') {
      out += rest.slice(0, 1);
      rest = rest.slice(1);
    }
  }
  return out + rest;
}

/** Go's strconv.Quote as cel-go's strings.quote writes it. */
function quote(s: string): string {
  let out = '"';
  for (const c of s) {
    const cp = c.codePointAt(0)!;
    if (c === '"' || c === '\\') out += `\\${c}`;
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\t') out += '\\t';
    else if (c === '\x07') out += '\\a';
    else if (c === '\b') out += '\\b';
    else if (c === '\f') out += '\\f';
    else if (c === '\v') out += '\\v';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else out += c;
  }
  return `${out}"`;
}

function formatValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return Number.isInteger(v) ? `${v}` : String(v);
  if (v === null) return 'null';
  if (v instanceof Date) return v.toISOString().replace('.000Z', 'Z');
  if (isDuration(v)) return `${Number(v.valueOf()) / 1000}s`;
  if (Array.isArray(v)) return `[${v.map(formatValue).join(', ')}]`;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (typeof v === 'object') return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}: ${formatValue(x)}`).join(', ')}}`;
  return String(v);
}

/** The clauses of cel-go's string.format: %s %d %f (%.Nf) %e %x %X %o %b and %%. */
function format(template: string, args: readonly unknown[]): string {
  let out = '';
  let next = 0;
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (c !== '%') {
      out += c;
      continue;
    }
    if (template[i + 1] === '%') {
      out += '%';
      i++;
      continue;
    }
    const m = /^(?:\.(\d+))?([sdfeExXob])/.exec(template.slice(i + 1));
    if (!m) throw new CelLibraryError(`could not parse formatting clause: unrecognized formatting clause "${template.slice(i + 1, i + 2)}"`);
    if (next >= args.length) throw new CelLibraryError(`index ${next} out of range`);
    const arg = args[next++];
    const precision = m[1] === undefined ? undefined : Number(m[1]);
    const isNum = typeof arg === 'number' || typeof arg === 'bigint' || (arg !== null && typeof arg === 'object' && typeof (arg as { valueOf(): unknown }).valueOf() === 'bigint');
    switch (m[2]) {
      case 's':
        out += formatValue(arg);
        break;
      case 'd':
        if (!isNum || typeof arg === 'number') throw new CelLibraryError(`error during formatting: decimal clause can only be used on integers, was given ${typeName(arg)}`);
        out += String(arg);
        break;
      case 'f':
      case 'e':
      case 'E': {
        if (!isNum) throw new CelLibraryError(`error during formatting: fixed-point clause can only be used on doubles, was given ${typeName(arg)}`);
        const n = Number(arg);
        const s = m[2] === 'f' ? n.toFixed(precision ?? 6) : n.toExponential(precision ?? 6).replace(/e([+-])(\d)$/, 'e$10$2');
        out += m[2] === 'E' ? s.toUpperCase() : s;
        break;
      }
      default: {
        const radix = m[2] === 'o' ? 8 : m[2] === 'b' ? 2 : 16;
        let s: string;
        if (typeof arg === 'string') s = Buffer.from(arg, 'utf8').toString('hex');
        else if (arg instanceof Uint8Array) s = Buffer.from(arg).toString('hex');
        else if (isNum && typeof arg !== 'number') s = BigInt(String(arg)).toString(radix);
        else throw new CelLibraryError(`error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given ${typeName(arg)}`);
        out += m[2] === 'X' ? s.toUpperCase() : s;
      }
    }
    i += m[0].length;
  }
  return out;
}

function typeName(v: unknown): string {
  if (typeof v === 'number') return 'double';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'string') return 'string';
  if (Array.isArray(v)) return 'list';
  return typeof v;
}

export function registerStrings(env: Environment): void {
  fn(env, 'string.charAt(int): string', (s: string, i: bigint) => {
    const cps = codePoints(s);
    const n = Number(i);
    if (n < 0 || n > cps.length) throw new CelLibraryError(`index out of range: ${n}`);
    return cps[n] ?? '';
  });
  fn(env, 'string.replace(string, string): string', (s: string, a: string, b: string) => replace(s, a, b, -1));
  fn(env, 'string.replace(string, string, int): string', (s: string, a: string, b: string, n: bigint) => replace(s, a, b, Number(n)));
  fn(env, 'string.format(list): string', (s: string, args: unknown[]) => format(s, args));
  env.registerType('kubernetes.StringsNamespace', StringsNamespace);
  env.registerConstant('strings', 'kubernetes.StringsNamespace', new StringsNamespace());
  fn(env, 'kubernetes.StringsNamespace.quote(string): string', (_ns: unknown, s: string) => quote(s), 'quote');
}
