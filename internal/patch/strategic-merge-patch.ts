// internal/patch/strategic-merge-patch owns `application/strategic-merge-patch+json` for the
// built-in kinds: a JSON merge patch whose lists merge by key where the schema says so
// (`x-kubernetes-patch-strategy: merge` + `x-kubernetes-patch-merge-key`), plus the directives
// `$patch: replace|delete` (maps and list items), `$retainKeys`, `$deleteFromPrimitiveList/<f>`
// and `$setElementOrder/<f>`. Semantics, item order and error texts follow upstream's
// strategicpatch package (server side: parallel lists merged, unmatched nulls ignored).
// Deliberate differences: `$patch: merge` on a map means "merge" instead of an error, and
// values that are added wholesale lose every directive key and null member (upstream leaves
// some for the Go decoder to drop; plain JSON storage must not keep them).
// Errors: 400 for malformed patches and directives, 422 for lists of lists.
// Imports: apierrors (type only), patch/json-value, patch/patch-errors, patch/go-format,
// patch/type-node (type only).

import type { StatusError } from '../apierrors/status.js';
import { goKind, goValue } from './go-format.js';
import { cloneJson, isJsonObject, jsonTypeName, type JsonObject, type JsonValue } from './json-value.js';
import { patchMalformed, patchUnprocessable } from './patch-errors.js';
import type { TypeNode } from './type-node.js';

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER = '$setElementOrder';

/** Internal failure carrying the HTTP class of the upstream error it mirrors. */
class SmpError extends Error {
  constructor(
    message: string,
    readonly unprocessable = false,
  ) {
    super(message);
  }
  toStatus(): StatusError {
    return this.unprocessable ? patchUnprocessable(this.message) : patchMalformed(this.message);
  }
}

const errBadPatchFormatForPrimitiveList = () => new SmpError('invalid patch format of primitive list');
const errBadPatchFormatForRetainKeys = () => new SmpError('invalid patch format of retainKeys');
const errBadPatchFormatForSetElementOrderList = () => new SmpError('invalid patch format of setElementOrder list');
const errNoListOfLists = () => new SmpError('lists of lists are not supported', true);
const errBadArgType = (expected: string, actual: unknown) =>
  new SmpError(`expected a ${expected}, but received a ${goKind(actual)}`);
const errNoMergeKey = (m: unknown, key: string) =>
  new SmpError(`map: ${goValue(m)} does not contain declared merge key: ${key}`);
const errBadPatchType = (t: unknown, m: unknown) => new SmpError(`unknown patch type: ${goValue(t)} in map: ${goValue(m)}`);

/**
 * Applies a strategic merge patch to `doc` and returns the result; neither input is modified.
 * `schema` is the node of the object's type (undefined: no strategies, every list replaces).
 * Throws StatusError 400 or 422.
 */
export function applyStrategicMergePatch(doc: JsonValue, patch: unknown, schema: TypeNode | undefined): JsonObject {
  if (patch === null) return isJsonObject(doc) ? cloneJson(doc) : {};
  if (!isJsonObject(patch)) {
    throw patchMalformed(`json: cannot unmarshal ${jsonTypeName(patch)} into Go value of type map[string]interface {}`);
  }
  const original = isJsonObject(doc) ? cloneJson(doc) : {};
  try {
    return mergeMap(original, cloneJson(patch), schema);
  } catch (err) {
    if (err instanceof SmpError) throw err.toStatus();
    throw err;
  }
}

// ---- maps -----------------------------------------------------------------------------------

/** Merges `patch` into `original` (both owned copies, mutated) and returns the result. */
function mergeMap(original: JsonObject | undefined, patch: JsonObject, schema: TypeNode | undefined): JsonObject {
  if (Object.hasOwn(patch, DIRECTIVE)) {
    const directive = patch[DIRECTIVE];
    if (directive === 'replace') {
      delete patch[DIRECTIVE];
      return cleanObject(patch);
    }
    if (directive === 'delete') return {};
    if (directive !== 'merge') throw errBadPatchType(directive, patch);
    delete patch[DIRECTIVE];
  }
  const target = original ?? {};

  applyRetainKeysDirective(target, patch);
  mergeSetElementOrderLists(target, patch, schema);

  for (const patchKey of Object.keys(patch)) {
    const patchV = patch[patchKey]!;
    let key = patchKey;
    let isDeleteList = false;
    if (patchKey.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      key = extractKey(patchKey, DELETE_FROM_PRIMITIVE_LIST);
      isDeleteList = true;
    }
    if (patchV === null) {
      delete target[key];
      continue;
    }
    if (!Object.hasOwn(target, key) || kindOf(target[key]) !== kindOf(patchV)) {
      if (!isDeleteList) setCleaned(target, key, patchV);
      continue;
    }
    const originalV = target[key]!;
    const field = schema?.field(key);
    const strategy = patchStrategyOf(field);
    if (Array.isArray(originalV)) {
      target[key] = mergeSliceHandler(
        originalV,
        patchV as JsonValue[],
        field?.items(),
        strategy,
        field?.patchMergeKey ?? '',
        isDeleteList,
      );
    } else if (isJsonObject(originalV)) {
      target[key] =
        strategy === 'replace' ? cleanObject(patchV as JsonObject) : mergeMap(originalV, patchV as JsonObject, field);
    } else {
      setCleaned(target, key, patchV);
    }
  }
  return target;
}

/** `$retainKeys`: drop every original key not listed; every patch key must be listed. */
function applyRetainKeysDirective(original: JsonObject, patch: JsonObject): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw errBadPatchFormatForRetainKeys();
  const retained = new Set<unknown>(list);
  for (const k of Object.keys(patch)) {
    if (patch[k] === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!retained.has(k)) throw errBadPatchFormatForRetainKeys();
  }
  for (const k of Object.keys(original)) if (!retained.has(k)) delete original[k];
}

/**
 * `$setElementOrder/<f>`: merges the list `<f>` (if the patch has it) and then orders the result:
 * items named in the directive in its order, the others where the live list had them.
 * Consumes both the directive and the patch list.
 */
function mergeSetElementOrderLists(original: JsonObject, patch: JsonObject, schema: TypeNode | undefined): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const setOrder = patch[key];
    delete patch[key];
    if (!Array.isArray(setOrder)) throw errBadArgType('slice', setOrder);
    const listKey = extractKey(key, SET_ELEMENT_ORDER);

    const foundOriginal = Object.hasOwn(original, listKey);
    const foundPatch = Object.hasOwn(patch, listKey);
    const originalList = original[listKey];
    const patchList = patch[listKey];
    if (foundOriginal && !Array.isArray(originalList)) throw errBadArgType('slice', originalList);
    if (foundPatch && !Array.isArray(patchList)) throw errBadArgType('slice', patchList);
    const originalItems = foundOriginal ? (originalList as JsonValue[]) : [];
    const patchItems = foundPatch ? (patchList as JsonValue[]) : [];

    const field = schema?.field(listKey);
    const mergeKey = field?.patchMergeKey ?? '';
    validatePatchWithSetOrderList(patchItems, setOrder, mergeKey);

    let merged: JsonValue[];
    if (foundOriginal && !foundPatch) merged = originalItems;
    else if (!foundOriginal && foundPatch) merged = cleanArray(patchItems);
    else if (foundOriginal && foundPatch) {
      merged = mergeSliceHandler(originalItems, patchItems, field?.items(), patchStrategyOf(field), mergeKey, false);
    } else continue;

    const [inOrder, serverOnly] = mergeKey
      ? partitionMapsByPresentInList(merged, setOrder, mergeKey)
      : partitionPrimitivesByPresentInList(merged, setOrder);
    if (originalItems.length === 0 && patchItems.length === 0) {
      // Upstream fails here ("no elements in any of the given slices"); nothing to order.
      original[listKey] = merged;
    } else {
      const kind = sliceElementKind(originalItems, patchItems);
      original[listKey] = normalizeElementOrder(inOrder, serverOnly, setOrder, originalItems, mergeKey, kind);
    }
    delete patch[listKey];
  }
}

/** The items of the patch list (deletions aside) must appear in the directive, in its order. */
function validatePatchWithSetOrderList(patchList: JsonValue[], setOrder: JsonValue[], mergeKey: string): void {
  if (setOrder.length === 0 || patchList.length === 0) return;
  const nonDelete = mergeKey ? extractToDeleteItems(patchList)[0] : patchList;
  let p = 0;
  let s = 0;
  while (p < nonDelete.length && s < setOrder.length) {
    if (containsDirectiveMarker(nonDelete[p])) {
      p++;
      continue;
    }
    if (mergeKeyValueEqual(nonDelete[p], setOrder[s], mergeKey)) p++;
    s++;
  }
  if (p < nonDelete.length && s >= setOrder.length) {
    throw new SmpError(
      `the order in patch list:\n${goValue(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goValue(setOrder)}`,
    );
  }
}

// ---- lists ----------------------------------------------------------------------------------

function mergeSliceHandler(
  original: JsonValue[],
  patch: JsonValue[],
  items: TypeNode | undefined,
  strategy: string,
  mergeKey: string,
  isDeleteList: boolean,
): JsonValue[] {
  // A deletion list works the same whatever the field's strategy (upstream does the same).
  if (strategy !== 'merge' && !isDeleteList) return cleanArray(patch);
  return mergeSlice(original, patch, items, mergeKey, isDeleteList);
}

function mergeSlice(
  original: JsonValue[],
  patch: JsonValue[],
  items: TypeNode | undefined,
  mergeKey: string,
  isDeleteList: boolean,
): JsonValue[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = sliceElementKind(original, patch);
  let merged: JsonValue[];
  let base = original;
  let patchItems = patch;
  if (kind !== 'map') {
    if (isDeleteList) return deleteFromSlice(original, patch);
    merged = deduplicateScalars([...original, ...patch]);
  } else {
    if (!mergeKey) throw new SmpError('cannot merge lists without merge key for type struct');
    [base, patchItems] = mergeSliceWithSpecialElements(original, patch, mergeKey);
    merged = mergeSliceWithoutSpecialElements(base, patchItems, mergeKey, items);
  }
  const [inPatch, serverOnly] = mergeKey
    ? partitionMapsByPresentInList(merged, patchItems, mergeKey)
    : partitionPrimitivesByPresentInList(merged, patchItems);
  return normalizeElementOrder(inPatch, serverOnly, patchItems, base, mergeKey, kind);
}

/** Applies `$patch: delete|replace` list items; returns the new base list and the plain items. */
function mergeSliceWithSpecialElements(
  original: JsonValue[],
  patch: JsonValue[],
  mergeKey: string,
): [JsonValue[], JsonValue[]] {
  const plain: JsonValue[] = [];
  let replace = false;
  let base = original;
  for (const v of patch) {
    const item = v as JsonObject;
    if (!Object.hasOwn(item, DIRECTIVE)) {
      plain.push(v);
      continue;
    }
    const directive = item[DIRECTIVE];
    if (directive === 'delete') {
      if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
      base = deleteMatchingEntries(base, mergeKey, item[mergeKey]!);
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw new SmpError('merging lists cannot yet be specified in the patch');
    } else {
      throw errBadPatchType(directive, item);
    }
  }
  if (replace) return [cleanArray(plain), []];
  return [base, plain];
}

function deleteMatchingEntries(original: JsonValue[], mergeKey: string, value: JsonValue): JsonValue[] {
  return original.filter((item, i) => {
    if (!isJsonObject(item)) throw new SmpError(`value for key ${i} is not a map.`);
    return !(Object.hasOwn(item, mergeKey) && item[mergeKey] === value);
  });
}

function mergeSliceWithoutSpecialElements(
  original: JsonValue[],
  patch: JsonValue[],
  mergeKey: string,
  items: TypeNode | undefined,
): JsonValue[] {
  // A new list: the caller keeps using `original` as the live order, which must not gain items.
  const merged = original.slice();
  for (const v of patch) {
    const item = v as JsonObject;
    if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    const at = findMapInSlice(merged, mergeKey, item[mergeKey]!);
    if (at >= 0) merged[at] = mergeMap(merged[at] as JsonObject, item, items);
    else merged.push(cleanObject(item));
  }
  return merged;
}

function findMapInSlice(list: JsonValue[], key: string, value: JsonValue): number {
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (!isJsonObject(item)) throw new SmpError(`value for key ${i} is not a map.`);
    if (Object.hasOwn(item, key) && item[key] === value) return i;
  }
  return -1;
}

function deleteFromSlice(current: JsonValue[], toDelete: JsonValue[]): JsonValue[] {
  const doomed = new Set<unknown>(toDelete);
  return current.filter((v) => !doomed.has(v));
}

/** Upstream's in-place de-duplication (a duplicate takes the last item's place). */
function deduplicateScalars(s: JsonValue[]): JsonValue[] {
  let length = s.length - 1;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (s[i] === s[j]) {
        s[j] = s[length]!;
        s.length = length;
        length--;
        j--;
      }
    }
  }
  return s;
}

type ElementKind = 'map' | 'string' | 'number' | 'boolean' | 'null';

/** The common kind of all items; lists of lists and mixed kinds are errors. */
function sliceElementKind(...lists: JsonValue[][]): ElementKind {
  let kind: ElementKind | undefined;
  for (const list of lists) {
    for (const v of list) {
      if (Array.isArray(v)) {
        // Upstream rejects a list of lists outright and a list mixing lists with other kinds as mixed.
        if (kind === undefined) throw errNoListOfLists();
        throw new SmpError(`list element types are not identical: ${goValue(lists)}`);
      }
      const current: ElementKind = v === null ? 'null' : isJsonObject(v) ? 'map' : (typeof v as 'string' | 'number' | 'boolean');
      if (kind === undefined) kind = current;
      else if (kind !== current) throw new SmpError(`list element types are not identical: ${goValue(lists)}`);
    }
  }
  if (kind === undefined) throw new SmpError('no elements in any of the given slices');
  return kind;
}

// ---- ordering -------------------------------------------------------------------------------

function partitionPrimitivesByPresentInList(list: JsonValue[], by: JsonValue[]): [JsonValue[], JsonValue[]] {
  const present = new Set<unknown>(by);
  const inList: JsonValue[] = [];
  const others: JsonValue[] = [];
  for (const v of list) (present.has(v) ? inList : others).push(v);
  return [inList, others];
}

function partitionMapsByPresentInList(list: JsonValue[], by: JsonValue[], mergeKey: string): [JsonValue[], JsonValue[]] {
  const inList: JsonValue[] = [];
  const others: JsonValue[] = [];
  for (const v of list) {
    if (!isJsonObject(v)) throw errBadArgType('map', v);
    if (!Object.hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
    (findMapInSlice(by, mergeKey, v[mergeKey]!) >= 0 ? inList : others).push(v);
  }
  return [inList, others];
}

/**
 * Orders patch items by `patchOrder` and server-only items by `serverOrder`, then interleaves
 * them: a server-only item goes before a patch item only when the live list had it first.
 */
function normalizeElementOrder(
  patch: JsonValue[],
  serverOnly: JsonValue[],
  patchOrder: JsonValue[],
  serverOrder: JsonValue[],
  mergeKey: string,
  kind: ElementKind,
): JsonValue[] {
  const sortedPatch = normalizeSliceOrder(patch, patchOrder, mergeKey, kind);
  const sortedServer = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  return mergeSortedSlice(sortedServer, sortedPatch, serverOrder, mergeKey, kind);
}

function normalizeSliceOrder(toSort: JsonValue[], order: JsonValue[], mergeKey: string, kind: ElementKind): JsonValue[] {
  let items = toSort;
  let deletions: JsonValue[] = [];
  if (kind === 'map') {
    validateMergeKeyInLists(mergeKey, toSort, order);
    [items, deletions] = extractToDeleteItems(toSort);
  }
  const positions = items.map((v) => indexOf(order, v, mergeKey, kind));
  const sorted = sortByPositions(items, positions);
  return deletions.length > 0 ? [...sorted, ...deletions] : sorted;
}

/**
 * Stable sort by position in the order list. Upstream's comparator answers "less" whenever an
 * item is missing from the order list; that only matters for such items, so they get Go's
 * insertion sort with that comparator, everything else a plain stable sort.
 */
function sortByPositions(items: JsonValue[], positions: number[]): JsonValue[] {
  const idx = items.map((_, i) => i);
  if (positions.every((p) => p >= 0)) {
    idx.sort((a, b) => positions[a]! - positions[b]!);
  } else {
    const less = (a: number, b: number) => !(positions[a]! >= 0 && positions[b]! >= 0) || positions[a]! < positions[b]!;
    for (let i = 1; i < idx.length; i++) {
      for (let j = i; j > 0 && less(idx[j]!, idx[j - 1]!); j--) [idx[j], idx[j - 1]] = [idx[j - 1]!, idx[j]!];
    }
  }
  return idx.map((i) => items[i]!);
}

function mergeSortedSlice(
  left: JsonValue[],
  right: JsonValue[],
  serverOrder: JsonValue[],
  mergeKey: string,
  kind: ElementKind,
): JsonValue[] {
  const out: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]!);
    else if (j >= right.length) out.push(left[i++]!);
    else {
      const li = indexOf(serverOrder, left[i]!, mergeKey, kind);
      const ri = indexOf(serverOrder, right[j]!, mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]!);
      else out.push(right[j++]!);
    }
  }
  return out;
}

function indexOf(list: JsonValue[], value: JsonValue, mergeKey: string, kind: ElementKind): number {
  const key = (item: JsonValue): unknown => (kind === 'map' ? (isJsonObject(item) ? item[mergeKey] : undefined) : item);
  const wanted = key(value);
  for (let i = 0; i < list.length; i++) if (key(list[i]!) === wanted) return i;
  return -1;
}

function validateMergeKeyInLists(mergeKey: string, ...lists: JsonValue[][]): void {
  for (const list of lists) {
    for (const item of list) {
      if (!isJsonObject(item)) throw errBadArgType('map', item);
      if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    }
  }
}

function extractToDeleteItems(list: JsonValue[]): [JsonValue[], JsonValue[]] {
  const keep: JsonValue[] = [];
  const doomed: JsonValue[] = [];
  for (const v of list) {
    if (!isJsonObject(v)) throw errBadArgType('map', v);
    (v[DIRECTIVE] === 'delete' ? doomed : keep).push(v);
  }
  return [keep, doomed];
}

function containsDirectiveMarker(item: JsonValue | undefined): boolean {
  return isJsonObject(item) && Object.hasOwn(item, DIRECTIVE);
}

function mergeKeyValueEqual(left: JsonValue | undefined, right: JsonValue | undefined, mergeKey: string): boolean {
  if (!mergeKey) return left === right;
  if (!isJsonObject(left)) throw errBadArgType('map', left);
  if (!isJsonObject(right)) throw errBadArgType('map', right);
  if (!Object.hasOwn(left, mergeKey)) throw errNoMergeKey(left, mergeKey);
  if (!Object.hasOwn(right, mergeKey)) throw errNoMergeKey(right, mergeKey);
  return left[mergeKey] === right[mergeKey];
}

// ---- helpers --------------------------------------------------------------------------------

/** `$deleteFromPrimitiveList/<key>` → `<key>`; anything else after the prefix is malformed. */
function extractKey(s: string, prefix: string): string {
  const slash = s.indexOf('/');
  if (slash < 0 || s.slice(0, slash) !== prefix) {
    throw prefix === DELETE_FROM_PRIMITIVE_LIST ? errBadPatchFormatForPrimitiveList() : errBadPatchFormatForSetElementOrderList();
  }
  return s.slice(slash + 1);
}

/** The non-retainKeys strategy of a field (`merge`, `replace` or ''). */
function patchStrategyOf(field: TypeNode | undefined): string {
  const raw = field?.patchStrategy;
  if (!raw) return '';
  const strategies = raw.split(',');
  if (strategies.length === 1) return strategies[0] === 'retainKeys' ? '' : strategies[0]!;
  if (strategies.length === 2) {
    if (strategies[0] === 'retainKeys') return strategies[1]!;
    if (strategies[1] === 'retainKeys') return strategies[0]!;
  }
  throw new SmpError(`unexpected patch strategy: [${strategies.join(' ')}]`);
}

function kindOf(v: JsonValue | undefined): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function isDirectiveKey(k: string): boolean {
  return k === DIRECTIVE || k === RETAIN_KEYS || k.startsWith(SET_ELEMENT_ORDER) || k.startsWith(DELETE_FROM_PRIMITIVE_LIST);
}

const DROPPED = Symbol('dropped');

/** A value entering the object wholesale: no null members, no directives; a `$patch` map is dropped. */
function cleanValue(v: JsonValue): JsonValue | typeof DROPPED {
  if (Array.isArray(v)) return cleanArray(v);
  if (isJsonObject(v)) return Object.hasOwn(v, DIRECTIVE) ? DROPPED : cleanObject(v);
  return v;
}

function cleanObject(o: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(o)) {
    const v = o[k];
    if (v === null || v === undefined || isDirectiveKey(k)) continue;
    const c = cleanValue(v);
    if (c !== DROPPED) out[k] = c;
  }
  return out;
}

function cleanArray(a: JsonValue[]): JsonValue[] {
  const out: JsonValue[] = [];
  for (const v of a) {
    const c = cleanValue(v);
    if (c !== DROPPED) out.push(c);
  }
  return out;
}

function setCleaned(target: JsonObject, key: string, v: JsonValue): void {
  const c = cleanValue(v);
  if (c === DROPPED) delete target[key];
  else target[key] = c;
}
