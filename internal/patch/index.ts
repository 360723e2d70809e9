// internal/patch is the public face of the patch engines: pure functions from a JSON object and
// a decoded patch body to the patched object, throwing StatusError with upstream's codes. The
// registry picks the function by Content-Type; strategic merge patch takes the kind's schema.
// Imports: patch/*.

export { applyJsonPatch, MAX_JSON_PATCH_OPERATIONS } from './json-patch.js';
export { applyMergePatch } from './merge-patch.js';
export { applyStrategicMergePatch } from './strategic-merge-patch.js';
export { PATCH_REJECTED_MESSAGE } from './patch-errors.js';
export { builtinTypeNode, customResourceTypeNode, openApiTypeNode, type OpenApiTypeNodeOptions, type TypeNode } from './type-node.js';
export { cloneJson, isJsonObject, jsonEqual, type JsonObject, type JsonValue } from './json-value.js';
