// internal/validation/crd-cel owns the CEL validation rules of custom resources
// (`x-kubernetes-validations`, `x-cluster-validations` under --naming=cluster) as upstream 1.32
// has them: compiled once per CRD version (rule, message, messageExpression, reason, fieldPath,
// optionalOldSelf; transition rules with oldSelf), their estimated costs checked against
// upstream's limits when the CRD is written, and evaluated on writes after schema validation
// with upstream's per-request budget, its error wording, and ratcheting (a rule on a value that
// did not change does not fail an update). Also the CRD-time checks that need rules and schema
// validation together: defaults checked against their schema and rules, `uniqueItems` refused.
// Imports: internal/cel, apierrors, plain-json, schema-compile, schema.

import { Optional } from '@marcbachmann/cel-js';
import {
  type CompiledExpression,
  CelCompileError,
  CelCostLimitError,
  CostMeter,
  DYN,
  PER_CALL_LIMIT,
  RUNTIME_CEL_COST_BUDGET,
  SCALAR,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
  type Shape,
  compileExpression,
  kubernetesCelEnvironment,
  listShape,
  mapShape,
  stringShape,
  unboundedCount,
  type Environment,
} from '../cel/cel.js';
import { fieldErrorBody, fieldErrors, fieldPath, type FieldError } from '../apierrors/field-errors.js';
import type { Naming } from '../naming/naming.js';
import type { SchemaNode } from '../schema/openapi-index.js';
import { isObject, jsonEqual, type JsonObject } from './plain-json.js';
import { CUSTOM_ROOT_SCHEMA, customSchemaCompiler } from './schema-compile.js';
import { validateNode } from './schema.js';

const REASONS = ['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'] as const;
type Reason = (typeof REASONS)[number];

interface CompiledRule {
  readonly raw: JsonObject;
  readonly rule: CompiledExpression;
  readonly message?: string;
  readonly messageExpression?: CompiledExpression;
  readonly reason?: Reason;
  /** Relative path the error is reported at (`.spec.x` → `spec.x`). */
  readonly fieldPath?: string;
  readonly usesOldSelf: boolean;
  readonly optionalOldSelf: boolean;
}

/** The rules of one schema node and of the nodes below it that have rules. */
export interface RuleNode {
  readonly schema: JsonObject;
  /** The word upstream quotes as the value of a failed rule: `object`, `array`, `string`, … */
  readonly typeWord: string;
  readonly rules: readonly CompiledRule[];
  readonly properties: ReadonlyMap<string, RuleNode>;
  readonly items?: RuleNode;
  readonly additional?: RuleNode;
  /** `map` lists correlate old and new items by their keys; others do not correlate. */
  readonly listMapKeys?: readonly string[];
  readonly listSet: boolean;
}

export interface CompileResult {
  /** Undefined when the schema has no rules anywhere. */
  readonly root?: RuleNode;
  readonly errors: FieldError[];
}

const envCache = new Map<string, Environment>();
const MAX_MOST_EXPENSIVE = 4;

function celType(schema: JsonObject, ext: string): string {
  if (schema[`${ext}int-or-string`] === true) return 'dyn';
  switch (schema.type) {
    case 'object':
      return 'map';
    case 'array':
      return 'list';
    case 'string':
      return 'string';
    case 'integer':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    default:
      return 'dyn';
  }
}

function envFor(selfType: string, optionalOldSelf: boolean): Environment {
  const key = `${selfType}|${optionalOldSelf}`;
  let env = envCache.get(key);
  if (!env) {
    env = kubernetesCelEnvironment({ self: selfType, oldSelf: optionalOldSelf ? `optional<${selfType}>` : selfType });
    envCache.set(key, env);
  }
  return env;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/** The largest values a schema node allows, for the cost estimate. */
export function shapeOf(schema: JsonObject, ext: string): Shape {
  if (schema[`${ext}int-or-string`] === true) return DYN;
  switch (schema.type) {
    case 'string': {
      const max = num(schema.maxLength);
      if (max !== undefined) return stringShape(max);
      if (Array.isArray(schema.enum)) return stringShape(Math.max(0, ...schema.enum.map((e) => String(e).length)));
      if (schema.format === 'date-time' || schema.format === 'date' || schema.format === 'duration') return stringShape(64);
      return stringShape();
    }
    case 'array':
      return listShape(isObject(schema.items) ? shapeOf(schema.items, ext) : DYN, num(schema.maxItems));
    case 'object': {
      const fields: Record<string, Shape> = {};
      if (isObject(schema.properties)) for (const [k, v] of Object.entries(schema.properties)) if (isObject(v)) fields[k] = shapeOf(v, ext);
      const additional = isObject(schema.additionalProperties) ? shapeOf(schema.additionalProperties, ext) : schema[`${ext}preserve-unknown-fields`] === true ? DYN : undefined;
      return mapShape(fields, additional, num(schema.maxProperties));
    }
    case 'integer':
    case 'number':
    case 'boolean':
      return SCALAR;
    default:
      return DYN;
  }
}

function usesOldSelf(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(usesOldSelf);
  if (node && typeof node === 'object' && 'op' in node && 'args' in node) {
    const n = node as { op: string; args: unknown };
    if (n.op === 'id' && n.args === 'oldSelf') return true;
    return usesOldSelf(n.args);
  }
  return false;
}

/** Upstream's cost message. */
function costMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const f = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${f} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/** Go's %#v of a ValidationRule, as upstream quotes the rule in compile errors. */
function goRule(raw: JsonObject): string {
  const s = (v: unknown) => JSON.stringify(typeof v === 'string' ? v : '');
  const reason = typeof raw.reason === 'string' ? `(*apiextensions.FieldValueErrorReason)(${JSON.stringify(raw.reason)})` : '(*apiextensions.FieldValueErrorReason)(nil)';
  const opt = typeof raw.optionalOldSelf === 'boolean' ? `(*bool)(${raw.optionalOldSelf})` : '(*bool)(nil)';
  return `apiextensions.ValidationRule{Rule:${s(raw.rule)}, Message:${s(raw.message)}, MessageExpression:${s(raw.messageExpression)}, Reason:${reason}, FieldPath:${s(raw.fieldPath)}, OptionalOldSelf:${opt}}`;
}

/** `.a.b`, `.a['b-c']`, `.a[0]`? Only property steps that the schema declares (upstream's rule). */
function normalizeFieldPath(fp: string, schema: JsonObject): string | undefined {
  if (!fp.startsWith('.') && !fp.startsWith('[')) return undefined;
  const steps: string[] = [];
  const re = /\.([A-Za-z_$][A-Za-z0-9_$-]*)|\['((?:[^'\\]|\\.)*)'\]/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < fp.length && (m = re.exec(fp))) {
    steps.push(m[1] ?? m[2]!);
    at = re.lastIndex;
  }
  if (at !== fp.length || steps.length === 0) return undefined;
  let node: JsonObject | undefined = schema;
  for (const step of steps) {
    const props: unknown = node?.properties;
    const next: unknown = isObject(props) ? props[step] : isObject(node?.additionalProperties) ? node.additionalProperties : undefined;
    if (!isObject(next)) return undefined;
    node = next;
  }
  return steps.map((s, i) => (i === 0 ? s : /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(s) ? `.${s}` : `[${s}]`)).join('');
}

interface Walk {
  readonly ext: string;
  readonly naming: Naming | undefined;
  readonly errors: FieldError[];
  /** Every rule with its estimated cost times how often it can run, for the CRD total. */
  readonly costs: Array<{ path: string; total: number }>;
}

/**
 * Compiles every rule of a CRD version's schema (`path` is the schema's field path in the CRD,
 * for errors). Errors are upstream's: compile errors, unknown reasons, bad fieldPaths, transition
 * rules where old values cannot be correlated, estimated costs over the limits.
 */
export function compileCrdRules(schema: JsonObject, naming: Naming | undefined, path: string): CompileResult {
  const ext = naming?.extensionPrefix ?? 'x-kubernetes-';
  const w: Walk = { ext, naming, errors: [], costs: [] };
  const root = compileNode(schema, path, w, 1, undefined);
  const total = w.costs.reduce((n, c) => n + c.total, 0);
  if (total > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    // As upstream: the most expensive rules (at most four, most expensive first) are named.
    const most = [...w.costs].sort((a, b) => b.total - a.total).slice(0, MAX_MOST_EXPENSIVE);
    for (const c of most) w.errors.push(fieldErrors.forbidden(c.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    w.errors.push(fieldErrors.forbidden(path, costMessage(`${ext}validations estimated rule cost total for entire OpenAPIv3 schema`, total, STATIC_ESTIMATED_CRD_COST_LIMIT)));
  }
  return { root, errors: w.errors };
}

function compileNode(schema: JsonObject, path: string, w: Walk, cardinality: number, uncorrelatable: string | undefined): RuleNode | undefined {
  const ext = w.ext;
  if (schema.uniqueItems === true) w.errors.push(fieldErrors.forbidden(`${path}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  const rules: CompiledRule[] = [];
  const raw = schema[`${ext}validations`];
  const selfType = celType(schema, ext);
  const self = shapeOf(schema, ext);
  if (Array.isArray(raw)) {
    raw.forEach((r, i) => {
      const p = fieldPath.index(`${path}.${ext}validations`, i);
      if (!isObject(r)) return;
      const compiled = compileRule(r, p, selfType, self, schema, w, cardinality, uncorrelatable);
      if (compiled) rules.push(compiled);
    });
  }
  const properties = new Map<string, RuleNode>();
  if (isObject(schema.properties)) {
    for (const [name, sub] of Object.entries(schema.properties)) {
      if (!isObject(sub)) continue;
      const n = compileNode(sub, `${path}.properties[${name}]`, w, cardinality, uncorrelatable);
      if (n) properties.set(name, n);
    }
  }
  const listType = schema[`${ext}list-type`];
  const keys = Array.isArray(schema[`${ext}list-map-keys`]) ? (schema[`${ext}list-map-keys`] as unknown[]).filter((k): k is string => typeof k === 'string') : undefined;
  const listMapKeys = listType === 'map' && keys && keys.length > 0 ? keys : undefined;
  const listSet = listType === 'set';
  let items: RuleNode | undefined;
  if (isObject(schema.items)) {
    const n = self.kind === 'list' ? self.maxSize : unboundedCount(1);
    items = compileNode(schema.items, `${path}.items`, w, cardinality * n, uncorrelatable ?? (listMapKeys || listSet ? undefined : `${path}.items`));
  }
  let additional: RuleNode | undefined;
  if (isObject(schema.additionalProperties)) {
    additional = compileNode(schema.additionalProperties, `${path}.additionalProperties`, w, cardinality * self.maxSize, uncorrelatable);
  }
  if ('default' in schema) checkDefault(schema, path, w);
  if (rules.length === 0 && properties.size === 0 && !items && !additional) return undefined;
  return { schema, typeWord: typeWord(schema, ext), rules, properties, items, additional, listMapKeys, listSet };
}

function typeWord(schema: JsonObject, ext: string): string {
  if (typeof schema.type === 'string' && schema.type !== '') return schema.type;
  return schema[`${ext}int-or-string`] === true ? 'integer-or-string' : 'object';
}

function compileRule(
  r: JsonObject,
  p: string,
  selfType: string,
  self: Shape,
  schema: JsonObject,
  w: Walk,
  cardinality: number,
  uncorrelatable: string | undefined,
): CompiledRule | undefined {
  const errs = w.errors;
  const before = errs.length;
  const source = typeof r.rule === 'string' ? r.rule : '';
  if (source.trim() === '') {
    errs.push(fieldErrors.required(`${p}.rule`, 'rule is not specified'));
    return undefined;
  }
  const message = typeof r.message === 'string' ? r.message : undefined;
  if (message !== undefined) {
    if (message.trim() === '') errs.push(fieldErrors.required(`${p}.message`, 'message must be non-empty if specified'));
    else if (message.includes('\n')) errs.push(fieldErrors.invalid(`${p}.message`, message, 'message must not contain line breaks'));
    else if (message.length > 2048) errs.push(fieldErrors.invalid(`${p}.message`, message, 'message must have a maximum length of 2048 characters'));
  }
  const reason = r.reason;
  if (reason !== undefined && !(REASONS as readonly unknown[]).includes(reason)) errs.push(fieldErrors.notSupported(`${p}.reason`, reason, REASONS));
  let fp: string | undefined;
  if (typeof r.fieldPath === 'string' && r.fieldPath !== '') {
    fp = normalizeFieldPath(r.fieldPath, schema);
    if (fp === undefined) errs.push(fieldErrors.invalid(`${p}.fieldPath`, r.fieldPath, 'fieldPath must be a valid path'));
  }
  const optionalOldSelf = r.optionalOldSelf === true;
  const env = envFor(selfType, optionalOldSelf);
  let rule: CompiledExpression | undefined;
  try {
    rule = compileExpression(env, source, `${p}.rule`, ['bool']);
  } catch (e) {
    if (!(e instanceof CelCompileError)) throw e;
    // Upstream prints the rule as Go's %#v of the ValidationRule, unquoted.
    errs.push({ type: 'FieldValueInvalid', field: `${p}.rule`, detail: `${goRule(r)}: compilation failed: ${e.message.replace(/^.*?compilation failed: /, '')}` });
  }
  const oldSelf = rule ? usesOldSelf(rule.ast) : false;
  if (optionalOldSelf && rule && !oldSelf) errs.push(fieldErrors.invalid(`${p}.optionalOldSelf`, true, 'may not be set if rule does not use oldSelf'));
  if (oldSelf && uncorrelatable) errs.push(fieldErrors.invalid(`${p}.rule`, source, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`));
  let messageExpression: CompiledExpression | undefined;
  if (typeof r.messageExpression === 'string') {
    if (r.messageExpression.trim() === '') errs.push(fieldErrors.required(`${p}.messageExpression`, 'messageExpression must be non-empty if specified'));
    else {
      try {
        messageExpression = compileExpression(env, r.messageExpression, `${p}.messageExpression`, ['string']);
      } catch (e) {
        if (!(e instanceof CelCompileError)) throw e;
        errs.push(fieldErrors.invalid(`${p}.messageExpression`, r.messageExpression, `messageExpression compilation failed: ${e.message.replace(/^.*?compilation failed: /, '')}`));
      }
    }
  }
  const vars = { self, oldSelf: self };
  let cost = 0;
  if (rule) {
    const c = rule.estimateCost(vars);
    cost += c;
    if (c > STATIC_ESTIMATED_COST_LIMIT) errs.push(fieldErrors.forbidden(`${p}.rule`, costMessage('estimated rule cost', c, STATIC_ESTIMATED_COST_LIMIT)));
  }
  if (messageExpression) {
    const c = messageExpression.estimateCost(vars);
    cost += c;
    if (c > STATIC_ESTIMATED_COST_LIMIT) errs.push(fieldErrors.forbidden(`${p}.messageExpression`, costMessage('estimated messageExpression cost', c, STATIC_ESTIMATED_COST_LIMIT)));
  }
  if (rule) w.costs.push({ path: `${p}.rule`, total: cost * cardinality });
  if (!rule || errs.length > before) return undefined;
  return { raw: r, rule, message, messageExpression, reason: reason as Reason | undefined, fieldPath: fp, usesOldSelf: oldSelf, optionalOldSelf };
}

/** A default must pass the schema's value rules and CEL rules at its node (upstream checks both). */
function checkDefault(schema: JsonObject, path: string, w: Walk): void {
  const sub: JsonObject = { ...schema };
  delete sub.default;
  const report = (errs: readonly FieldError[], strip: string) => {
    for (const e of errs) {
      const field = e.field === strip ? '' : e.field.startsWith(`${strip}.`) || e.field.startsWith(`${strip}[`) ? e.field.slice(strip.length).replace(/^\./, '') : e.field;
      w.errors.push({ type: 'FieldValueInvalid', field: `${path}.default`, value: schema.default, detail: `${field ? `${field}: ` : ''}${fieldErrorBody(e)}` });
    }
  };
  // The schema's own rules (types, bounds, patterns, enums): the default as the one field of a
  // wrapper object, so the compiler sees an ordinary property.
  const wrapper = { type: 'object', properties: { [DEFAULT_FIELD]: sub } } as JsonObject;
  const node = customSchemaCompiler(wrapper as SchemaNode, w.naming).named(CUSTOM_ROOT_SCHEMA);
  const schemaErrs = node ? validateNode({ [DEFAULT_FIELD]: schema.default }, node).filter((e) => e.field === DEFAULT_FIELD || e.field.startsWith(`${DEFAULT_FIELD}.`) || e.field.startsWith(`${DEFAULT_FIELD}[`)) : [];
  report(schemaErrs, DEFAULT_FIELD);
  if (schemaErrs.length > 0) return;
  const compiled = compileCrdRules(sub, w.naming, path);
  if (!compiled.root || compiled.errors.length > 0) return;
  report(validateCrdRules(compiled.root, schema.default, undefined, '', newBudget(), w.ext), '');
}

const DEFAULT_FIELD = 'default';

/** The per-request budget shared by every rule of one write. */
export interface Budget {
  remaining: number;
}

export function newBudget(): Budget {
  return { remaining: RUNTIME_CEL_COST_BUDGET };
}

/** CEL values of a JSON value under its schema: integers become CEL ints. */
function toCel(v: unknown, schema: JsonObject | undefined, ext: string): unknown {
  if (typeof v === 'number') {
    if (schema?.type === 'number') return v;
    return Number.isInteger(v) ? BigInt(v) : v;
  }
  if (Array.isArray(v)) {
    const items = isObject(schema?.items) ? schema.items : undefined;
    return v.map((x) => toCel(x, items, ext));
  }
  if (isObject(v)) {
    const props = isObject(schema?.properties) ? schema.properties : undefined;
    const additional = isObject(schema?.additionalProperties) ? schema.additionalProperties : undefined;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const s = props && isObject(props[k]) ? (props[k] as JsonObject) : additional;
      out[k] = toCel(x, s, ext);
    }
    return out;
  }
  return v;
}

class BudgetExhausted extends Error {}

/**
 * Evaluates the rules of `node` and below on `value` (and `old`, the correlated old value, on
 * update). `path` is the value's field path. Stops when the budget runs out, with upstream's
 * error, as upstream stops.
 */
export function validateCrdRules(node: RuleNode, value: unknown, old: unknown, path: string, budget: Budget, ext = 'x-kubernetes-'): FieldError[] {
  const errs: FieldError[] = [];
  try {
    walkValue(node, value, old, path, budget, errs, ext);
  } catch (e) {
    if (!(e instanceof BudgetExhausted)) throw e;
  }
  return errs;
}

function walkValue(node: RuleNode, value: unknown, old: unknown, path: string, budget: Budget, errs: FieldError[], ext: string): void {
  if (value === undefined || value === null) return;
  const unchanged = old !== undefined && jsonEqual(value, old);
  if (node.rules.length > 0) {
    let self: unknown;
    let oldSelf: unknown;
    for (const r of node.rules) {
      // Transition rules run only on updates with a correlated old value, unless optional.
      if (r.usesOldSelf && !r.optionalOldSelf && old === undefined) continue;
      // Ratcheting: an unchanged value cannot newly fail a rule that does not look at oldSelf.
      if (unchanged && !r.usesOldSelf) continue;
      self ??= toCel(value, node.schema, ext);
      if (r.usesOldSelf && oldSelf === undefined && old !== undefined) oldSelf = toCel(old, node.schema, ext);
      const vars = {
        self,
        oldSelf: r.optionalOldSelf ? (old === undefined ? Optional.none() : Optional.of(oldSelf)) : (oldSelf ?? null),
      };
      const errPath = r.fieldPath ? fieldPath.child(path, r.fieldPath) : path;
      const result = run(r.rule, vars, budget, errs, path, node.typeWord, r);
      if (result === true) continue;
      if (result === undefined) continue;
      let detail = r.message?.trim() || `failed rule: ${r.rule.source.trim()}`;
      if (r.messageExpression) {
        const m = run(r.messageExpression, vars, budget, undefined, path, node.typeWord, r);
        if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n') && m.length <= 5000) detail = m.trim();
      }
      errs.push(errorFor(r.reason, errPath, node.typeWord, detail));
    }
  }
  if (isObject(value)) {
    const oldObj = isObject(old) ? old : undefined;
    for (const [name, child] of node.properties) walkValue(child, value[name], oldObj?.[name], fieldPath.child(path, name), budget, errs, ext);
    if (node.additional) {
      for (const [k, v] of Object.entries(value)) {
        if (isObject(node.schema.properties) && k in node.schema.properties) continue;
        walkValue(node.additional, v, oldObj?.[k], fieldPath.key(path, k), budget, errs, ext);
      }
    }
  }
  if (Array.isArray(value) && node.items) {
    const oldList = Array.isArray(old) ? old : [];
    value.forEach((item, i) => {
      let oldItem: unknown;
      if (node.listMapKeys && isObject(item)) {
        const keys = node.listMapKeys;
        oldItem = oldList.find((o) => isObject(o) && keys.every((k) => jsonEqual(o[k], item[k])));
      } else if (node.listSet) {
        oldItem = oldList.find((o) => jsonEqual(o, item));
      }
      walkValue(node.items!, item, oldItem, fieldPath.index(path, i), budget, errs, ext);
    });
  }
}

function run(e: CompiledExpression, vars: Record<string, unknown>, budget: Budget, errs: FieldError[] | undefined, path: string, typeWord: string, r: CompiledRule): unknown {
  const meter = new CostMeter(Math.min(PER_CALL_LIMIT, budget.remaining));
  const ruleText = r.message?.trim() || r.rule.source.trim();
  try {
    return e.run(vars, { meter });
  } catch (err) {
    if (!errs) return undefined;
    if (err instanceof CelCostLimitError) {
      if (meter.limit < PER_CALL_LIMIT) {
        errs.push(fieldErrors.invalid(path, typeWord, 'validation failed due to running out of cost budget, no further validation rules will be run'));
      } else {
        errs.push(fieldErrors.invalid(path, typeWord, `'${err.message}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleText}`));
      }
      throw new BudgetExhausted();
    }
    const why = (err instanceof Error ? err.message : String(err)).replace(/^.*?evaluation failed: /, '');
    if (/no such overload|found no matching overload/.test(why)) {
      errs.push(fieldErrors.invalid(path, typeWord, `'${why}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText}`));
    } else {
      errs.push(fieldErrors.invalid(path, typeWord, `${why} evaluating rule: ${ruleText}`));
    }
    return undefined;
  } finally {
    budget.remaining -= Math.min(meter.used, budget.remaining);
  }
}

function errorFor(reason: Reason | undefined, path: string, typeWord: string, detail: string): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return fieldErrors.forbidden(path, detail);
    case 'FieldValueRequired':
      return fieldErrors.required(path, detail);
    case 'FieldValueDuplicate':
      return fieldErrors.duplicate(path, typeWord);
    default:
      return fieldErrors.invalid(path, typeWord, detail);
  }
}

/** The steps of a field path (`spec.items[0].name` → spec, 0, name; `labels[a.b]` → labels, a.b). */
function pathSteps(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  const re = /([^.[\]]+)|\[([^\]]*)\]/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(path))) out.push(m[1] !== undefined ? m[1] : /^\d+$/.test(m[2]!) ? Number(m[2]) : m[2]!);
  return out;
}

function valueAt(obj: unknown, steps: ReadonlyArray<string | number>): unknown {
  let v: unknown = obj;
  for (const s of steps) {
    if (typeof s === 'number' ? !Array.isArray(v) : !isObject(v)) return undefined;
    v = (v as Record<string | number, unknown>)[s];
  }
  return v;
}

/**
 * Ratcheting (upstream 1.32, CRDValidationRatcheting): a schema error on update is dropped when
 * the value it is about did not change (for a missing required field, its parent object).
 */
export function ratchetSchemaErrors(errs: FieldError[], obj: unknown, old: unknown): FieldError[] {
  return errs.filter((e) => {
    let steps = pathSteps(e.field);
    if (e.type === 'FieldValueRequired') steps = steps.slice(0, -1);
    if (steps.length === 0) return true;
    const now = valueAt(obj, steps);
    const before = valueAt(old, steps);
    return now === undefined || before === undefined || !jsonEqual(now, before);
  });
}
