// internal/patch/json-patch owns RFC 6902 JSON patch application (`application/json-patch+json`)
// on plain JSON objects, with upstream's answers: a document that is not a list of operation
// objects is a 400, more than 10000 operations a 413, and any operation that cannot be applied
// (bad op, unresolvable path, failed `test`) a 422. The patch is all-or-nothing: it runs on a
// deep copy, so a failure never leaves a partial result behind. fast-json-patch does the work.
// Imports: patch/json-value, patch/patch-errors, fast-json-patch.

import jsonpatch from 'fast-json-patch';
import { cloneJson, isJsonObject, jsonTypeName, type JsonValue } from './json-value.js';
import { patchMalformed, patchNotApplicable, tooManyOperations } from './patch-errors.js';

/** Upstream's limit on operations in one JSON patch. */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * Applies `ops` (the decoded request body) to `doc` and returns the patched copy; `doc` is not
 * modified. Throws StatusError 400/413/422 as described in the module header.
 */
export function applyJsonPatch(doc: JsonValue, ops: unknown): JsonValue {
  if (!Array.isArray(ops)) {
    throw patchMalformed(`json: cannot unmarshal ${jsonTypeName(ops)} into Go value of type jsonpatch.Patch`);
  }
  for (const op of ops) {
    if (!isJsonObject(op)) {
      throw patchMalformed(`json: cannot unmarshal ${jsonTypeName(op)} into Go value of type jsonpatch.Operation`);
    }
  }
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) throw tooManyOperations(MAX_JSON_PATCH_OPERATIONS, ops.length);

  // Validate the whole list before touching the document, so a malformed operation late in the
  // list is reported as such rather than as whatever the earlier operations left behind.
  ops.forEach((op, index) => {
    const name = (op as Record<string, unknown>).op;
    if (typeof name !== 'string' || !OPS.has(name)) {
      throw patchNotApplicable(`operation ${index}: Unexpected kind: ${typeof name === 'string' ? name : jsonTypeName(name)}`);
    }
  });
  const operations = cloneJson(ops) as unknown as jsonpatch.Operation[];
  const structural = jsonpatch.validate(operations);
  if (structural) throw patchNotApplicable(describe(structural));

  const target = cloneJson(doc);
  try {
    return jsonpatch.applyPatch(target, operations, true, true, true).newDocument as JsonValue;
  } catch (err) {
    if (err instanceof jsonpatch.JsonPatchError) throw patchNotApplicable(describe(err));
    // The library throws a TypeError for `__proto__`/`constructor` paths: bad input, not a bug.
    if (err instanceof TypeError) throw patchNotApplicable(err.message);
    throw err;
  }
}

function describe(err: InstanceType<typeof jsonpatch.JsonPatchError>): string {
  const firstLine = String(err.message).split('\n')[0] ?? '';
  const op = err.operation as { op?: unknown; path?: unknown } | undefined;
  const where = op ? ` (operation ${err.index ?? '?'}: ${String(op.op)} ${JSON.stringify(op.path)})` : '';
  if (err.name === 'TEST_OPERATION_FAILED' && op) return `testing value ${String(op.path)} failed: test failed${where}`;
  return `${firstLine}${where}`;
}
