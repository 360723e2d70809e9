// internal/patch/json-value owns the plain-JSON vocabulary the merge engines work on: the value
// type, object tests, a deep copy and a deep equality that treat objects as JSON objects
// (own enumerable keys, no prototypes). The engines never mutate their inputs; they copy first.
// Imports: nothing from the project.

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export const isJsonObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Deep copy of a JSON value; `undefined` members are dropped as JSON would drop them. */
export function cloneJson<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = cloneJson(v[i]);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const child = (v as Record<string, unknown>)[k];
    if (child !== undefined) out[k] = cloneJson(child);
  }
  return out as T;
}

/**
 * A shallow copy of `obj` that members can be added to cheaply. V8 gives an object made by
 * `{ ...obj }` a shape on which each member it did not have takes a slow path (about half a
 * microsecond a member, against tens of nanoseconds here), so code that copies an object in
 * order to add members copies with this. A member named __proto__ stays a member.
 */
export function copyMembers<V>(obj: Record<string, V>): Record<string, V> {
  const out: Record<string, V> = {};
  for (const k of Object.keys(obj)) setMember(out, k, obj[k]!);
  return out;
}

/**
 * A shallow copy of `obj` without its member `key`, by hand: V8 runs a rest pattern that leaves
 * a key out in its runtime, and a spread copy followed by `delete` turns into a dictionary.
 */
export function withoutMember<V>(obj: Record<string, V>, key: string): Record<string, V> {
  const out: Record<string, V> = {};
  for (const k of Object.keys(obj)) if (k !== key) setMember(out, k, obj[k]!);
  return out;
}

/**
 * `obj[key] = value` as an own member, also for a key named __proto__ (JSON.parse and the
 * decoders make those): plain assignment would set the prototype instead. Every decoder and
 * copier of JSON-like objects sets members through this.
 */
export function setMember<V>(obj: Record<string, V>, key: string, value: V): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

/** Structural equality of JSON values (object key order does not matter). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let n = 0;
  for (const k in ao) {
    if (!Object.hasOwn(ao, k)) continue;
    n++;
    if (!Object.hasOwn(bo, k) || !jsonEqual(ao[k], bo[k])) return false;
  }
  for (const k in bo) if (Object.hasOwn(bo, k)) n--;
  return n === 0;
}

/** The JSON type name Go's decoder prints in "cannot unmarshal X into …" messages. */
export function jsonTypeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'object':
      return 'object';
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    default:
      return typeof v;
  }
}
