// internal/validation/validate-object owns the one call the registry makes to validate a
// built-in object: schema, then metadata, then the kind's rules, with the same problem reported
// once (an error of the same type at the same path from a later layer is dropped). The registry
// turns a non-empty result into a 422 Invalid StatusError.
// Imports: apierrors (FieldError), naming (Naming type), schema (ResourceInfo type), schema,
// object-meta, kinds.

import type { FieldError } from '../apierrors/field-errors.js';
import type { Naming } from '../naming/naming.js';
import type { ResourceInfo } from '../schema/catalog.js';
import { requiredOnCreateOnly, validateKind } from './kinds/index.js';
import { validateObjectMetaCreate, validateObjectMetaUpdate } from './object-meta.js';
import { isObject } from './plain-json.js';
import { validateAgainstSchema } from './schema.js';

export interface ValidateObjectOptions {
  /** The stored object on update; absent on create. */
  readonly old?: unknown;
  readonly naming?: Naming;
}

/**
 * Drops repeats: a Required error at a path already reported Required (schema and kind rules
 * both notice a missing field), and exact duplicates. Distinct messages at one path stay.
 */
function dedupe(errs: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errs.filter((e) => {
    const key =
      e.type === 'FieldValueRequired'
        ? `${e.type}\u0000${e.field}`
        : `${e.type}\u0000${e.field}\u0000${JSON.stringify(e.value ?? null)}\u0000${e.detail ?? ''}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Every validation error of a defaulted built-in object (create, or update with `opts.old`):
 * schema types/required/formats, metadata rules of §2.3, then the kind's rules. Pure.
 */
export function validateObject(resource: ResourceInfo, obj: unknown, opts: ValidateObjectOptions = {}): FieldError[] {
  const errs: FieldError[] = [];
  if (resource.schemaName) {
    const schemaErrs = validateAgainstSchema(resource.schemaName, obj, { naming: opts.naming });
    errs.push(...(opts.old === undefined ? schemaErrs : schemaErrs.filter((e) => e.type !== 'FieldValueRequired' || !requiredOnCreateOnly(resource, e.field))));
  }
  const meta = isObject(obj) ? obj.metadata : undefined;
  const ctx = { resource, naming: opts.naming };
  if (opts.old === undefined) errs.push(...validateObjectMetaCreate(meta, ctx));
  else errs.push(...validateObjectMetaUpdate(meta, isObject(opts.old) ? opts.old.metadata : undefined, ctx));
  errs.push(...validateKind(resource, obj, opts.old, opts.naming));
  return dedupe(errs);
}
