// internal/registry/object-rules owns the seam between the registry and the validation and
// defaulting rules: the registry calls these at fixed points of every write; the rules
// themselves live in internal/validation and internal/defaults.
// Imports: apierrors (types), schema/catalog (types).

import type { FieldError } from '../apierrors/field-errors.js';
import type { ResourceInfo } from '../schema/catalog.js';

export type JsonObject = Record<string, unknown>;

export interface ObjectRules {
  /**
   * Fills defaults in place (idempotent). Runs before validation, on create and update.
   * `creating`: the first defaulting of a create, before the creator's managedFields are
   * recorded (what prepareForCreate generates is left to it).
   */
  applyDefaults(resource: ResourceInfo, obj: JsonObject, creating?: boolean): void;
  /** Kind-specific preparation of a new object once its name, uid and timestamps are set. */
  prepareForCreate(resource: ResourceInfo, obj: JsonObject): void;
  /** Kind-specific preparation of an update from the stored object (carried-over fields). */
  prepareForUpdate(resource: ResourceInfo, obj: JsonObject, old: JsonObject): void;
  /** Every rule for a new object: metadata, schema, kind-specific. Must not mutate. */
  validateCreate(resource: ResourceInfo, obj: JsonObject): FieldError[];
  /**
   * Every rule for a changed object, including immutability. Must not mutate. `subresource`
   * names the sub-resource written through ('' or absent: the object itself), for the kinds
   * whose sub-resources have rules of their own (pods/ephemeralcontainers).
   */
  validateUpdate(resource: ResourceInfo, obj: JsonObject, old: JsonObject, subresource?: string): FieldError[];
  /**
   * Removes fields the schema does not know from `obj` (in place) and returns their paths
   * (`.spec.foo`), for fieldValidation. Kinds that preserve unknown fields return [].
   */
  pruneUnknownFields(resource: ResourceInfo, obj: JsonObject): string[];
}

/** Rules that accept everything: for tests of the registry's own mechanics. */
export const permissiveRules: ObjectRules = {
  applyDefaults: () => {},
  prepareForCreate: () => {},
  prepareForUpdate: () => {},
  validateCreate: () => [],
  validateUpdate: () => [],
  pruneUnknownFields: () => [],
};
