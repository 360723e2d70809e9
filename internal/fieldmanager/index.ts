// internal/fieldmanager is the public face of field management and server-side apply: a
// FieldManager per kind (update/apply over plain JSON objects), the FieldsV1 codec and field
// sets for callers that inspect ownership, and the User-Agent fallback for manager names.
// Imports: fieldmanager/*.

export {
  BEFORE_FIRST_APPLY_MANAGER,
  FieldManager,
  fieldPaths,
  formatTime,
  type ApplyOptions,
  type FieldManagerConfig,
  type UpdateOptions,
  type WriteOptions,
} from './field-manager.js';
export { FieldSet } from './field-set.js';
export { decodeFieldsV1, encodeFieldsV1, fieldsV1String, sharedFieldsV1 } from './fields-v1.js';
export {
  ANCIENT_CHANGES_MANAGER,
  DEFAULT_MAX_UPDATE_MANAGERS,
  decodeManagedFields,
  encodeManagedFields,
  isResetManagedFields,
  managerIdentifier,
  type ManagedFieldsEntry,
} from './managed-fields.js';
export { FIELD_MANAGER_CONFLICT, applyConflictError, printManager } from './conflicts.js';
export { fieldElement, pathString, type Path, type PathElement } from './path-element.js';
export { smdTypeOf, type SmdType } from './smd-type.js';
export { withGoZeroValues } from './zero-values.js';
export { FIELD_MANAGER_MAX_LENGTH, managerFromUserAgent, managerOrUserAgent } from './user-agent.js';
export { ScaleHandler, SCALE_REPLICAS_PATH, replicasPathFromJsonPath, type ReplicasPaths } from './scale-handler.js';
