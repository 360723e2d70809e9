// internal/validation/plain-json owns the small type guards and readers used to walk objects in
// their JSON form (what the codecs produce): records, arrays, strings and numbers, where a value
// of the wrong type reads as absent. Type errors themselves are reported by schema validation;
// the per-kind rules only need to not crash on them.
// Imports: patch/json-value (setMember).

import { setMember } from '../patch/json-value.js';

/** A JSON object (not null, not an array). */
export type JsonObject = Record<string, unknown>;

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

export const objectAt = (v: unknown, key: string): JsonObject | undefined => {
  if (!isObject(v)) return undefined;
  const child = v[key];
  return isObject(child) ? child : undefined;
};

export const arrayAt = (v: unknown, key: string): unknown[] | undefined => {
  if (!isObject(v)) return undefined;
  const child = v[key];
  return Array.isArray(child) ? child : undefined;
};

/** The string at `key`, or '' when absent or not a string. */
export const str = (v: unknown, key: string): string => {
  if (!isObject(v)) return '';
  const child = v[key];
  return typeof child === 'string' ? child : '';
};

/** The list at `key`, or [] when absent or not a list. */
export const list = (v: unknown, key: string): unknown[] => arrayAt(v, key) ?? [];

/** The object elements of a list (other elements are the schema's to report). */
export const objectsIn = (items: unknown[] | undefined): JsonObject[] => (items ?? []).filter(isObject);

/** Whether `key` holds a value other than null. */
export const has = (v: unknown, key: string): boolean => isObject(v) && v[key] !== undefined && v[key] !== null;

/** Absent and null are the same thing to the API (Go decodes both to the zero value). */
export const isAbsent = (v: unknown): boolean => v === undefined || v === null;

/** Absent or the empty string: what upstream's defaulters treat as unset for string fields. */
export const isBlank = (v: unknown): boolean => isAbsent(v) || v === '';

const isEmptyList = (v: unknown): boolean => isAbsent(v) || (Array.isArray(v) && v.length === 0);

/**
 * Structural equality of JSON values the way upstream's semantic equality sees them: absent ≡ null
 * ≡ missing key, and an empty list ≡ no list (Go's nil and empty slices compare equal there).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (isEmptyList(a) && isEmptyList(b)) return true;
  if (a === b) return true;
  if (typeof a !== typeof b || isAbsent(a) || isAbsent(b)) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!jsonEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
}

// Below this depth a copy recurses itself; deeper subtrees (bodies may nest 10,000 levels) go
// to structuredClone, which does not overflow the stack.
const CLONE_RECURSION_LIMIT = 256;

/**
 * Deep copy of a JSON value. Plain objects, arrays and primitives are copied directly (several
 * times faster than structuredClone, and this runs on every write); anything else the codecs
 * may produce (byte arrays, dates) and very deep subtrees are left to structuredClone.
 */
export const cloneJson = <T>(v: T): T => copyJson(v, 0) as T;

function copyJson(v: unknown, depth: number): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (depth >= CLONE_RECURSION_LIMIT) return structuredClone(v);
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = copyJson(v[i], depth + 1);
    return out;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const c = copyJson((v as Record<string, unknown>)[k], depth + 1);
    // A "__proto__" member (JSON.parse makes it an own property) must stay data, not a prototype.
    setMember(out, k, c);
  }
  return out;
}
