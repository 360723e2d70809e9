// internal/apierrors/field-errors owns the field-level validation error vocabulary: one error per
// field path with a stable type, formatted the way upstream clients print them
// (`spec.replicas: Invalid value: -1: must be greater than or equal to 0`).
// Imports: nothing from the project.

export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError'
  | 'FieldValueTypeInvalid';

export interface FieldError {
  type: FieldErrorType;
  /** Dotted path with indices and keys: `spec.containers[0].name`, `metadata.labels[app]`. */
  field: string;
  /** The offending value, when the message should quote it. */
  value?: unknown;
  /** Human detail after the type text. */
  detail?: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
};

/** Value quoting as upstream prints it: strings quoted, numbers and booleans bare, objects as JSON. */
export function quoteValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (value === undefined) return '<nil>';
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** The part of the message after the field path, for example `Invalid value: "Foo": must be lowercase`. */
export function fieldErrorBody(e: FieldError): string {
  const parts: string[] = [TYPE_TEXT[e.type]];
  const quotesValue =
    e.type === 'FieldValueInvalid' ||
    e.type === 'FieldValueNotSupported' ||
    e.type === 'FieldValueDuplicate' ||
    e.type === 'FieldValueNotFound' ||
    e.type === 'FieldValueTypeInvalid';
  let text = parts[0]!;
  if (quotesValue && 'value' in e) text += `: ${quoteValue(e.value)}`;
  if (e.detail) text += `: ${e.detail}`;
  return text;
}

export function formatFieldError(e: FieldError): string {
  return e.field ? `${e.field}: ${fieldErrorBody(e)}` : fieldErrorBody(e);
}

/** Small constructors so call sites read as the rule they check. */
export const fieldErrors = {
  required: (field: string, detail?: string): FieldError => ({ type: 'FieldValueRequired', field, detail }),
  invalid: (field: string, value: unknown, detail?: string): FieldError => ({ type: 'FieldValueInvalid', field, value, detail }),
  notSupported: (field: string, value: unknown, supported: readonly string[]): FieldError => ({
    type: 'FieldValueNotSupported',
    field,
    value,
    detail: `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
  }),
  duplicate: (field: string, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field, value }),
  forbidden: (field: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field, detail }),
  // Upstream's field.TooLong and field.TooMany say "byte" and "item" for a limit of one.
  tooLong: (field: string, max: number): FieldError => ({
    type: 'FieldValueTooLong',
    field,
    detail: `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}`,
  }),
  tooMany: (field: string, actual: number, max: number): FieldError => ({
    type: 'FieldValueTooMany',
    field,
    detail: `${actual}: must have at most ${max} ${max === 1 ? 'item' : 'items'}`,
  }),
  typeInvalid: (field: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueTypeInvalid', field, value, detail }),
  notFound: (field: string, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field, value }),
  internal: (field: string, detail: string): FieldError => ({ type: 'InternalError', field, detail }),
};

/** Joins path segments: child('spec', 'containers') → 'spec.containers'; index/key render as [i]/[k]. */
export const fieldPath = {
  child: (parent: string, name: string): string => (parent ? `${parent}.${name}` : name),
  index: (parent: string, i: number): string => `${parent}[${i}]`,
  key: (parent: string, k: string): string => `${parent}[${k}]`,
};
