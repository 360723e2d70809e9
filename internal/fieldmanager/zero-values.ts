// internal/fieldmanager/zero-values owns the "Go zero value" view of a built-in object: upstream
// holds built-in objects as Go structs, so every value struct (a field whose schema default is
// `{}`: spec, template, resources, …) exists even when empty, and required lists and maps (no
// `omitempty`) exist as null. Field ownership of built-in kinds is computed between such views
// (it decides whether a struct was "added"); the registry may also use it to present objects the
// way upstream serializes them (JSON patch paths such as /spec/template/spec/containers/0/
// resources/limits exist there).
// Imports: patch/json-value, patch/type-node (type only), fieldmanager/smd-type.

import { copyMembers, isJsonObject, setMember, type JsonObject, type JsonValue } from '../patch/json-value.js';
import type { TypeNode } from '../patch/type-node.js';
import { smdTypeOf, type SmdType } from './smd-type.js';

/**
 * `v` as upstream's typed objects hold it: every value struct (a field whose schema default is
 * `{}`) exists, and required lists and maps (no `omitempty`) exist as null. Ownership is
 * computed between such objects, which decides whether a struct was "added" (`.` entries).
 */
export function withZeroValues(v: JsonValue | undefined, t: SmdType): JsonValue | undefined {
  if (v === null || typeof v !== 'object' || !zeroBelow(t)) return v;
  if (Array.isArray(v)) {
    const list = t.list;
    if (!list || list.atomic) return v;
    const elem = list.element();
    let out: JsonValue[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const filled = withZeroValues(v[i], elem) as JsonValue;
      if (filled !== v[i]) (out ??= v.slice())[i] = filled;
    }
    return out ?? v;
  }
  const map = t.map;
  if (!isJsonObject(v) || !map || map.atomic) return v;
  let out: JsonObject | undefined;
  // copyMembers, not `{ ...v }`: the zero fields added below are members v lacks, which a
  // spread copy takes V8's slow path for (every create and update walks its object here).
  const set = (key: string, value: JsonValue) => setMember((out ??= copyMembers(v)), key, value);
  for (const key of Object.keys(v)) {
    const ft = map.field(key) ?? map.element();
    if (!ft) continue;
    const filled = withZeroValues(v[key], ft);
    if (filled !== v[key] && filled !== undefined) set(key, filled);
  }
  for (const [key, struct] of zeroFields(map, t)) {
    if (Object.hasOwn(v, key)) continue;
    set(key, struct ? (withZeroValues({}, map.field(key)!) as JsonValue) : null);
  }
  return out ?? v;
}

// Most of an object (labels, annotations, strings, lists of scalars, many structs) holds no
// type that has zero fields; such subtrees are returned as they are without being walked.
const zeroBelowCache = new WeakMap<SmdType, boolean>();

/** Whether any type a value of type `t` may hold (itself included) has zero fields. */
function zeroBelow(t: SmdType): boolean {
  let found = zeroBelowCache.get(t);
  if (found === undefined) {
    found = reachesZeroFields(t);
    zeroBelowCache.set(t, found);
  }
  return found;
}

/** A search of the types withZeroValues would descend into from `root` (types may recur). */
function reachesZeroFields(root: SmdType): boolean {
  const seen = new Set<SmdType>();
  const stack = [root];
  while (stack.length > 0) {
    const t = stack.pop()!;
    if (seen.has(t)) continue;
    seen.add(t);
    if (t.list && !t.list.atomic) stack.push(t.list.element());
    const map = t.map;
    if (!map || map.atomic) continue;
    if (zeroFields(map, t).length > 0) return true;
    for (const name of map.fieldNames()) {
      const ft = map.field(name);
      if (ft) stack.push(ft);
    }
    const elem = map.element();
    if (elem) stack.push(elem);
  }
  return false;
}

const zeroFieldsCache = new WeakMap<SmdType, Array<[string, boolean]>>();

/**
 * The fields withZeroValues adds to a map of type `t` that lacks them: value structs (true)
 * and required lists/maps (null); none when no type below `t` has zero fields. Shared: do not
 * modify.
 */
export function zeroFieldsOf(t: SmdType): ReadonlyArray<readonly [string, boolean]> {
  const map = t.map;
  if (!map || map.atomic || !zeroBelow(t)) return NO_ZERO_FIELDS;
  return zeroFields(map, t);
}

const NO_ZERO_FIELDS: ReadonlyArray<readonly [string, boolean]> = Object.freeze([]);

const zeroStructs = new WeakMap<SmdType, JsonObject>();

/** withZeroValues({}, t), remembered per type. Shared: do not modify. */
export function zeroStructOf(t: SmdType): JsonObject {
  let z = zeroStructs.get(t);
  if (z === undefined) {
    z = withZeroValues({}, t) as JsonObject;
    zeroStructs.set(t, z);
  }
  return z;
}

/** Declared fields a Go zero value has: value structs (true) and required lists/maps (null). */
function zeroFields(map: NonNullable<SmdType['map']>, t: SmdType): Array<[string, boolean]> {
  let fields = zeroFieldsCache.get(t);
  if (!fields) {
    fields = [];
    for (const name of map.fieldNames()) {
      const ft = map.field(name);
      if (!ft) continue;
      const d = map.fieldDefault(name);
      if (ft.map && isJsonObject(d) && Object.keys(d).length === 0) fields.push([name, true]);
      else if ((ft.list || ft.map) && map.fieldRequired(name)) fields.push([name, false]);
    }
    zeroFieldsCache.set(t, fields);
  }
  return fields;
}

/** `obj` with the value structs and required lists/maps of its built-in kind materialized. */
export function withGoZeroValues(obj: JsonObject, schema: TypeNode | undefined): JsonObject {
  return withZeroValues(obj, smdTypeOf(schema)) as JsonObject;
}
