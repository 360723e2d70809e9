// internal/codec/json/json-codec owns reading and writing JSON bodies: a fast decode (JSON.parse)
// with upstream-style syntax errors carrying a position, duplicate-key detection for
// fieldValidation, and a nesting bound, plus the encoder. Imports: apierrors.
//
// Decoding runs JSON.parse first because it is native and iterative (no stack overflow on deep
// input). Duplicate keys are invisible to it, so one cheap pass counts the `:` separators outside
// strings and compares that with the number of keys the parsed value holds; only when they differ
// (a duplicate was overwritten) does the slower tokenizer run to name the duplicated paths. The
// same tokenizer explains a parse failure in encoding/json's words, with line and column.

import { errors } from '../../apierrors/status.js';

/** The decoded value plus the paths of keys that appeared more than once in one object. */
export interface DecodeResult {
  value: unknown;
  /**
   * Field paths as upstream's strict decoder prints them (`spec.replicas`,
   * `spec.containers[0].name`, `metadata.labels.app`), in order of first repetition, each once.
   * The value kept for a duplicated key is the last one, as with encoding/json.
   */
  duplicateFields: string[];
}

export interface JsonDecodeOptions {
  /** Maximum nesting of arrays and objects; upstream's limit is 10000. */
  maxDepth?: number;
}

export const JSON_MAX_DEPTH = 10_000;

// ignoreBOM keeps a leading BOM in the text so that it is rejected, as encoding/json rejects it.
const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Decodes a JSON body. Throws a 400 StatusError (`json parse error: <reason> at line L, column C`)
 * for malformed input or nesting deeper than maxDepth. Never throws anything else.
 */
export function decodeJson(input: Uint8Array | string, options: JsonDecodeOptions = {}): DecodeResult {
  const maxDepth = options.maxDepth ?? JSON_MAX_DEPTH;
  const text = typeof input === 'string' ? input : utf8Decoder.decode(input);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse's own messages differ between engines and carry no line; explain it ourselves.
    const scan = scanJson(text, maxDepth, false);
    throw jsonError(text, scan.error ?? { reason: 'unexpected end of JSON input', index: text.length });
  }
  // Depth can only exceed the bound if the text holds at least 2 * maxDepth brackets.
  const needDepth = text.length > 2 * maxDepth;
  const quick = quickScan(text, needDepth ? maxDepth : Number.POSITIVE_INFINITY);
  if (quick.depthExceededAt >= 0) {
    throw jsonError(text, { reason: 'exceeded max depth', index: quick.depthExceededAt });
  }
  if (quick.colons === 0 || quick.colons === countKeys(value)) return { value, duplicateFields: [] };
  const scan = scanJson(text, maxDepth, true);
  return { value, duplicateFields: scan.duplicates };
}

/**
 * The value of `text` when it is JSON whose reading cannot depend on the reader: no key repeated
 * in an object, at most `maxDepth` levels, and every number finite and not -0 (YAML readers
 * differ from JSON.parse exactly there). Undefined otherwise, and for text that is not JSON; the
 * caller then reads the text its own way. Costs one JSON.parse and two linear passes.
 */
export function parseUnambiguousJson(text: string, maxDepth: number): { value: unknown } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const quick = quickScan(text, maxDepth);
  if (quick.depthExceededAt >= 0) return undefined;
  const keys = countKeys(value, true);
  return keys >= 0 && (quick.colons === 0 || quick.colons === keys) ? { value } : undefined;
}

export interface JsonEncodeOptions {
  /** Indent with two spaces, as upstream's `?pretty=true`. */
  pretty?: boolean;
  /** Append a newline as Go's json.Encoder does (default true; pretty output has none, as upstream). */
  newline?: boolean;
}

/** Encodes a value as JSON (UTF-8). Upstream's encoder ends compact output with a newline. */
export function encodeJson(value: unknown, options: JsonEncodeOptions = {}): Buffer {
  if (options.pretty) return Buffer.from(JSON.stringify(value, null, 2), 'utf8');
  const text = JSON.stringify(value);
  return Buffer.from(options.newline === false ? text : `${text}\n`, 'utf8');
}

/**
 * Re-indents compact JSON text as Go's json.MarshalIndent(v, "", "  ") writes it (upstream's
 * pretty serializer): two-space indentation, `": "` after keys, `{}`/`[]` for empty containers,
 * no trailing newline. Works on the text, so numbers keep every digit (no float round trip).
 */
export function indentJson(compact: Buffer | string): Buffer {
  const text = typeof compact === 'string' ? compact : compact.toString('utf8');
  let out = '';
  let depth = 0;
  let start = 0; // start of the pending run of characters copied verbatim
  const newline = (d: number) => '\n' + '  '.repeat(d);
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22 /* " */) {
      // Skip the string, honouring escapes.
      for (i++; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c === 0x5c /* \ */) i++;
        else if (c === 0x22) break;
      }
      continue;
    }
    if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
      const close = ch === 0x7b ? 0x7d : 0x5d;
      out += text.slice(start, i + 1);
      if (text.charCodeAt(i + 1) === close) {
        out += String.fromCharCode(close);
        i++;
      } else {
        depth++;
        out += newline(depth);
      }
      start = i + 1;
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) {
      depth--;
      out += text.slice(start, i) + newline(depth) + String.fromCharCode(ch);
      start = i + 1;
    } else if (ch === 0x2c /* , */) {
      out += text.slice(start, i) + ',' + newline(depth);
      start = i + 1;
    } else if (ch === 0x3a /* : */) {
      out += text.slice(start, i) + ': ';
      start = i + 1;
    } else if (ch === 0x20 || ch === 0x0a || ch === 0x0d || ch === 0x09) {
      out += text.slice(start, i);
      start = i + 1;
    }
  }
  out += text.slice(start);
  return Buffer.from(out, 'utf8');
}

interface ScanError {
  reason: string;
  index: number;
}

function jsonError(text: string, e: ScanError) {
  const { line, column } = lineColumn(text, e.index);
  return errors.badRequest(`json parse error: ${e.reason} at line ${line}, column ${column}`);
}

/** 1-based line and column (in characters) of a string index. */
export function lineColumn(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(index, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

/**
 * Counts key separators outside strings and checks the nesting bound, on already valid JSON.
 * Strings are skipped with indexOf (native) rather than a character loop: a body's bytes are
 * mostly string contents, and the scan ran slower than the JSON.parse it follows.
 */
function quickScan(text: string, maxDepth: number): { colons: number; depthExceededAt: number } {
  let colons = 0;
  let depth = 0;
  const n = text.length;
  let i = 0;
  for (;;) {
    const open = text.indexOf('"', i);
    const end = open < 0 ? n : open;
    for (; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === COLON) colons++;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (++depth > maxDepth) return { colons, depthExceededAt: i };
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
    }
    if (open < 0) return { colons, depthExceededAt: -1 };
    // The closing quote is the next one preceded by an even run of backslashes; valid JSON has it.
    let close = open + 1;
    for (;;) {
      close = text.indexOf('"', close);
      if (close < 0) return { colons, depthExceededAt: -1 };
      let b = close - 1;
      while (text.charCodeAt(b) === BACKSLASH) b--;
      if (((close - 1 - b) & 1) === 0) break;
      close++;
    }
    i = close + 1;
  }
}

/** A number JSON.parse can give that YAML readers give otherwise (or refuse): ±Infinity, -0. */
const unusualNumber = (n: number): boolean => !Number.isFinite(n) || (n === 0 && 1 / n < 0);

/**
 * Number of object members in a parsed value, iteratively (the value may be 10000 levels deep);
 * with `plainNumbers`, -1 when a number is unusual (see unusualNumber).
 */
function countKeys(value: unknown, plainNumbers = false): number {
  let count = 0;
  const stack: unknown[] = [value];
  if (plainNumbers && typeof value === 'number' && unusualNumber(value)) return -1;
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const e = v[i];
        if (typeof e === 'object' && e !== null) stack.push(e);
        else if (plainNumbers && typeof e === 'number' && unusualNumber(e)) return -1;
      }
    } else {
      for (const k in v) {
        count++;
        const e = (v as Record<string, unknown>)[k];
        if (typeof e === 'object' && e !== null) stack.push(e);
        else if (plainNumbers && typeof e === 'number' && unusualNumber(e)) return -1;
      }
    }
  }
  return count;
}

interface Frame {
  isObject: boolean;
  path: string;
  keys: Set<string> | undefined;
  index: number;
}

/**
 * A single-pass tokenizer with an explicit stack that mirrors encoding/json's scanner states, so a
 * failure is described with the same words Go uses (`invalid character '}' looking for beginning
 * of object key string`), and that records duplicated keys with their paths.
 */
function scanJson(text: string, maxDepth: number, wantDuplicates: boolean): { error?: ScanError; duplicates: string[] } {
  const duplicates: string[] = [];
  const reported = new Set<string>();
  const stack: Frame[] = [];
  const n = text.length;
  let i = 0;

  const skipSpace = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };
  const fail = (reason: string, at: number) => ({ error: { reason, index: at }, duplicates });
  const invalid = (context: string, at: number) =>
    at >= n ? fail('unexpected end of JSON input', n) : fail(`invalid character ${quoteChar(text, at)} ${context}`, at);

  const childPath = (): string => {
    const top = stack[stack.length - 1];
    return top ? top.path : '';
  };

  // Scans a string starting at the opening quote; returns the index after the closing quote, or
  // an error.
  const scanString = (): number | { error: ScanError; duplicates: string[] } => {
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) return ++i;
      if (c < 0x20) return fail(`invalid character ${quoteChar(text, i)} in string literal`, i);
      if (c === BACKSLASH) {
        i++;
        if (i >= n) break;
        const e = text[i]!;
        if (e === 'u') {
          for (let k = 1; k <= 4; k++) {
            if (i + k >= n) return fail('unexpected end of JSON input', n);
            if (!/[0-9a-fA-F]/.test(text[i + k]!)) {
              return fail(`invalid character ${quoteChar(text, i + k)} in \\u hexadecimal character escape`, i + k);
            }
          }
          i += 5;
          continue;
        }
        if ('"\\/bfnrt'.includes(e)) {
          i++;
          continue;
        }
        return fail(`invalid character ${quoteChar(text, i)} in string escape code`, i);
      }
      i++;
    }
    return fail('unexpected end of JSON input', n);
  };

  const isDigit = (at: number): boolean => {
    const c = text.charCodeAt(at);
    return c >= 48 && c <= 57;
  };

  const scanNumber = (): number | { error: ScanError; duplicates: string[] } => {
    if (text[i] === '-') {
      i++;
      if (i >= n) return fail('unexpected end of JSON input', n);
      if (!isDigit(i)) return fail(`invalid character ${quoteChar(text, i)} in numeric literal`, i);
    }
    if (text[i] === '0') i++;
    else while (i < n && isDigit(i)) i++;
    if (text[i] === '.') {
      i++;
      if (i >= n) return fail('unexpected end of JSON input', n);
      if (!isDigit(i)) return fail(`invalid character ${quoteChar(text, i)} after decimal point in numeric literal`, i);
      while (i < n && isDigit(i)) i++;
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      if (i >= n) return fail('unexpected end of JSON input', n);
      if (!isDigit(i)) return fail(`invalid character ${quoteChar(text, i)} in exponent of numeric literal`, i);
      while (i < n && isDigit(i)) i++;
    }
    return i;
  };

  const scanLiteral = (word: string): number | { error: ScanError; duplicates: string[] } => {
    for (let k = 1; k < word.length; k++) {
      if (i + k >= n) return fail('unexpected end of JSON input', n);
      if (text[i + k] !== word[k]) {
        return fail(`invalid character ${quoteChar(text, i + k)} in literal ${word} (expecting '${word[k]}')`, i + k);
      }
    }
    return (i += word.length);
  };

  // States: expecting a value; expecting an object key (after `{` or `,`); after a value.
  let expectValue = true;
  let context = 'looking for beginning of value';
  for (;;) {
    skipSpace();
    if (expectValue) {
      if (i >= n) return fail('unexpected end of JSON input', n);
      const c = text[i]!;
      if (c === '{' || c === '[') {
        if (stack.length >= maxDepth) return fail('exceeded max depth', i);
        const isObject = c === '{';
        const parent = childPath();
        stack.push({ isObject, path: parent, keys: isObject && wantDuplicates ? new Set() : undefined, index: 0 });
        i++;
        skipSpace();
        if (text[i] === (isObject ? '}' : ']')) {
          i++;
          stack.pop();
          expectValue = false;
          continue;
        }
        if (isObject) {
          const r = scanKey(stack[stack.length - 1]!, parent);
          if (typeof r !== 'number') return r;
          continue;
        }
        // Array: first element's path.
        stack[stack.length - 1]!.path = `${parent}[0]`;
        context = 'looking for beginning of value';
        continue;
      }
      let r: number | { error: ScanError; duplicates: string[] };
      if (c === '"') r = scanString();
      else if (c === '-' || (c >= '0' && c <= '9')) r = scanNumber();
      else if (c === 't') r = scanLiteral('true');
      else if (c === 'f') r = scanLiteral('false');
      else if (c === 'n') r = scanLiteral('null');
      else return invalid(context, i);
      if (typeof r !== 'number') return r;
      expectValue = false;
      continue;
    }
    // After a value.
    const top = stack[stack.length - 1];
    if (!top) {
      if (i < n) return invalid('after top-level value', i);
      return { duplicates };
    }
    const c = text[i];
    if (c === ',') {
      i++;
      if (top.isObject) {
        const parent = parentPathOf(stack);
        const r = scanKey(top, parent);
        if (typeof r !== 'number') return r;
      } else {
        top.index++;
        top.path = `${parentPathOf(stack)}[${top.index}]`;
        expectValue = true;
        context = 'looking for beginning of value';
      }
      continue;
    }
    if (c === (top.isObject ? '}' : ']')) {
      i++;
      stack.pop();
      continue;
    }
    return invalid(top.isObject ? 'after object key:value pair' : 'after array element', i);
  }

  function parentPathOf(s: Frame[]): string {
    const parent = s[s.length - 2];
    return parent ? parent.path : '';
  }

  // Reads `"key" :` and sets the frame's path to the member's path; leaves the scanner expecting
  // the member's value.
  function scanKey(frame: Frame, parent: string): number | { error: ScanError; duplicates: string[] } {
    skipSpace();
    if (text[i] !== '"') return invalid('looking for beginning of object key string', i);
    const start = i;
    const r = scanString();
    if (typeof r !== 'number') return r;
    const raw = text.slice(start + 1, r - 1);
    const key = raw.includes('\\') ? (JSON.parse(text.slice(start, r)) as string) : raw;
    skipSpace();
    if (text[i] !== ':') return invalid('after object key', i);
    i++;
    const path = parent ? `${parent}.${key}` : key;
    frame.path = path;
    if (frame.keys) {
      if (frame.keys.has(key)) {
        if (!reported.has(path)) {
          reported.add(path);
          duplicates.push(path);
        }
      } else {
        frame.keys.add(key);
      }
    }
    expectValue = true;
    context = 'looking for beginning of value';
    return i;
  }
}

/** Quotes a character the way encoding/json's scanner does in its error messages. */
function quoteChar(text: string, index: number): string {
  const cp = text.codePointAt(index)!;
  if (cp === 0x27) return `'\\''`;
  if (cp === 0x22) return `'"'`;
  const s = JSON.stringify(String.fromCodePoint(cp)).slice(1, -1);
  return `'${s.replace(/\\u00([0-9a-f]{2})/g, '\\x$1')}'`;
}
