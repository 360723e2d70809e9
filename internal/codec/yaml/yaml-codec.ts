// internal/codec/yaml/yaml-codec owns reading and writing YAML bodies the way upstream does:
// upstream converts YAML to JSON with go-yaml v2 (sigs.k8s.io/yaml), so scalars resolve with
// YAML 1.1 rules (`yes`/`on`/`y` are booleans, `0777` is octal, `1_000` is 1000, timestamps stay
// strings, non-string keys become strings), and writes YAML from JSON with keys sorted in go-yaml's
// order, ambiguous strings double-quoted and no line folding. Imports: apierrors, js-yaml,
// json-codec, patch/json-value (setMember).
//
// js-yaml's event parser (positions, depth bound) does the syntax work; the values are built here
// from the event stream without recursion, so that go-yaml's resolution, duplicate-key paths and
// alias-expansion limits can be applied. A body that is a JSON object (kubectl's apply bodies)
// is read by JSON.parse instead when that gives the same value (readAsJson), at a fraction of
// the cost.

import {
  DEFAULT_SCALAR_STYLE_RULES,
  DUMP_SCHEMA,
  dump,
  EVENT_ID,
  floatYaml11Tag,
  getScalarValue,
  intYaml11Tag,
  parseEvents,
  SCALAR_STYLE,
  visit,
  YAMLException,
  type DumpOptions,
  type Event,
  type ScalarEvent,
  type ScalarLayout,
} from 'js-yaml';
import { errors, type StatusError } from '../../apierrors/status.js';
import { parseUnambiguousJson } from '../json/json-codec.js';
import { setMember } from '../../patch/json-value.js';

/** The decoded value plus the paths of keys repeated in one mapping (see json-codec). */
export interface YamlDecodeResult {
  value: unknown;
  /** `spec.replicas`-style paths of repeated keys; the last value wins, as with go-yaml. */
  duplicateFields: string[];
  /** The same duplicates in go-yaml's strict-mode words: `line 5: key "replicas" already set in map`. */
  duplicateKeyErrors: string[];
}

export interface YamlDecodeOptions {
  /**
   * Maximum nesting. js-yaml's parser recurses per level, so this stays well below the stack
   * limit (upstream allows 10000; real manifests nest a few dozen levels).
   */
  maxDepth?: number;
  /**
   * Maximum number of values that alias expansion may add (guards against "billion laughs"; the
   * body size bounds everything else). Default 100,000.
   */
  maxAliasNodes?: number;
  /** Accept a stream of several documents and return them as an array (default: one only). */
  multipleDocuments?: boolean;
}

export const YAML_MAX_DEPTH = 512;
const DEFAULT_MAX_ALIAS_NODES = 100_000;

const PREFIX = 'error converting YAML to JSON: yaml: ';
// ignoreBOM keeps a byte order mark in the text; the YAML parser itself accepts one at the start.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

function yamlError(text: string, offset: number, reason: string): StatusError {
  const { line, column } = position(text, offset);
  return errors.badRequest(`${PREFIX}line ${line}, column ${column}: ${reason}`);
}

function position(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  const end = Math.min(Math.max(offset, 0), text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: end - start + 1 };
}

const TAG_PREFIX = 'tag:yaml.org,2002:';

/** Values go-yaml v2 gives plain scalars from a fixed table (YAML 1.1 booleans and nulls). */
const RESOLVE_TABLE = new Map<string, unknown>();
for (const s of ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']) RESOLVE_TABLE.set(s, true);
for (const s of ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']) RESOLVE_TABLE.set(s, false);
for (const s of ['', '~', 'null', 'Null', 'NULL']) RESOLVE_TABLE.set(s, null);
for (const s of ['.nan', '.NaN', '.NAN']) RESOLVE_TABLE.set(s, Number.NaN);
for (const s of ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']) RESOLVE_TABLE.set(s, Number.POSITIVE_INFINITY);
for (const s of ['-.inf', '-.Inf', '-.INF']) RESOLVE_TABLE.set(s, Number.NEGATIVE_INFINITY);

const MERGE = Symbol('merge');
const GO_INT = /^([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/;
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const DOT_FLOAT = /^\.[0-9]+([eE][-+]?[0-9]+)?$/;
const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

/** Go's strconv.ParseInt/ParseUint(s, 0, 64) as go-yaml applies them (underscores removed first). */
function parseGoInt(plain: string): number | undefined {
  const m = GO_INT.exec(plain);
  if (!m) return undefined;
  const body = m[2]!;
  let v: bigint;
  if (/^0[0-7]+$/.test(body)) v = BigInt(`0o${body.slice(1)}`);
  else v = BigInt(body.toLowerCase());
  if (m[1] === '-') v = -v;
  if (v < INT64_MIN || v > UINT64_MAX) return undefined;
  return Number(v);
}

/** Resolves a plain scalar as go-yaml v2 does; `MERGE` for the merge key. */
function resolvePlain(s: string): unknown {
  if (RESOLVE_TABLE.has(s)) return RESOLVE_TABLE.get(s);
  if (s === '<<') return MERGE;
  const c = s.charCodeAt(0);
  if (c === 46 /* . */) return DOT_FLOAT.test(s) ? Number(s) : s;
  if ((c >= 48 && c <= 57) || c === 43 || c === 45) {
    // Timestamps (YYYY-MM-DD…) would resolve first, but go-yaml hands them to interface{}
    // targets as the original string, which is what falls out below anyway.
    const plain = s.replace(/_/g, '');
    const i = parseGoInt(plain);
    if (i !== undefined) return i;
    if (YAML_STYLE_FLOAT.test(plain)) return Number(plain);
  }
  return s;
}

/** Whether go-yaml v2 would read this string back as something other than a string. */
export function goYamlResolvesNonString(s: string): boolean {
  if (/^\d{4}-/.test(s) && /^\d{4}-\d{1,2}-\d{1,2}([Tt ]|$)/.test(s)) return true; // timestamp
  if (/^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$/.test(s)) return true; // base-60 float
  const v = resolvePlain(s);
  return typeof v !== 'string';
}

function resolveTagged(tag: string, value: string, text: string, offset: number): unknown {
  switch (tag) {
    case `${TAG_PREFIX}str`:
    case `${TAG_PREFIX}timestamp`:
      return value;
    case `${TAG_PREFIX}null`:
      if (RESOLVE_TABLE.get(value) === null) return null;
      break;
    case `${TAG_PREFIX}bool`:
      if (typeof RESOLVE_TABLE.get(value) === 'boolean') return RESOLVE_TABLE.get(value);
      break;
    case `${TAG_PREFIX}int`: {
      const v = parseGoInt(value.replace(/_/g, ''));
      if (v !== undefined) return v;
      break;
    }
    case `${TAG_PREFIX}float`: {
      const v = resolvePlain(value);
      if (typeof v === 'number') return v;
      break;
    }
    case `${TAG_PREFIX}binary`:
      return Buffer.from(value.replace(/\s+/g, ''), 'base64').toString('utf8');
    case `${TAG_PREFIX}merge`:
      return MERGE;
    default:
      // Local and unknown tags are ignored, as go-yaml does for interface{} targets.
      return value;
  }
  throw yamlError(text, offset, `cannot decode !!str \`${value}\` as a !!${tag.slice(TAG_PREFIX.length)}`);
}

function tagName(text: string, start: number, end: number): string | undefined {
  if (start < 0) return undefined;
  const raw = text.slice(start, end);
  if (raw.startsWith('!<') && raw.endsWith('>')) return raw.slice(2, -1);
  if (raw.startsWith('!!')) return TAG_PREFIX + raw.slice(2);
  if (raw === '!') return `${TAG_PREFIX}str`;
  return raw;
}

interface MapFrame {
  kind: 'map';
  value: Record<string, unknown>;
  path: string;
  /** The key waiting for its value, or NO_KEY while expecting a key. */
  key: string | typeof NO_KEY | typeof MERGE;
  keyOffset: number;
  merges: unknown[];
  anchor: string | undefined;
  nodes: number;
  start: number;
}
interface SeqFrame {
  kind: 'seq';
  value: unknown[];
  path: string;
  anchor: string | undefined;
  nodes: number;
  start: number;
}
type Frame = MapFrame | SeqFrame;
const NO_KEY = Symbol('no key');

interface Anchored {
  value: unknown;
  nodes: number;
}

/**
 * Decodes a YAML body (one document unless options.multipleDocuments). Throws a 400 StatusError
 * (`error converting YAML to JSON: yaml: line L, column C: <reason>`) for malformed YAML,
 * several documents, NaN/infinity, unsupported keys or excessive aliasing.
 */
export function decodeYaml(input: Uint8Array | string, options: YamlDecodeOptions = {}): YamlDecodeResult {
  const text = typeof input === 'string' ? input : utf8.decode(input);
  if (!options.multipleDocuments) {
    const json = readAsJson(text, options.maxDepth ?? YAML_MAX_DEPTH);
    if (json) return json;
  }
  return readYaml(text, options);
}

/** js-yaml's test for characters a YAML stream may not hold (it refuses such a stream). */
const NON_PRINTABLE = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:[^\uD800-\uDBFF]|^)[\uDC00-\uDFFF]/;

/**
 * A JSON object body (what kubectl sends as apply-patch+yaml) read with JSON.parse, when the
 * YAML reader is certain to give the same value and no error: JSON is YAML's flow style, and
 * JSON's strings and numbers resolve alike in both, except for repeated keys (reported here as
 * duplicates), -0 and out-of-range numbers, characters YAML does not allow in a stream, and
 * nesting near the YAML depth bound. Those and anything that is not JSON go to the YAML reader,
 * which then answers (and words errors) as always. Undefined when it does not apply.
 */
export function readAsJson(text: string, maxDepth: number = YAML_MAX_DEPTH): YamlDecodeResult | undefined {
  let i = 0;
  while (i < text.length && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 10 || text.charCodeAt(i) === 13)) i++;
  if (text.charCodeAt(i) !== 123 /* { */ || NON_PRINTABLE.test(text)) return undefined;
  const parsed = parseUnambiguousJson(text, Math.floor(maxDepth / 2));
  return parsed && { value: parsed.value, duplicateFields: [], duplicateKeyErrors: [] };
}

/** decodeYaml without its JSON shortcut: the YAML reader alone (tests compare the two). */
export function readYaml(input: Uint8Array | string, options: YamlDecodeOptions = {}): YamlDecodeResult {
  const text = typeof input === 'string' ? input : utf8.decode(input);
  const maxAliasNodes = options.maxAliasNodes ?? DEFAULT_MAX_ALIAS_NODES;
  let events: Event[];
  try {
    events = parseEvents(text, { maxDepth: options.maxDepth ?? YAML_MAX_DEPTH });
  } catch (e) {
    if (e instanceof YAMLException) {
      const mark = e.mark;
      const where = mark ? `line ${mark.line + 1}, column ${mark.column + 1}: ` : '';
      throw errors.badRequest(`${PREFIX}${where}${e.reason}`);
    }
    if (e instanceof RangeError) throw errors.badRequest(`${PREFIX}exceeded max depth`);
    throw e;
  }

  const duplicateFields: string[] = [];
  const duplicateKeyErrors: string[] = [];
  const reported = new Set<string>();
  const documents: unknown[] = [];
  let anchors = new Map<string, Anchored>();
  const stack: Frame[] = [];
  let aliasNodes = 0;
  let docValue: unknown;
  let docHasContent = false;


  // Places a finished value into its parent (or the document).
  const place = (value: unknown, nodes: number, offset: number, anchor: string | undefined): void => {
    if (anchor !== undefined) anchors.set(anchor, { value, nodes });
    const parent = stack[stack.length - 1];
    if (!parent) {
      docValue = value;
      docHasContent = true;
      return;
    }
    parent.nodes += nodes;
    if (parent.kind === 'seq') {
      parent.value.push(value);
      return;
    }
    if (parent.key === NO_KEY) {
      parent.key = keyString(value, offset);
      parent.keyOffset = offset;
      return;
    }
    if (parent.key === MERGE) {
      parent.merges.push(value);
    } else {
      const key = parent.key;
      if (Object.prototype.hasOwnProperty.call(parent.value, key)) {
        const path = parent.path ? `${parent.path}.${key}` : key;
        if (!reported.has(path)) {
          reported.add(path);
          duplicateFields.push(path);
        }
        duplicateKeyErrors.push(`line ${position(text, parent.keyOffset).line}: key ${JSON.stringify(key)} already set in map`);
      }
      setMember(parent.value, key, value);
    }
    parent.key = NO_KEY;
  };

  const keyString = (key: unknown, offset: number): string | typeof MERGE => {
    if (key === MERGE) return MERGE;
    if (typeof key === 'string') return key;
    if (typeof key === 'boolean') return key ? 'true' : 'false';
    if (typeof key === 'number' && Number.isFinite(key)) return String(key);
    throw yamlError(text, offset, `unsupported map key of type ${key === null ? 'null' : Array.isArray(key) ? 'sequence' : typeof key}`);
  };

  const childPath = (): string => {
    const parent = stack[stack.length - 1];
    if (!parent) return '';
    if (parent.kind === 'seq') return `${parent.path}[${parent.value.length}]`;
    if (typeof parent.key === 'string') return parent.path ? `${parent.path}.${parent.key}` : parent.key;
    return parent.path;
  };

  const anchorOf = (start: number, end: number): string | undefined => (start < 0 ? undefined : text.slice(start, end));

  for (const ev of events) {
    switch (ev.type) {
      case EVENT_ID.DOCUMENT:
        if (stack.length === 0 && docHasContent) {
          documents.push(docValue);
          docHasContent = false;
          docValue = undefined;
        }
        // Anchors are scoped to their document.
        anchors = new Map();
        break;
      case EVENT_ID.MAPPING:
        stack.push({
          kind: 'map',
          value: {},
          path: childPath(),
          key: NO_KEY,
          keyOffset: ev.start,
          merges: [],
          anchor: anchorOf(ev.anchorStart, ev.anchorEnd),
          nodes: 1,
          start: ev.start,
        });
        break;
      case EVENT_ID.SEQUENCE:
        stack.push({ kind: 'seq', value: [], path: childPath(), anchor: anchorOf(ev.anchorStart, ev.anchorEnd), nodes: 1, start: ev.start });
        break;
      case EVENT_ID.SCALAR: {
        place(scalarValue(text, ev), 1, ev.valueStart, anchorOf(ev.anchorStart, ev.anchorEnd));
        break;
      }
      case EVENT_ID.ALIAS: {
        const name = text.slice(ev.anchorStart, ev.anchorEnd);
        const target = anchors.get(name);
        if (!target) throw yamlError(text, ev.anchorStart, `unknown anchor '${name}' referenced`);
        aliasNodes += target.nodes;
        if (aliasNodes > maxAliasNodes) throw yamlError(text, ev.anchorStart, 'document contains excessive aliasing');
        // A copy, so that later changes to one occurrence do not show through the other.
        const value = typeof target.value === 'object' && target.value !== null ? structuredClone(target.value) : target.value;
        place(value, target.nodes, ev.anchorStart, undefined);
        break;
      }
      case EVENT_ID.POP: {
        const frame = stack.pop();
        if (!frame) {
          // End of a document.
          if (docHasContent) {
            documents.push(docValue);
            docHasContent = false;
            docValue = undefined;
          }
          break;
        }
        if (frame.kind === 'map') applyMerges(frame, text);
        place(frame.value, frame.nodes, frame.start, frame.anchor);
        break;
      }
    }
  }
  if (docHasContent) documents.push(docValue);

  const value = options.multipleDocuments ? documents : documents.length === 0 ? null : documents[0];
  if (!options.multipleDocuments) {
    const nonEmpty = documents.filter((d) => d !== null && d !== undefined);
    if (nonEmpty.length > 1) {
      throw errors.badRequest(`${PREFIX}the body holds ${nonEmpty.length} YAML documents, a single object was expected`);
    }
    const single = documents.find((d) => d !== null && d !== undefined) ?? null;
    checkFinite(single, text);
    return { value: single, duplicateFields, duplicateKeyErrors };
  }
  checkFinite(value, text);
  return { value, duplicateFields, duplicateKeyErrors };
}

function scalarValue(text: string, ev: ScalarEvent): unknown {
  const value = getScalarValue(text, ev);
  const tag = tagName(text, ev.tagStart, ev.tagEnd);
  if (tag !== undefined) return resolveTagged(tag, value, text, ev.valueStart);
  if (ev.style !== SCALAR_STYLE.PLAIN) return value;
  return resolvePlain(value);
}

/** Merge keys (`<<`): keys the mapping sets itself win, then earlier sources over later ones. */
function applyMerges(frame: MapFrame, text: string): void {
  if (frame.key === MERGE) frame.merges.push(null);
  for (const source of frame.merges) {
    const list = Array.isArray(source) ? source : [source];
    for (const item of list) {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) {
        throw yamlError(text, frame.start, 'map merge requires map or sequence of maps as the value');
      }
      for (const k of Object.keys(item)) {
        if (!Object.prototype.hasOwnProperty.call(frame.value, k)) setMember(frame.value, k, (item as Record<string, unknown>)[k]);
      }
    }
  }
}


/** NaN and infinities have no JSON form; upstream's conversion fails on them too. */
function checkFinite(value: unknown, text: string): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'number' && !Number.isFinite(v)) throw yamlError(text, 0, `json: unsupported value: ${v}`);
    if (typeof v === 'object' && v !== null) {
      for (const x of Object.values(v)) if (typeof x === 'object' || typeof x === 'number') stack.push(x);
    }
  }
}

// ---- encoding ----

const IS_LETTER = /\p{L}/u;
const IS_DIGIT = /\p{Nd}/u;

/** go-yaml v2's map key order: letters after other characters, digit runs compared as numbers. */
export function compareYamlKeys(a: string, b: string): number {
  if (a === b) return 0;
  return goYamlKeyLess(a, b) ? -1 : 1;
}

function goYamlKeyLess(a: string, b: string): boolean {
  const ar = [...a];
  const br = [...b];
  const n = Math.min(ar.length, br.length);
  for (let i = 0; i < n; i++) {
    const ca = ar[i]!;
    const cb = br[i]!;
    if (ca === cb) continue;
    const al = IS_LETTER.test(ca);
    const bl = IS_LETTER.test(cb);
    if (al && bl) return ca.codePointAt(0)! < cb.codePointAt(0)!;
    if (al || bl) return bl;
    let an = 0;
    let bn = 0;
    if (ca === '0' || cb === '0') {
      for (let j = i - 1; j >= 0 && IS_DIGIT.test(ar[j]!); j--) {
        if (ar[j] !== '0') {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    let ai = i;
    for (; ai < ar.length && IS_DIGIT.test(ar[ai]!); ai++) an = an * 10 + (ar[ai]!.charCodeAt(0) - 48);
    let bi = i;
    for (; bi < br.length && IS_DIGIT.test(br[bi]!); bi++) bn = bn * 10 + (br[bi]!.charCodeAt(0) - 48);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return ca.codePointAt(0)! < cb.codePointAt(0)!;
  }
  return ar.length < br.length;
}

/** Go's strconv.FormatFloat(f, 'g', -1, 64), which go-yaml uses for floats. */
export function formatGoFloat(v: number): string {
  // Integral values came from JSON integers, which go-yaml keeps as ints.
  if (Number.isInteger(v) && Math.abs(v) < 2 ** 63) return String(v);
  const [mantissa, expPart] = v.toExponential().split('e') as [string, string];
  const exp = Number(expPart);
  // With shortest formatting Go switches to an exponent below 1e-4 and from 1e6 up.
  if (exp < -4 || exp >= 6) {
    const abs = Math.abs(exp);
    return `${mantissa}e${exp < 0 ? '-' : '+'}${abs < 10 ? `0${abs}` : abs}`;
  }
  return String(v);
}

const STR_TAG = `${TAG_PREFIX}str`;

// go-yaml double-quotes strings that would otherwise read back as another type.
function doubleQuoteGoAmbiguous(layout: ScalarLayout): void {
  if (layout.style !== SCALAR_STYLE.PLAIN || layout.node.tag !== STR_TAG) return;
  if (goYamlResolvesNonString(layout.node.value)) layout.style = SCALAR_STYLE.DOUBLE_QUOTED;
}

const encodeSchema = DUMP_SCHEMA.withTags(
  {
    ...intYaml11Tag,
    identify: (v: unknown) => typeof v === 'number' && Number.isInteger(v) && Math.abs(v) < 2 ** 63,
    represent: (v: number) => String(v),
  },
  {
    ...floatYaml11Tag,
    // Go writes `1e-05`, which YAML 1.1 does not call a float but go-yaml reads back as one.
    resolve: (source: string, isExplicit: boolean, tag: string) =>
      YAML_STYLE_FLOAT.test(source) && /[.eE]/.test(source) ? Number(source) : floatYaml11Tag.resolve(source, isExplicit, tag),
    identify: (v: unknown) => typeof v === 'number' && !(Number.isInteger(v) && Math.abs(v) < 2 ** 63),
    represent: (v: number) => formatGoFloat(v),
  },
);

export interface YamlEncodeOptions {
  /** `sorted` (default) as upstream's encoder (go-yaml sorts map keys); `object` keeps insertion order. */
  keyOrder?: 'sorted' | 'object';
}

/**
 * Encodes a JSON-form value as YAML like upstream's responses: block style, two-space indent,
 * sequences not indented under their key, keys in go-yaml order, strings that would read back as
 * another type double-quoted, multi-line strings as literal blocks, no line folding.
 */
export function encodeYaml(value: unknown, options: YamlEncodeOptions = {}): Buffer {
  const sorted = (options.keyOrder ?? 'sorted') === 'sorted';
  const options_: DumpOptions = {
    schema: encodeSchema,
    lineWidth: -1,
    seqNoIndent: true,
    noRefs: true,
    quoteStyle: 'single',
    scalarStyleRules: [doubleQuoteGoAmbiguous, ...Object.values(DEFAULT_SCALAR_STYLE_RULES)],
  };
  if (sorted) {
    options_.transform = (documents) =>
      visit(documents, (node) => {
        if (node.kind === 'mapping') {
          node.items.sort((x, y) => compareYamlKeys(x.key.kind === 'scalar' ? x.key.value : '', y.key.kind === 'scalar' ? y.key.value : ''));
        }
      });
  }
  const text = dump(value, options_);
  return Buffer.from(text, 'utf8');
}
