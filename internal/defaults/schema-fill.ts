// internal/defaults/schema-fill owns the defaulting that follows from the schema alone, i.e.
// what upstream's Go round trip makes visible: non-pointer structs appear as `{}`, non-omitempty
// scalars as their zero value, `+default` markers (`protocol: TCP`) are applied, nulls vanish,
// and quantities take their canonical spelling (resource lists rounded up to milli units).
// Mutates in place; idempotent.
// Imports: validation (compiled schema trees, quantity, plain-json).

import type { CompiledNode, CompiledObject } from '../validation/schema-compile.js';
import { formatQuantity, parseQuantity, roundUpQuantity } from '../validation/quantity.js';
import { isObject, cloneJson } from '../validation/plain-json.js';

// Canonical spellings of the strings seen, per rounding: every pod write respells the same few
// quantities, and formatting goes through BigInt. Bounded: cleared when full.
const CANONICAL_LIMIT = 1024;
const canonical = [new Map<string, unknown>(), new Map<string, unknown>()] as const;

function canonicalQuantityValue(v: unknown, roundToMilli: boolean): unknown {
  if (typeof v === 'number') return canonicalUncached(v, roundToMilli);
  if (typeof v !== 'string') return v;
  const seen = canonical[roundToMilli ? 1 : 0];
  let out = seen.get(v);
  if (out === undefined) {
    out = canonicalUncached(v, roundToMilli);
    if (seen.size >= CANONICAL_LIMIT) seen.clear();
    seen.set(v, out);
  }
  return out;
}

function canonicalUncached(v: string | number, roundToMilli: boolean): unknown {
  const q = parseQuantity(v);
  if (!q) return v; // validation reports it
  return formatQuantity(roundToMilli ? roundUpQuantity(q, -3) : q);
}

/** Applies schema fills to `value` (already known to match `node` loosely); returns nothing. */
export function fillFromSchema(value: unknown, node: CompiledNode): void {
  if (node.kind === 'array') {
    if (!Array.isArray(value) || node.items.kind === 'any') return;
    if (node.items.kind === 'quantity') {
      for (let i = 0; i < value.length; i++) value[i] = canonicalQuantityValue(value[i], false);
      return;
    }
    for (const item of value) fillFromSchema(item, node.items);
    return;
  }
  if (node.kind === 'object' && isObject(value)) fillObject(value, node);
}

function fillObject(obj: Record<string, unknown>, node: CompiledObject): void {
  if (node.properties.size === 0) {
    const additional = node.additional;
    if (!additional || additional.kind === 'any') return;
    if (additional.kind === 'quantity') {
      // A map of quantities is a ResourceList: upstream rounds those up to milli precision.
      for (const key of Object.keys(obj)) obj[key] = canonicalQuantityValue(obj[key], true);
      return;
    }
    for (const child of Object.values(obj)) fillFromSchema(child, additional);
    return;
  }
  for (const key of Object.keys(obj)) {
    const prop = node.properties.get(key);
    if (!prop) continue;
    const child = obj[key];
    if (child === null) {
      // Built-in kinds: null is Go's zero value, so it disappears; custom schemas keep a null
      // unless a default replaces it (upstream prunes such nulls before defaulting).
      if (prop.nullValue === 'absent' || (prop.nullValue === 'invalid' && prop.fill !== undefined)) delete obj[key];
      continue;
    }
    if (prop.node.kind === 'quantity') obj[key] = canonicalQuantityValue(child, false);
    else if (prop.node.kind === 'object' || prop.node.kind === 'array') fillFromSchema(child, prop.node);
  }
  for (const [key, fill] of node.fills) {
    if (obj[key] !== undefined) continue;
    const value = typeof fill === 'object' && fill !== null ? cloneJson(fill) : fill;
    obj[key] = value;
    if (isObject(value)) fillFromSchema(value, node.properties.get(key)!.node);
  }
}
