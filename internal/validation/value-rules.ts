// internal/validation/value-rules owns the OpenAPI value validations of custom-resource schemas
// (maxLength, minLength, pattern, maximum/minimum and their exclusive forms, multipleOf,
// maxItems/minItems, uniqueItems, maxProperties/minProperties, and the allOf/anyOf/oneOf/not
// junctors, which structural schemas restrict to value validations): compiling them once per
// schema node, and checking a value against them with upstream's wording. Upstream runs
// kube-openapi's validator and converts its errors to field errors (apiextensions-apiserver
// validation.ValidateCustomResource): max length → TooLong, max items and max properties →
// TooMany, everything else → Invalid with kube-openapi's message, and junctor failures, which are
// not field-level errors there, → Invalid at the `<nil>` path with value "".
// Patterns run on re2js, a linear-time RE2 port: a hostile pattern or input cannot stall the
// single-threaded server as a backtracking engine would (`^(a+)+$` against `aaaa…!`).
// Imports: apierrors (FieldError), plain-json, lazy/re2js.

import type * as Re2js from 're2js';
import { re2js } from '../lazy/re2js.js';
import { fieldErrors, fieldPath, type FieldError } from '../apierrors/field-errors.js';
import { isObject, jsonEqual } from './plain-json.js';

export interface CompiledPattern {
  readonly source: string;
  readonly re: Re2js.RE2JS;
}

/** The value validations of one schema node; compiled only when the node has at least one. */
export interface ValueRules {
  readonly maxLength?: number;
  readonly minLength?: number;
  readonly pattern?: CompiledPattern;
  readonly maximum?: number;
  readonly exclusiveMaximum: boolean;
  readonly minimum?: number;
  readonly exclusiveMinimum: boolean;
  readonly multipleOf?: number;
  readonly maxItems?: number;
  readonly minItems?: number;
  readonly uniqueItems: boolean;
  readonly maxProperties?: number;
  readonly minProperties?: number;
  readonly allOf?: readonly ValueSchema[];
  readonly anyOf?: readonly ValueSchema[];
  readonly oneOf?: readonly ValueSchema[];
  readonly not?: ValueSchema;
}

/**
 * A schema under a junctor. Structural schemas allow only value validations there (no type,
 * default, nullable or x-kubernetes markers), plus properties/items/additionalProperties that
 * mirror the main schema, so such a schema checks values but never types.
 */
export interface ValueSchema {
  readonly rules: ValueRules | undefined;
  readonly enumValues: readonly unknown[] | undefined;
  readonly required: readonly string[];
  readonly properties: ReadonlyMap<string, ValueSchema> | undefined;
  readonly items: ValueSchema | undefined;
  readonly additional: ValueSchema | undefined;
}

/** JSON-ish schema input: the custom resource's openAPIV3Schema, node by node. */
type RawSchema = Record<string, unknown>;

const PATTERN_CACHE_LIMIT = 1024;
const patternCache = new Map<string, CompiledPattern | Error>();

/**
 * Compiles a pattern as Go's regexp.Compile would (RE2 syntax), or returns the RE2 parse error,
 * whose text follows Go's (`error parsing regexp: missing closing ]: `[``). Cached: every CRD
 * version's schema compiles on each change, and CRD validation checks the same patterns again.
 */
export function compilePattern(source: string): CompiledPattern | Error {
  const cached = patternCache.get(source);
  if (cached) return cached;
  let result: CompiledPattern | Error;
  try {
    result = { source, re: re2js().RE2JS.compile(source) };
  } catch (e) {
    result = e instanceof Error ? e : new Error(String(e));
  }
  if (patternCache.size >= PATTERN_CACHE_LIMIT) patternCache.clear();
  patternCache.set(source, result);
  return result;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * The rules of one raw schema node, or undefined when it has none (the common case, so walking
 * a node costs one property test). A pattern that does not compile is left out: CRD validation
 * refuses it, and a definition stored before that rule cannot make every write fail.
 */
export function compileValueRules(schema: RawSchema): ValueRules | undefined {
  let pattern: CompiledPattern | undefined;
  if (typeof schema.pattern === 'string' && schema.pattern !== '') {
    const c = compilePattern(schema.pattern);
    if (!(c instanceof Error)) pattern = c;
  }
  const junctor = (key: string): ValueSchema[] | undefined => {
    const list = schema[key];
    return Array.isArray(list) && list.length > 0 ? list.filter(isObject).map(compileValueSchema) : undefined;
  };
  const rules: ValueRules = {
    maxLength: num(schema.maxLength),
    minLength: num(schema.minLength),
    pattern,
    maximum: num(schema.maximum),
    exclusiveMaximum: schema.exclusiveMaximum === true,
    minimum: num(schema.minimum),
    exclusiveMinimum: schema.exclusiveMinimum === true,
    multipleOf: num(schema.multipleOf),
    maxItems: num(schema.maxItems),
    minItems: num(schema.minItems),
    uniqueItems: schema.uniqueItems === true,
    maxProperties: num(schema.maxProperties),
    minProperties: num(schema.minProperties),
    allOf: junctor('allOf'),
    anyOf: junctor('anyOf'),
    oneOf: junctor('oneOf'),
    not: isObject(schema.not) ? compileValueSchema(schema.not) : undefined,
  };
  const any =
    rules.uniqueItems ||
    rules.pattern !== undefined ||
    [rules.maxLength, rules.minLength, rules.maximum, rules.minimum, rules.multipleOf, rules.maxItems, rules.minItems, rules.maxProperties, rules.minProperties].some(
      (n) => n !== undefined,
    ) ||
    rules.allOf !== undefined ||
    rules.anyOf !== undefined ||
    rules.oneOf !== undefined ||
    rules.not !== undefined;
  return any ? rules : undefined;
}

function compileValueSchema(schema: RawSchema): ValueSchema {
  const props = isObject(schema.properties) ? schema.properties : undefined;
  return {
    rules: compileValueRules(schema),
    enumValues: Array.isArray(schema.enum) ? schema.enum : undefined,
    required: Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === 'string') : [],
    properties: props
      ? new Map(Object.entries(props).flatMap(([k, s]) => (isObject(s) ? [[k, compileValueSchema(s)] as const] : [])))
      : undefined,
    items: isObject(schema.items) ? compileValueSchema(schema.items) : undefined,
    additional: isObject(schema.additionalProperties) ? compileValueSchema(schema.additionalProperties) : undefined,
  };
}

/**
 * A float64 as Go's `%v` prints it: `%g` with the shortest round-trip digits, which switches to
 * the exponent form when the decimal exponent is below -4 or at least 6 (1e+06, 2.5e-05).
 */
export function goFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (!Number.isFinite(f)) return f > 0 ? '+Inf' : '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const [mantissa, expText] = f.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    const digits = String(Math.abs(exp)).padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(f);
}

/** Upstream's message subject: the kube-openapi path, then " in body". */
const subject = (path: string): string => `${path} in body`;

/** Code points, as Go's utf8.RuneCountInString counts them (UTF-16 length is an upper bound). */
function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** swag.IsFloat64AJSONInteger's test: integral within a relative epsilon. */
function isIntegral(f: number): boolean {
  if (!Number.isFinite(f)) return false;
  const g = Math.trunc(f);
  if (f === g) return true;
  const diff = Math.abs(f - g);
  return diff / (Math.abs(f) + Math.abs(g)) < 1e-9;
}

/**
 * Junctor errors are not kube-openapi Validation errors, so upstream reports them against the
 * root path it was given: none, printed by Go as `<nil>`.
 */
const JUNCTOR_FIELD = '<nil>';
const junctorError = (detail: string): FieldError => fieldErrors.invalid(JUNCTOR_FIELD, '', detail);
/** Go's %q of the kube-openapi path. */
const quotedPath = (path: string): string => JSON.stringify(path);

/** One value's scalar (string and number) rules, in kube-openapi's order. */
function scalarRules(v: unknown, r: ValueRules, path: string, out: FieldError[]): void {
  if (typeof v === 'string') {
    // kube-openapi's string validator stops at its first failure.
    if (r.maxLength !== undefined && v.length > r.maxLength && runeCount(v) > r.maxLength) {
      out.push(fieldErrors.tooLong(path, r.maxLength));
    } else if (r.minLength !== undefined && runeCount(v) < r.minLength) {
      out.push(fieldErrors.invalid(path, v, `${subject(path)} should be at least ${r.minLength} chars long`));
    } else if (r.pattern !== undefined && !r.pattern.re.matcher(v).find()) {
      out.push(fieldErrors.invalid(path, v, `${subject(path)} should match '${r.pattern.source}'`));
    }
    return;
  }
  if (typeof v !== 'number') return;
  // Unstructured JSON decodes integers as int64: kube-openapi then compares in int64, with the
  // bound truncated, and prints bounds as integers; other numbers compare and print as float64.
  const int = Number.isInteger(v);
  const bound = (b: number): number => (int ? Math.trunc(b) : b);
  const show = (b: number): string => (int ? String(Math.trunc(b)) : goFloat(b));
  if (r.multipleOf !== undefined && r.multipleOf > 0) {
    const f = r.multipleOf;
    const failed = int && Number.isInteger(f) ? v % f !== 0 : !isIntegral(f < 1 ? (1 / f) * v : v / f);
    if (failed) out.push(fieldErrors.invalid(path, v, `${subject(path)} should be a multiple of ${int && Number.isInteger(f) ? String(f) : goFloat(f)}`));
  }
  if (r.minimum !== undefined) {
    const m = bound(r.minimum);
    if (r.exclusiveMinimum ? v <= m : v < m) {
      out.push(fieldErrors.invalid(path, v, `${subject(path)} should be greater than ${r.exclusiveMinimum ? '' : 'or equal to '}${show(r.minimum)}`));
    }
  }
  if (r.maximum !== undefined) {
    const m = bound(r.maximum);
    if (r.exclusiveMaximum ? v >= m : v > m) {
      out.push(fieldErrors.invalid(path, v, `${subject(path)} should be less than ${r.exclusiveMaximum ? '' : 'or equal to '}${show(r.maximum)}`));
    }
  }
}

function arrayRules(v: unknown[], r: ValueRules, path: string, out: FieldError[]): void {
  if (r.minItems !== undefined && v.length < r.minItems) {
    out.push(fieldErrors.invalid(path, v.length, `${subject(path)} should have at least ${r.minItems} items`));
  }
  if (r.maxItems !== undefined && v.length > r.maxItems) out.push(fieldErrors.tooMany(path, v.length, r.maxItems));
  if (r.uniqueItems && v.length > 1) {
    const seen = new Set<string>();
    for (const item of v) {
      // Key order does not make objects different: compare a canonical form.
      const key = canonicalJson(item);
      if (seen.has(key)) {
        out.push(fieldErrors.invalid(path, '', `${subject(path)} shouldn't contain duplicates`));
        break;
      }
      seen.add(key);
    }
  }
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * Checks the rules of one node against a non-null value, appending to `out`. Returns false when
 * an object's property count is out of bounds: kube-openapi's object validator then reports only
 * that and does not look at the object's fields.
 */
export function checkValueRules(v: unknown, r: ValueRules, path: string, out: FieldError[]): boolean {
  if (r.allOf || r.anyOf || r.oneOf || r.not) junctors(v, r, path, out);
  if (Array.isArray(v)) {
    arrayRules(v, r, path, out);
    return true;
  }
  if (isObject(v)) {
    if (r.minProperties === undefined && r.maxProperties === undefined) return true;
    const n = Object.keys(v).length;
    if (r.minProperties !== undefined && n < r.minProperties) {
      out.push(fieldErrors.invalid(path, n, `${subject(path)} should have at least ${r.minProperties} properties`));
      return false;
    }
    if (r.maxProperties !== undefined && n > r.maxProperties) {
      out.push(fieldErrors.tooMany(path, n, r.maxProperties));
      return false;
    }
    return true;
  }
  scalarRules(v, r, path, out);
  return true;
}

/** All errors of a value against a junctor's schema (value validations only, no types). */
function checkValueSchema(v: unknown, s: ValueSchema, path: string, out: FieldError[]): void {
  if (v === null || v === undefined) return;
  if (s.rules && !checkValueRules(v, s.rules, path, out)) return;
  if (s.enumValues && !s.enumValues.some((e) => jsonEqual(e, v))) {
    out.push(fieldErrors.notSupported(path, v, s.enumValues.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))));
  }
  if (Array.isArray(v)) {
    if (s.items) for (let i = 0; i < v.length; i++) checkValueSchema(v[i], s.items, fieldPath.index(path, i), out);
    return;
  }
  if (!isObject(v)) return;
  for (const key of s.required) if (!(key in v)) out.push(fieldErrors.required(fieldPath.child(path, key), ''));
  if (s.properties) {
    for (const [key, sub] of s.properties) if (key in v) checkValueSchema(v[key], sub, fieldPath.child(path, key), out);
  }
  if (s.additional) {
    for (const [key, child] of Object.entries(v)) {
      if (!s.properties?.has(key)) checkValueSchema(child, s.additional, fieldPath.key(path, key), out);
    }
  }
}

function branch(v: unknown, s: ValueSchema, path: string): FieldError[] {
  const errs: FieldError[] = [];
  checkValueSchema(v, s, path, errs);
  return errs;
}

/**
 * allOf/anyOf/oneOf/not as kube-openapi's schema-props validator applies them. Where it reports
 * the "best" failing alternative (the one with the most passing checks), this reports the one
 * with the fewest errors, the first on a tie: the same choice whenever alternatives check the
 * same number of keywords, which is the usual shape.
 */
function junctors(v: unknown, r: ValueRules, path: string, out: FieldError[]): void {
  const fewest = (results: FieldError[][]): FieldError[] =>
    results.reduce<FieldError[] | undefined>((best, e) => (best === undefined || e.length < best.length ? e : best), undefined) ?? [];
  if (r.anyOf) {
    const results: FieldError[][] = [];
    let ok = false;
    for (const s of r.anyOf) {
      const e = branch(v, s, path);
      if (e.length === 0) {
        ok = true;
        break;
      }
      results.push(e);
    }
    if (!ok) {
      out.push(junctorError(`${quotedPath(path)} must validate at least one schema (anyOf)`));
      out.push(...fewest(results));
    }
  }
  if (r.oneOf) {
    const results: FieldError[][] = [];
    let valid = 0;
    for (const s of r.oneOf) {
      const e = branch(v, s, path);
      if (e.length === 0) valid++;
      else results.push(e);
    }
    if (valid !== 1) {
      const more = valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`;
      out.push(junctorError(`${quotedPath(path)} must validate one and only one schema (oneOf). ${more}`));
      if (valid === 0) out.push(...fewest(results));
    }
  }
  if (r.allOf) {
    let valid = 0;
    for (const s of r.allOf) {
      const e = branch(v, s, path);
      if (e.length === 0) valid++;
      out.push(...e);
    }
    if (valid !== r.allOf.length) {
      out.push(junctorError(`${quotedPath(path)} must validate all the schemas (allOf)${valid === 0 ? '. None validated' : ''}`));
    }
  }
  if (r.not && branch(v, r.not, path).length === 0) {
    out.push(junctorError(`${quotedPath(path)} must not validate the schema (not)`));
  }
}
