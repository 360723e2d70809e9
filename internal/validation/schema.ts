// internal/validation/schema owns checking objects against their OpenAPI schema (spec §4.8,
// issue 6 §4–5): types, required properties, enums, formats (int32/int64 ranges, date-time,
// base64 bytes), int-or-string, quantities and list-map/set uniqueness, one FieldError per field
// path; and the unknown-field handling of `fieldValidation` (find, or prune and report, the
// fields the schema does not declare). Null counts as absent, as Go's decoder treats it for
// built-in kinds. Trees come compiled and cached from schema-compile.
// Imports: apierrors (FieldError), naming (Naming type), schema-compile, quantity, plain-json.

import { fieldErrors, fieldPath, type FieldError } from '../apierrors/field-errors.js';
import type { Naming } from '../naming/naming.js';
import { builtinCompiler, type CompiledArray, type CompiledNode, type CompiledObject, type SchemaCompiler } from './schema-compile.js';
import { parseQuantity, QUANTITY_FORMAT_MESSAGE } from './quantity.js';
import { isObject } from './plain-json.js';
import { checkValueRules } from './value-rules.js';

export interface SchemaOptions {
  /** Naming of the served API: spelling of `x-…` properties inside CRD schemas. */
  readonly naming?: Naming;
  /** Another compiler (custom-resource schemas); the built-in one by default. */
  readonly compiler?: SchemaCompiler;
}

const compilerOf = (opts?: SchemaOptions): SchemaCompiler => opts?.compiler ?? builtinCompiler(opts?.naming);

function rootNode(schemaName: string, opts?: SchemaOptions): CompiledNode {
  const node = compilerOf(opts).named(schemaName);
  if (!node) throw new Error(`unknown schema ${schemaName}`);
  return node;
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
// JSON numbers beyond ±2^63 cannot be int64 values; below that, JS doubles are what we have.
const INT64_LIMIT = 2 ** 63;

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/**
 * Timestamps that passed. Every write carries this second's timestamps several times, and an
 * update also the object's creation time and its managers' times, which pods created in the same
 * second share: one remembered value kept missing. Bounded (cleared when full), as the other
 * validation memos.
 */
const validTimestamps = new Set<string>();
const VALID_TIMESTAMPS_MAX = 256;

export function isRFC3339(value: string): boolean {
  if (validTimestamps.has(value)) return true;
  const m = RFC3339_RE.exec(value);
  if (!m) return false;
  const y = +m[1]!;
  const mo = +m[2]!;
  const d = +m[3]!;
  if (mo < 1 || mo > 12 || d < 1 || +m[4]! > 23 || +m[5]! > 59 || +m[6]! > 60) return false;
  const leap = mo === 2 && ((y % 4 === 0 && y % 100 !== 0) || y % 400 === 0);
  if (d > DAYS_IN_MONTH[mo - 1]! + (leap ? 1 : 0)) return false;
  if (validTimestamps.size >= VALID_TIMESTAMPS_MAX) validTimestamps.clear();
  validTimestamps.add(value);
  return true;
}

/** Standard padded base64; CR and LF are ignored as Go's decoder does. */
export function isBase64(value: string): boolean {
  const compact = value.includes('\n') || value.includes('\r') ? value.replace(/[\r\n]/g, '') : value;
  return BASE64_RE.test(compact);
}

/** Decoded length of valid standard base64. */
export function base64DecodedLength(value: string): number {
  const compact = value.replace(/[\r\n]/g, '');
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  return (compact.length / 4) * 3 - padding;
}

const jsonTypeName = (v: unknown): string => {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
};

/** Upstream's (kube-openapi's) type error: the value is the actual type's name. */
function typeError(path: string, expected: string, value: unknown): FieldError {
  const actual = jsonTypeName(value);
  return fieldErrors.typeInvalid(path, actual, `${path || 'body'} in body must be of type ${expected}: "${actual}"`);
}

const expectedTypeName = (node: CompiledNode): string => {
  switch (node.kind) {
    case 'int-or-string':
      return 'integer,string';
    case 'quantity':
      return 'string,number';
    case 'any':
      return 'any';
    default:
      return node.kind;
  }
};

function enumError(path: string, value: unknown, values: ReadonlySet<unknown>): FieldError {
  return fieldErrors.notSupported(path, value, [...values].map((v) => (typeof v === 'string' ? v : JSON.stringify(v))));
}

/** How a path segment joins its parent: `.name`, `[index]` or `[mapKey]` (fieldPath's forms). */
const CHILD = 0;
const INDEX = 1;
const KEY = 2;

class Walker {
  readonly errors: FieldError[] = [];
  // The path of the value being checked, as segments: the string is only built for an error
  // (this walk visits every value of every write, and most writes have no error).
  private readonly segments: (string | number)[] = [];
  private readonly joins: number[] = [];

  constructor(private readonly root: string) {}

  private path(): string {
    let p = this.root;
    for (let i = 0; i < this.segments.length; i++) {
      const s = this.segments[i]!;
      const j = this.joins[i]!;
      p = j === CHILD ? fieldPath.child(p, s as string) : j === INDEX ? fieldPath.index(p, s as number) : fieldPath.key(p, s as string);
    }
    return p;
  }

  private enter(segment: string | number, join: number): void {
    this.segments.push(segment);
    this.joins.push(join);
  }

  private leave(): void {
    this.segments.pop();
    this.joins.pop();
  }

  value(v: unknown, node: CompiledNode): void {
    if (v === null || v === undefined) return;
    // One property test on the hot path; only custom-resource schemas carry rules.
    if (node.rules !== undefined && !checkValueRules(v, node.rules, this.path(), this.errors)) return;
    this.typed(v, node);
  }

  private typed(v: unknown, node: CompiledNode): void {
    switch (node.kind) {
      case 'any':
        return;
      case 'string':
        if (typeof v !== 'string') return void this.errors.push(typeError(this.path(), 'string', v));
        if (node.enumValues && !node.enumValues.has(v)) return void this.errors.push(enumError(this.path(), v, node.enumValues));
        if (node.format === 'date-time' && !isRFC3339(v)) {
          const path = this.path();
          this.errors.push(fieldErrors.invalid(path, v, `${path} in body must be of type date-time: "${v}"`));
        } else if (node.format === 'byte' && !isBase64(v)) {
          const path = this.path();
          this.errors.push(fieldErrors.invalid(path, v, `${path} in body must be of type byte: "${v.length > 64 ? `${v.slice(0, 64)}…` : v}"`));
        }
        return;
      case 'integer':
        if (typeof v !== 'number' || !Number.isInteger(v)) return void this.errors.push(typeError(this.path(), 'integer', v));
        if (node.bits === 32 ? v < INT32_MIN || v > INT32_MAX : Math.abs(v) >= INT64_LIMIT) {
          const path = this.path();
          this.errors.push(fieldErrors.invalid(path, v, `${path} in body must be of type int${node.bits}: "${v}"`));
        } else if (node.enumValues && !node.enumValues.has(v)) {
          this.errors.push(enumError(this.path(), v, node.enumValues));
        }
        return;
      case 'number':
        if (typeof v !== 'number') return void this.errors.push(typeError(this.path(), 'number', v));
        if (node.enumValues && !node.enumValues.has(v)) this.errors.push(enumError(this.path(), v, node.enumValues));
        return;
      case 'boolean':
        if (typeof v !== 'boolean') this.errors.push(typeError(this.path(), 'boolean', v));
        return;
      case 'int-or-string':
        if (typeof v === 'string') return;
        if (typeof v !== 'number' || !Number.isInteger(v)) return void this.errors.push(typeError(this.path(), 'integer,string', v));
        if (v < INT32_MIN || v > INT32_MAX) {
          const path = this.path();
          this.errors.push(fieldErrors.invalid(path, v, `${path} in body must be of type int32: "${v}"`));
        }
        return;
      case 'quantity':
        if (typeof v !== 'string' && typeof v !== 'number') return void this.errors.push(typeError(this.path(), 'string,number', v));
        if (!parseQuantity(v)) this.errors.push(fieldErrors.invalid(this.path(), v, QUANTITY_FORMAT_MESSAGE));
        return;
      case 'array':
        return this.array(v, node);
      case 'object':
        return this.object(v, node);
    }
  }

  private object(v: unknown, node: CompiledObject): void {
    if (!isObject(v)) return void this.errors.push(typeError(this.path(), 'object', v));
    for (const key of node.required) {
      if (v[key] === undefined || v[key] === null) this.errors.push(fieldErrors.required(fieldPath.child(this.path(), key), ''));
    }
    if (node.properties.size > 0) {
      for (const key in v) {
        const prop = node.properties.get(key);
        if (!prop) continue;
        const child = v[key];
        this.enter(key, CHILD);
        if (child === null && prop.nullValue === 'invalid') this.errors.push(typeError(this.path(), expectedTypeName(prop.node), null));
        else this.value(child, prop.node);
        this.leave();
      }
    } else if (node.additional && (node.additional.kind !== 'any' || node.additional.rules || node.additionalNull === 'invalid')) {
      for (const key in v) {
        const child = v[key];
        this.enter(key, KEY);
        if (child === null && node.additionalNull === 'invalid') this.errors.push(typeError(this.path(), expectedTypeName(node.additional), null));
        else this.value(child, node.additional);
        this.leave();
      }
    }
  }

  private array(v: unknown, node: CompiledArray): void {
    if (!Array.isArray(v)) return void this.errors.push(typeError(this.path(), 'array', v));
    if (node.items.kind !== 'any' || node.items.rules || node.itemNull === 'invalid') {
      for (let i = 0; i < v.length; i++) {
        this.enter(i, INDEX);
        if (v[i] === null && node.itemNull === 'invalid') this.errors.push(typeError(this.path(), expectedTypeName(node.items), null));
        else this.value(v[i], node.items);
        this.leave();
      }
    }
    if (node.skipUniqueness || v.length < 2) return;
    if (node.listType === 'set') {
      const seen = new Set<string>();
      v.forEach((item, i) => {
        const key = JSON.stringify(item);
        if (seen.has(key)) this.errors.push(fieldErrors.duplicate(fieldPath.index(this.path(), i), item));
        seen.add(key);
      });
    } else if (node.listType === 'map' && node.mapKeys.length > 0) {
      const seen = new Set<string>();
      v.forEach((item, i) => {
        if (!isObject(item)) return;
        // Items missing a key field are reported by `required` (or defaulted); not a duplicate.
        if (node.mapKeys.some((k) => item[k] === undefined || item[k] === null)) return;
        const keyObj = Object.fromEntries(node.mapKeys.map((k) => [k, item[k]]));
        const key = JSON.stringify(keyObj);
        if (seen.has(key)) this.errors.push(fieldErrors.duplicate(fieldPath.index(this.path(), i), keyObj));
        seen.add(key);
      });
    }
  }
}

/** Validates a value against a compiled node; paths start at `path` ('' for a whole object). */
export function validateNode(value: unknown, node: CompiledNode, path = ''): FieldError[] {
  const w = new Walker(path);
  w.value(value, node);
  return w.errors;
}

/**
 * Validates a whole object against its component schema (for example
 * `io.k8s.api.apps.v1.Deployment`). Run defaulting first: built-in schemas mark some fields
 * required that upstream fills before validating. Throws only for an unknown schema name (a
 * programming error); bad input yields FieldErrors.
 */
export function validateAgainstSchema(schemaName: string, obj: unknown, opts?: SchemaOptions): FieldError[] {
  return validateNode(obj, rootNode(schemaName, opts));
}

/**
 * Visits every field the schema does not declare; `remove` drops each one from its parent.
 * Every write's body is walked, and most have no unknown field: the path of the value being
 * visited is kept as segments (a key, or an item's index) and only spelled out for a report.
 */
class UnknownWalk {
  readonly out: string[] = [];
  private readonly segments: (string | number)[] = [];

  constructor(private readonly remove: boolean) {}

  private path(key: string): string {
    let p = '';
    for (const s of this.segments) p = typeof s === 'number' ? `${p}[${s}]` : `${p}.${s}`;
    return `${p}.${key}`;
  }

  visit(v: unknown, node: CompiledNode): void {
    if (node.kind === 'array') {
      if (!Array.isArray(v) || node.items.kind === 'any') return;
      for (let i = 0; i < v.length; i++) {
        this.segments.push(i);
        this.visit(v[i], node.items);
        this.segments.pop();
      }
      return;
    }
    if (node.kind !== 'object' || !isObject(v)) return;
    if (node.properties.size === 0 && node.additional) {
      const additional = node.additional;
      if (additional.kind !== 'any') {
        for (const key in v) {
          this.segments.push(key);
          this.visit(v[key], additional);
          this.segments.pop();
        }
      }
      return;
    }
    // Keys are listed first: an unknown one may be deleted on the way.
    for (const key of Object.keys(v)) {
      const prop = node.properties.get(key);
      if (prop) {
        const child = v[key];
        // Only objects and arrays can hold fields.
        if (typeof child !== 'object' || child === null) continue;
        this.segments.push(key);
        this.visit(child, prop.node);
        this.segments.pop();
      } else if (!node.preserveUnknown && !(node.embedded && (key === 'apiVersion' || key === 'kind' || key === 'metadata'))) {
        this.out.push(this.path(key));
        if (this.remove) delete v[key];
      }
    }
  }
}

/**
 * Paths of the fields `obj` carries that its schema does not declare, in document order, each
 * with a leading dot (`.spec.foo`, `.spec.containers[0].bar`, map entries as `.key`). Fields under
 * free-form or preserve-unknown-fields schemas (RawExtension, CRD opt-outs) are never unknown.
 */
export function findUnknownFields(schemaName: string, obj: unknown, opts?: SchemaOptions): string[] {
  const w = new UnknownWalk(false);
  w.visit(obj, rootNode(schemaName, opts));
  return w.out;
}

/**
 * Removes the undeclared fields from `obj` in place (fieldValidation Ignore and Warn) and returns
 * their paths in the form findUnknownFields uses.
 */
export function pruneUnknownFields(schemaName: string, obj: unknown, opts?: SchemaOptions): string[] {
  const w = new UnknownWalk(true);
  w.visit(obj, rootNode(schemaName, opts));
  return w.out;
}

/** The text upstream puts in a `Warning: 299 - "…"` header for one unknown field. */
export const unknownFieldWarning = (path: string): string => `unknown field "${path.startsWith('.') ? path.slice(1) : path}"`;
