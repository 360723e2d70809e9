// internal/patch/merge-patch owns RFC 7386 JSON merge patch (`application/merge-patch+json`):
// `null` deletes a member, objects merge recursively, everything else (arrays included) replaces.
// Like upstream's library, nulls inside a value that replaces or adds a member are dropped
// (nulls inside objects nested in arrays too; null array elements stay). A patch that is not a
// JSON object is a 400 ("Invalid JSON Patch"), as upstream answers for null.
// Imports: patch/json-value, patch/patch-errors.

import { cloneJson, isJsonObject, type JsonObject, type JsonValue } from './json-value.js';
import { patchMalformed } from './patch-errors.js';

/** Returns `doc` with `patch` merged in; neither argument is modified. */
export function applyMergePatch(doc: JsonValue, patch: unknown): JsonValue {
  if (!isJsonObject(patch)) throw patchMalformed('Invalid JSON Patch');
  const target: JsonObject = isJsonObject(doc) ? cloneJson(doc) : {};
  mergeInto(target, patch);
  return target;
}

function mergeInto(target: JsonObject, patch: JsonObject): void {
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === undefined) continue;
    if (value === null) {
      delete target[key];
      continue;
    }
    const current = Object.hasOwn(target, key) ? target[key] : undefined;
    if (current === undefined || current === null || !isJsonObject(current)) {
      target[key] = withoutNulls(value);
    } else if (isJsonObject(value)) {
      mergeInto(current, value);
    } else {
      target[key] = cloneJson(value);
    }
  }
}

/** Copy of a value with null object members removed at every depth. */
function withoutNulls(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map((v) => (v === null ? null : withoutNulls(v)));
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const k of Object.keys(value)) {
      const v = value[k];
      if (v !== null && v !== undefined) out[k] = withoutNulls(v);
    }
    return out;
  }
  return value;
}
