// internal/fieldmanager/created-fields owns the managed fields of a create, written in one walk
// of the new object straight into the FieldsV1 object. The general path (Updater.update) diffs
// the object against nothing (or, for built-in kinds, Go's zero value of the kind), builds the
// sets of added and modified fields, takes the ignored and identity fields out, and encodes the
// set; every create went through all of it. A create's set is known from the object alone:
//   - unstructured kinds: every field of the object (what diffValues adds below a missing
//     value), lists and maps walked as addedBelow walks them;
//   - typed (built-in) kinds: the object against its kind's zero value, where value structs
//     and required lists/maps already exist: such a field is not itself recorded unless it is
//     a leaf that differs from its zero value (an atomic or empty value), and what is below it
//     counts as added. Zero fields the object lacks are filled in as withZeroValues would
//     (an added container owns `f:resources` even when the body has none).
// Anything the walk does not model exactly (types of several kinds where a zero value is
// compared, a value of the wrong type for its zero field, list items missing a key field)
// makes it give up, and the caller takes the general path; tests compare the two on many
// objects. Imports: patch/json-value, fieldmanager/{field-set,path-element,smd-type,
// typed-value,zero-values}.

import { isJsonObject, type JsonObject, type JsonValue } from '../patch/json-value.js';
import type { FieldSet } from './field-set.js';
import { compareElements, fieldElement, valuesEqual, type PathElement } from './path-element.js';
import type { SmdType } from './smd-type.js';
import { atomOf, listItemElement } from './typed-value.js';
import { zeroFieldsOf, zeroStructOf } from './zero-values.js';

/** Thrown inside the walk for a case it leaves to the general path. */
class GiveUp extends Error {}
const GIVE_UP = new GiveUp('left to the general path');

/** One element of a level under construction: a member, fields below it, or both. */
interface Entry {
  readonly pe: PathElement;
  readonly member: boolean;
  readonly below: JsonObject | undefined;
}

/**
 * The FieldsV1 object a create by one manager records for `obj` (its managedFields already
 * taken out): null when the set is empty (no entry is written), undefined when the walk leaves
 * the object to the general path. `ignored` is removed with everything below it, `stripped`
 * member by member, as the general path does with the endpoint's ignored fields and the
 * identity fields.
 */
export function createdFieldsV1(obj: JsonObject, t: SmdType, typed: boolean, ignored: FieldSet | undefined, stripped: FieldSet | undefined): JsonObject | null | undefined {
  try {
    let out: JsonObject | undefined;
    if (typed) {
      if (!isMapOnly(t)) return undefined;
      out = againstZero(true, obj, t, ignored, stripped).below;
    } else {
      out = added(obj, t, false, ignored, stripped);
    }
    return out ?? null;
  } catch (err) {
    if (err === GIVE_UP) return undefined;
    throw err;
  }
}

const isMapOnly = (t: SmdType): boolean => t.map !== undefined && t.list === undefined && t.scalar === undefined;
const isListOnly = (t: SmdType): boolean => t.list !== undefined && t.map === undefined && t.scalar === undefined;

/**
 * What is added below a value the left side lacks (typed-value's addedBelow of the value, with
 * its zero fields filled in when `fill`: typed kinds), filtered; undefined when nothing is.
 */
function added(v: JsonValue, t: SmdType, fill: boolean, ignored: FieldSet | undefined, stripped: FieldSet | undefined): JsonObject | undefined {
  const atom = atomOf(t, v);
  if (atom === 'list') {
    const list = t.list!;
    if (list.atomic || !Array.isArray(v) || v.length === 0) return undefined;
    return listLevel(v, list, fill, ignored, stripped);
  }
  if (atom === 'map') {
    const map = t.map!;
    if (map.atomic || !isJsonObject(v)) return undefined;
    const entries: Entry[] = [];
    for (const key of Object.keys(v)) {
      const ft = map.field(key) ?? map.element();
      const child = v[key];
      if (!ft || child === undefined) continue;
      addEntry(entries, fieldElement(key), true, child, ft, fill, ignored, stripped);
    }
    if (fill) for (const [key, struct] of zeroFieldsOf(t)) {
      if (Object.hasOwn(v, key)) continue;
      addEntry(entries, fieldElement(key), true, struct ? zeroStructOf(map.field(key)!) : null, map.field(key)!, fill, ignored, stripped);
    }
    return emit(entries);
  }
  return undefined;
}

/** Items of a granular list, each added with what is below it (a repeated item without). */
function listLevel(items: JsonValue[], list: NonNullable<SmdType['list']>, fill: boolean, ignored: FieldSet | undefined, stripped: FieldSet | undefined): JsonObject | undefined {
  const elem = list.element();
  if (items.length === 1) {
    const pe = itemElement(list, items[0]!, 0);
    if (pe === undefined) return undefined;
    const entries: Entry[] = [];
    addEntry(entries, pe, true, items[0]!, elem, fill, ignored, stripped);
    return emit(entries);
  }
  const byId = new Map<string, { pe: PathElement; first: JsonValue; repeated: boolean }>();
  for (let i = 0; i < items.length; i++) {
    const pe = itemElement(list, items[i]!, i);
    if (pe === undefined) continue;
    const seen = byId.get(pe.id);
    if (seen) seen.repeated = true;
    else byId.set(pe.id, { pe, first: items[i]!, repeated: false });
  }
  const entries: Entry[] = [];
  for (const o of byId.values()) addEntry(entries, o.pe, true, o.repeated ? undefined : o.first, elem, fill, ignored, stripped);
  return emit(entries);
}

/** The element of a list item; undefined for an item the general path skips. */
function itemElement(list: NonNullable<SmdType['list']>, item: JsonValue, index: number): PathElement | undefined {
  if (list.keys.length > 0 && isJsonObject(item)) {
    // A missing key field would be read from the schema's default; the filled-in item might
    // differ there from the item as it is.
    for (const k of list.keys) if (!Object.hasOwn(item, k)) throw GIVE_UP;
  }
  const pe = listItemElement(list, item, index);
  return typeof pe === 'string' ? undefined : pe;
}

/**
 * Adds the element `pe` (a member when `member`) with what is added below `value` (nothing
 * when undefined), unless the filters take it out.
 */
function addEntry(
  entries: Entry[],
  pe: PathElement,
  member: boolean,
  value: JsonValue | undefined,
  t: SmdType,
  fill: boolean,
  ignored: FieldSet | undefined,
  stripped: FieldSet | undefined,
): void {
  let ig: FieldSet | undefined;
  let st: FieldSet | undefined;
  if (ignored !== undefined) {
    if (ignored.hasMember(pe)) return;
    ig = ignored.child(pe);
  }
  if (stripped !== undefined) {
    if (member && stripped.hasMember(pe)) member = false;
    st = stripped.child(pe);
  }
  const below = value === undefined ? undefined : added(value, t, fill, ig, st);
  if (member || below !== undefined) entries.push({ pe, member, below });
}

/**
 * What diffing a zero field against the object's value records at its element: `struct` says
 * whether the zero value is the field type's zero struct (else null). `value` is present.
 */
function againstZero(struct: boolean, value: JsonValue, t: SmdType, ignored: FieldSet | undefined, stripped: FieldSet | undefined): { member: boolean; below: JsonObject | undefined } {
  if (isMapOnly(t)) {
    const map = t.map!;
    if (value === null) {
      // Null against null is no change; against a struct it is one only for an atomic or
      // field-less struct (otherwise the struct's zero fields are merely removed).
      if (!struct) return NOTHING;
      return map.atomic || zeroFieldsOf(t).length === 0 ? MEMBER : NOTHING;
    }
    if (!isJsonObject(value)) throw GIVE_UP;
    if (map.atomic) return valuesEqual(struct ? zeroStructOf(t) : null, value) ? NOTHING : MEMBER;
    const zero = zeroFieldsOf(t);
    if (!struct) {
      // Null against a map: a leaf change when the filled-in map is empty, else everything in it is added.
      if (zero.length === 0 && isEmpty(value)) return MEMBER;
      return { member: false, below: added(value, t, true, ignored, stripped) };
    }
    const entries: Entry[] = [];
    for (const key of Object.keys(value)) {
      const ft = map.field(key) ?? map.element();
      const child = value[key];
      if (!ft || child === undefined) continue;
      const pe = fieldElement(key);
      const z = zeroKind(zero, key);
      if (z === undefined) {
        addEntry(entries, pe, true, child, ft, true, ignored, stripped);
        continue;
      }
      let ig: FieldSet | undefined;
      if (ignored !== undefined) {
        if (ignored.hasMember(pe)) continue;
        ig = ignored.child(pe);
      }
      const r = againstZero(z, child, ft, ig, stripped?.child(pe));
      const member = r.member && !(stripped !== undefined && stripped.hasMember(pe));
      if (member || r.below !== undefined) entries.push({ pe, member, below: r.below });
    }
    // Zero fields the object lacks are equal on both sides.
    return { member: false, below: emit(entries) };
  }
  if (isListOnly(t) && !struct) {
    if (value === null) return NOTHING;
    if (!Array.isArray(value)) throw GIVE_UP;
    const list = t.list!;
    if (list.atomic || value.length === 0) return MEMBER;
    return { member: false, below: listLevel(value, list, true, ignored, stripped) };
  }
  throw GIVE_UP;
}

const NOTHING = { member: false, below: undefined } as const;
const MEMBER = { member: true, below: undefined } as const;

function zeroKind(zero: ReadonlyArray<readonly [string, boolean]>, key: string): boolean | undefined {
  for (let i = 0; i < zero.length; i++) if (zero[i]![0] === key) return zero[i]![1];
  return undefined;
}

function isEmpty(o: JsonObject): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return false;
  return true;
}

// Levels come in document order and are short: an insertion sort beats the builtin's setup.
const INSERTION_SORT_MAX = 24;

/**
 * The FieldsV1 object of a level: elements in structured-merge-diff's order, `{}` for a member
 * without fields below it, `"."` last for a member with some. Undefined when empty.
 */
function emit(entries: Entry[]): JsonObject | undefined {
  const n = entries.length;
  if (n === 0) return undefined;
  if (n > INSERTION_SORT_MAX) entries.sort((a, b) => compareElements(a.pe, b.pe));
  else {
    for (let i = 1; i < n; i++) {
      const x = entries[i]!;
      let j = i - 1;
      while (j >= 0 && compareElements(entries[j]!.pe, x.pe) > 0) {
        entries[j + 1] = entries[j]!;
        j--;
      }
      entries[j + 1] = x;
    }
  }
  const out: JsonObject = {};
  for (let i = 0; i < n; i++) {
    const e = entries[i]!;
    if (e.below !== undefined) {
      if (e.member) e.below['.'] = {};
      out[e.pe.id] = e.below;
    } else out[e.pe.id] = {};
  }
  return out;
}
