// internal/fieldmanager/fields-v1 owns the FieldsV1 wire form of a field set: a JSON object
// keyed by path elements (`f:`, `k:`, `v:`, `i:`), `{}` for a member without children, and a
// `"."` entry for an element that is both a member and has children. Keys come out in
// structured-merge-diff's order (element order, `"."` last), so `JSON.stringify` of the encoded
// object is byte-for-byte what upstream writes for built-in kinds.
// Decoding ignores element types it does not know (as upstream does) and rejects the rest of
// malformed input with an Error whose message says what is wrong.
// Imports: memo/bounded-map, patch/json-value, storedobject (rememberJsonText),
// fieldmanager/field-set, fieldmanager/path-element.

import { BoundedMap } from '../memo/bounded-map.js';
import { rememberJsonText } from '../storedobject/stored-object.js';
import { isJsonObject, type JsonObject } from '../patch/json-value.js';
import { FieldSet, type FieldSetChild } from './field-set.js';
import { compareElements, elementsEqual, parseElement, type PathElement } from './path-element.js';

/** The FieldsV1 object of a set (fresh objects; the caller may keep or serialize them). */
export function encodeFieldsV1(set: FieldSet): JsonObject {
  return emit(set, false);
}

function emit(set: FieldSet, includeSelf: boolean): JsonObject {
  const out: JsonObject = {};
  const members = set.members;
  const children = set.children;
  let mi = 0;
  let ci = 0;
  let wrote = false;
  while (mi < members.length || ci < children.length) {
    const m = members[mi];
    const c = children[ci];
    const order = m === undefined ? 1 : c === undefined ? -1 : compareElements(m, c.pe);
    if (order < 0) {
      out[m!.id] = {};
      mi++;
    } else if (order > 0) {
      out[c!.pe.id] = emit(c!.set, false);
      ci++;
    } else {
      out[c!.pe.id] = emit(c!.set, true);
      mi++;
      ci++;
    }
    wrote = true;
  }
  if (includeSelf && wrote) out['.'] = {};
  return out;
}

/** The compact JSON text upstream stores in `fieldsV1`. */
export const fieldsV1String = (set: FieldSet): string => JSON.stringify(encodeFieldsV1(set));

const decoded = new WeakMap<object, FieldSet>();

/** Recently decoded sets by their FieldsV1 text, oldest first; bounded. */
const byText = new BoundedMap<string, FieldSet>(512);

/** One deep-frozen FieldsV1 value per text, for stored objects decoded to be written; bounded. */
const sharedByText = new BoundedMap<string, unknown>(256);

/**
 * The FieldsV1 value of `text` (a stored entry's, as storedobject's parseStored hands it over)
 * for an object decoded to be written. Objects of one shape (the pods of one workload, every
 * update of one object by the same writers) carry the same texts, so one value per text is
 * shared by all of them: it is parsed once, its set decoded once (decodeFieldsV1 finds it by
 * identity) and its text remembered, when it is what JSON.stringify writes, so that a write
 * keeping it does not serialize it again. It is frozen, so that nothing can change what other
 * objects hold. Throws SyntaxError for text that is not JSON.
 */
export function sharedFieldsV1(text: string): unknown {
  const known = sharedByText.get(text);
  if (known !== undefined) return known;
  const value: unknown = JSON.parse(text);
  if (!isJsonObject(value)) return value;
  if (JSON.stringify(value) === text) rememberJsonText(value, text);
  const set = byText.get(text);
  if (set !== undefined) decoded.set(value, set);
  sharedByText.set(text, deepFreeze(value));
  return value;
}

function deepFreeze(v: JsonObject): JsonObject {
  for (const key of Object.keys(v)) {
    const child = v[key];
    if (typeof child === 'object' && child !== null) deepFreeze(child as JsonObject);
  }
  return Object.freeze(v);
}

/** A FieldsV1 object decoded lately, its text and its set. */
interface Recent {
  readonly fields: JsonObject;
  readonly text: string;
  readonly set: FieldSet;
}

/** The last few decoded objects of different texts, the latest hit first. */
const recent: Recent[] = [];
const RECENT_MAX = 4;

/**
 * Parses a FieldsV1 object. Results are cached per object, and by text for the most recent
 * ones: managed fields of a stored object are decoded on every write, each time from a fresh
 * parse of the stored bytes, and objects of one shape (the pods of one workload) share the
 * same entries; serializing is cheaper than reading, and the set is immutable. Before
 * serializing, the object is compared with the last few decoded ones (members in the same
 * order, every value an object): the same shape has the same text and set, and the comparison
 * stops at the first difference where serializing (and hashing the text) walks all of it.
 * The text is remembered for the object (storedobject's rememberJsonText), so the stored bytes
 * of a write that keeps it need not serialize it again. Throws Error on malformed input.
 */
export function decodeFieldsV1(fields: unknown): FieldSet {
  if (!isJsonObject(fields)) throw new Error('fieldsV1 must be a JSON object');
  const cached = decoded.get(fields);
  if (cached) return cached;
  for (let i = 0; i < recent.length; i++) {
    const r = recent[i]!;
    if (sameShape(fields, r.fields)) {
      if (i > 0) {
        recent.splice(i, 1);
        recent.unshift(r);
      }
      decoded.set(fields, r.set);
      rememberJsonText(fields, r.text);
      return r.set;
    }
  }
  const text = JSON.stringify(fields);
  let set = byText.get(text);
  if (set === undefined) {
    set = read(fields, '').children ?? new FieldSet();
    byText.set(text, set);
  }
  decoded.set(fields, set);
  rememberJsonText(fields, text);
  // A copy of its shape: the object itself belongs to a stored object that may yet change.
  recent.unshift({ fields: shapeOf(fields), text, set });
  if (recent.length > RECENT_MAX) recent.pop();
  return set;
}

function shapeOf(fields: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(fields)) {
    const v = fields[k];
    out[k] = isJsonObject(v) ? shapeOf(v) : null;
  }
  return out;
}

/**
 * Whether two FieldsV1 values have the same members in the same order, all the way down,
 * with nothing but objects as values: then they serialize to the same text and read as the
 * same set. Anything else (a value that is not an object) counts as different.
 */
function sameShape(a: JsonObject, b: JsonObject): boolean {
  if (a === b) return true;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i]) return false;
    const va = a[k];
    const vb = b[k];
    if (!isJsonObject(va) || !isJsonObject(vb) || !sameShape(va, vb)) return false;
  }
  return true;
}

function read(obj: JsonObject, where: string): { children: FieldSet | undefined; isMember: boolean } {
  let isMember = false;
  const members: PathElement[] = [];
  const children: FieldSetChild[] = [];
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    if (key === '.') {
      isMember = true;
      continue;
    }
    let pe: PathElement | undefined;
    try {
      pe = parseElement(key);
    } catch (err) {
      throw new Error(`parsing key as path element ${JSON.stringify(where + key)}: ${(err as Error).message}`);
    }
    // An element type from a future version: dropped rather than misread.
    if (pe === undefined) continue;
    if (!isJsonObject(value)) throw new Error(`value of ${JSON.stringify(where + key)} must be a JSON object`);
    const sub = read(value, `${where}${key}/`);
    if (sub.isMember) members.push(pe);
    if (sub.children) children.push({ pe, set: sub.children });
  }
  if (members.length === 0 && children.length === 0) return { children: undefined, isMember: true };
  return { children: new FieldSet(sortUnique(members), sortChildren(children)), isMember };
}

function sortUnique(list: PathElement[]): PathElement[] {
  let sorted = true;
  for (let i = 1; i < list.length && sorted; i++) if (compareElements(list[i - 1]!, list[i]!) >= 0) sorted = false;
  if (sorted) return list;
  list.sort(compareElements);
  return list.filter((pe, i) => i === 0 || !elementsEqual(list[i - 1]!, pe));
}

function sortChildren(list: FieldSetChild[]): FieldSetChild[] {
  let sorted = true;
  for (let i = 1; i < list.length && sorted; i++) if (compareElements(list[i - 1]!.pe, list[i]!.pe) >= 0) sorted = false;
  if (sorted) return list;
  // Stable sort keeps later duplicates after earlier ones; the later one wins, as upstream.
  const ordered = list.map((c, i) => ({ c, i })).sort((a, b) => compareElements(a.c.pe, b.c.pe) || a.i - b.i);
  const out: FieldSetChild[] = [];
  for (const { c } of ordered) {
    if (out.length > 0 && elementsEqual(out[out.length - 1]!.pe, c.pe)) out[out.length - 1] = c;
    else out.push(c);
  }
  return out;
}
