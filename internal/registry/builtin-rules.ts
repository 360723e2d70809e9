// internal/registry/builtin-rules owns binding the registry's rule seam to the rules of every
// served kind: for built-in kinds upstream defaults and create/update preparation
// (internal/defaults), schema, metadata and per-kind validation (internal/validation); for
// custom resources their version's openAPIV3Schema (types, defaults, pruning unless it
// preserves unknown fields), the metadata rules, and their CEL validation rules
// (validation/crd-cel: after schema validation, with ratcheting of unchanged values on update).
// All take the configured naming.
// Imports: defaults, validation, naming, schema, object-rules.

import { applyDefaults, prepareForCreate, prepareForUpdate } from '../defaults/defaults.js';
import { fillFromSchema } from '../defaults/schema-fill.js';
import type { Naming } from '../naming/naming.js';
import type { CustomResourceInfo, ResourceInfo } from '../schema/catalog.js';
import type { SchemaNode } from '../schema/openapi-index.js';
import { validateObjectMetaCreate, validateObjectMetaUpdate } from '../validation/object-meta.js';
import { pruneUnknownFields, validateAgainstSchema } from '../validation/schema.js';
import { CUSTOM_ROOT_SCHEMA, customSchemaCompiler, type SchemaCompiler } from '../validation/schema-compile.js';
import { validateObject } from '../validation/validate-object.js';
import { validatePodEphemeralContainersUpdate } from '../validation/kinds/pod.js';
import { compileCrdRules, newBudget, ratchetSchemaErrors, type RuleNode, validateCrdRules } from '../validation/crd-cel.js';
import type { FieldError } from '../apierrors/field-errors.js';
import type { JsonObject, ObjectRules } from './object-rules.js';

/** Permissive root for versions without a schema: any object. */
const ANY_OBJECT: SchemaNode = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

export function builtinRules(naming: Naming): ObjectRules {
  // One compiled schema per custom resource version (a new definition brings a new info object).
  const compilers = new WeakMap<CustomResourceInfo, SchemaCompiler>();
  const compilerFor = (custom: CustomResourceInfo): SchemaCompiler => {
    let c = compilers.get(custom);
    if (!c) {
      c = customSchemaCompiler((custom.schema as SchemaNode | undefined) ?? ANY_OBJECT, naming);
      compilers.set(custom, c);
    }
    return c;
  };
  // The CEL rules of each version, compiled once per definition (CRD validation refused any that
  // do not compile or cost too much; a stored definition from before keeps its good rules).
  const ruleTrees = new WeakMap<CustomResourceInfo, { root?: RuleNode }>();
  const rulesFor = (custom: CustomResourceInfo): RuleNode | undefined => {
    let t = ruleTrees.get(custom);
    if (!t) {
      t = { root: custom.schema ? compileCrdRules(custom.schema as JsonObject, naming, '').root : undefined };
      ruleTrees.set(custom, t);
    }
    return t.root;
  };
  const customErrors = (r: ResourceInfo, obj: JsonObject, old?: JsonObject): FieldError[] => {
    let errs = validateAgainstSchema(CUSTOM_ROOT_SCHEMA, obj, { naming, compiler: compilerFor(r.custom!) });
    if (old) errs = ratchetSchemaErrors(errs, obj, old);
    const root = rulesFor(r.custom!);
    if (!root) return errs;
    // As upstream: a value of the wrong type leaves the rules unchecked.
    if (errs.some((e) => e.type === 'FieldValueTypeInvalid')) {
      return [...errs, { type: 'FieldValueInvalid', field: '', value: undefined, detail: 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation' }];
    }
    return [...errs, ...validateCrdRules(root, obj, old, '', newBudget(), naming.extensionPrefix)];
  };
  return {
    applyDefaults(r, obj, creating) {
      if (!r.custom) return void applyDefaults(r, obj, naming, { creating });
      const root = compilerFor(r.custom).named(CUSTOM_ROOT_SCHEMA);
      if (root) fillFromSchema(obj, root);
    },
    prepareForCreate: (r, obj) => (r.custom ? undefined : void prepareForCreate(r, obj, naming)),
    prepareForUpdate: (r, obj, old) => (r.custom ? undefined : void prepareForUpdate(r, obj, old)),
    validateCreate(r, obj) {
      if (!r.custom) return validateObject(r, obj, { naming });
      return [...customErrors(r, obj), ...validateObjectMetaCreate(obj.metadata, { resource: r, naming, custom: true })];
    },
    validateUpdate(r, obj, old, subresource) {
      if (!r.custom) {
        if (subresource === 'ephemeralcontainers' && r.upstreamGroup === '' && r.kind === 'Pod') return validatePodEphemeralContainersUpdate(obj, old, naming);
        return validateObject(r, obj, { old, naming });
      }
      return [...customErrors(r, obj, old), ...validateObjectMetaUpdate(obj.metadata, old.metadata, { resource: r, naming, custom: true })];
    },
    pruneUnknownFields(r, obj) {
      if (r.custom) return r.custom.preserveUnknownFields ? [] : pruneUnknownFields(CUSTOM_ROOT_SCHEMA, obj, { naming, compiler: compilerFor(r.custom) });
      return r.schemaName ? pruneUnknownFields(r.schemaName, obj, { naming }) : [];
    },
  };
}
