// internal/registry/builtin-rules owns binding the registry's rule seam to the built-in kinds'
// rules: upstream defaults and create/update preparation (internal/defaults), schema,
// metadata and per-kind validation (internal/validation), unknown-field pruning. All take the
// configured naming. Imports: defaults, validation, naming, object-rules.

import { applyDefaults, prepareForCreate, prepareForUpdate } from '../defaults/defaults.js';
import type { Naming } from '../naming/naming.js';
import type { ResourceInfo } from '../schema/catalog.js';
import { pruneUnknownFields } from '../validation/schema.js';
import { validateObject } from '../validation/validate-object.js';
import type { JsonObject, ObjectRules } from './object-rules.js';

export function builtinRules(naming: Naming): ObjectRules {
  return {
    applyDefaults: (r: ResourceInfo, obj: JsonObject) => void applyDefaults(r, obj, naming),
    prepareForCreate: (r, obj) => void prepareForCreate(r, obj, naming),
    prepareForUpdate: (r, obj, old) => void prepareForUpdate(r, obj, old),
    validateCreate: (r, obj) => validateObject(r, obj, { naming }),
    validateUpdate: (r, obj, old) => validateObject(r, obj, { old, naming }),
    pruneUnknownFields: (r, obj) => (r.schemaName ? pruneUnknownFields(r.schemaName, obj, { naming }) : []),
  };
}
