// internal/validation/kinds/common owns what the per-kind rules share: the validator signature
// and context, label selectors (validation and matching), int-or-percent values, non-negative
// and immutable-field checks worded as upstream words them.
// Imports: apierrors (FieldError), naming (Naming type), schema (ResourceInfo type), the
// validation helpers (name-rules, object-meta, plain-json).

import { fieldErrors, fieldPath, type FieldError } from '../../apierrors/field-errors.js';
import type { Naming } from '../../naming/naming.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import { isLabelValue, isQualifiedName, isValidPercent } from '../name-rules.js';
import { validateLabels } from '../object-meta.js';
import { isObject, jsonEqual, type JsonObject } from '../plain-json.js';

export interface KindContext {
  readonly resource: ResourceInfo;
  readonly naming: Naming;
}

/**
 * Checks one object of a kind (`old` set on update). Must not mutate either object. Reports
 * every problem it finds; type errors are schema validation's and are skipped quietly here.
 */
export type KindValidator = (obj: JsonObject, old: JsonObject | undefined, ctx: KindContext) => FieldError[];

export const FIELD_IMMUTABLE = 'field is immutable';

export function immutable(newValue: unknown, oldValue: unknown, path: string): FieldError[] {
  return jsonEqual(newValue, oldValue) ? [] : [fieldErrors.invalid(path, newValue ?? null, FIELD_IMMUTABLE)];
}

/** Upstream's `ValidateNonnegativeField`: only numbers are checked (types are the schema's). */
export function nonNegative(value: unknown, path: string): FieldError[] {
  return typeof value === 'number' && value < 0 ? [fieldErrors.invalid(path, value, 'must be greater than or equal to 0')] : [];
}

export function positive(value: unknown, path: string): FieldError[] {
  return typeof value === 'number' && value <= 0 ? [fieldErrors.invalid(path, value, 'must be greater than 0')] : [];
}


/** A metav1.LabelSelector: match labels as labels, expressions with valid operators, keys and values. */
export function validateLabelSelector(selector: unknown, path: string): FieldError[] {
  if (!isObject(selector)) return [];
  const errs = validateLabels(selector.matchLabels, fieldPath.child(path, 'matchLabels'));
  const exprs = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  exprs.forEach((e, i) => {
    if (!isObject(e)) return;
    const p = fieldPath.index(fieldPath.child(path, 'matchExpressions'), i);
    const values = Array.isArray(e.values) ? e.values : [];
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) errs.push(fieldErrors.required(fieldPath.child(p, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) errs.push(fieldErrors.forbidden(fieldPath.child(p, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(fieldErrors.invalid(fieldPath.child(p, 'operator'), e.operator ?? '', 'not a valid selector operator'));
    }
    const key = typeof e.key === 'string' ? e.key : '';
    for (const m of isQualifiedName(key)) errs.push(fieldErrors.invalid(fieldPath.child(p, 'key'), key, m));
    values.forEach((v, j) => {
      if (typeof v === 'string') for (const m of isLabelValue(v)) errs.push(fieldErrors.invalid(fieldPath.index(fieldPath.child(p, 'values'), j), v, m));
    });
  });
  return errs;
}

/** Whether a metav1.LabelSelector selects nothing special: no labels and no expressions. */
export function isEmptySelector(selector: unknown): boolean {
  if (!isObject(selector)) return true;
  const labels = isObject(selector.matchLabels) ? Object.keys(selector.matchLabels).length : 0;
  const exprs = Array.isArray(selector.matchExpressions) ? selector.matchExpressions.length : 0;
  return labels + exprs === 0;
}

/** Whether a metav1.LabelSelector matches a label set (an empty selector matches everything). */
export function selectorMatches(selector: unknown, labels: unknown): boolean {
  const set: Record<string, unknown> = isObject(labels) ? labels : {};
  if (!isObject(selector)) return true;
  if (isObject(selector.matchLabels)) {
    for (const [k, v] of Object.entries(selector.matchLabels)) if (set[k] !== v) return false;
  }
  for (const e of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    if (!isObject(e) || typeof e.key !== 'string') return false;
    const has = Object.prototype.hasOwnProperty.call(set, e.key);
    const values = Array.isArray(e.values) ? e.values : [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(set[e.key])) return false;
        break;
      case 'NotIn':
        if (has && values.includes(set[e.key])) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** An int-or-string that must be a non-negative integer or a percentage (`25%`). */
export function validateIntOrPercent(value: unknown, path: string): FieldError[] {
  if (typeof value === 'string') return isValidPercent(value).map((m) => fieldErrors.invalid(path, value, m));
  return nonNegative(value, path);
}

/** The numeric part of an int-or-percent, for comparisons with 0 and 100%. */
export function intOrPercentValue(value: unknown): { value: number; percent: boolean } | undefined {
  if (typeof value === 'number') return { value, percent: false };
  if (typeof value === 'string' && /^[0-9]+%$/.test(value)) return { value: Number(value.slice(0, -1)), percent: true };
  return undefined;
}

export function notMoreThan100Percent(value: unknown, path: string): FieldError[] {
  const v = intOrPercentValue(value);
  return v?.percent && v.value > 100 ? [fieldErrors.invalid(path, value, 'must not be greater than 100%')] : [];
}

// Short readers the rules use on every line.
export { has, list, objectAt as obj, str } from '../plain-json.js';
