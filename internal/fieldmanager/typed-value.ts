// internal/fieldmanager/typed-value owns the schema-aware walks over plain JSON objects that
// server-side apply is made of, each mirroring its structured-merge-diff counterpart:
//   validate     — is an apply body well typed (declared fields, scalar kinds, list keys, no
//                  duplicate items)?
//   toFieldSet   — the set of fields a value sets (what an applier owns);
//   diffValues   — added / modified / removed fields between two versions of an object;
//   mergeValues  — an apply body merged into the live object;
//   removeItems  — a value without the given fields (apply's pruning of relinquished fields);
//   ensureNamedFieldsAreMembers, reconcileWithSchema — set adjustments that need the schema.
// The walks over stored objects are lenient (a value that does not fit its schema is treated as
// one leaf, an undeclared field is skipped) because updates must never fail on ownership;
// only `validate` reports problems, for apply bodies.
// Imports: patch/json-value, fieldmanager/{field-set,path-element,smd-type}.

import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../patch/json-value.js';
import { FieldSet, type FieldSetChild } from './field-set.js';
import {
  compareElements,
  elementString,
  elementsEqual,
  FIELD,
  fieldElement,
  indexElement,
  KEY,
  keyElement,
  valueElement,
  valuesEqual,
  type Path,
  type PathElement,
} from './path-element.js';
import type { SmdList, SmdType } from './smd-type.js';

export type Atom = 'map' | 'list' | 'scalar' | undefined;

const NO_TYPE: SmdType = { scalar: undefined, list: undefined, map: undefined, deduced: false };

/** Which part of a type handles a value (deduced from the value, else map, scalar, list). */
export function atomOf(t: SmdType, v: JsonValue | undefined): Atom {
  if (v !== undefined && v !== null) {
    if (typeof v === 'object') {
      if (Array.isArray(v)) {
        if (t.list) return 'list';
      } else if (t.map) return 'map';
    } else if (t.scalar) return 'scalar';
  }
  return t.map ? 'map' : t.scalar ? 'scalar' : t.list ? 'list' : undefined;
}

const asList = (v: JsonValue | undefined): JsonValue[] | undefined => (Array.isArray(v) ? v : undefined);
const asMap = (v: JsonValue | undefined): JsonObject | undefined => (isJsonObject(v) ? v : undefined);

/** The path element of a list item, or the reason it has none. */
export function listItemElement(list: SmdList, item: JsonValue, index: number): PathElement | string {
  if (!list.associative) return indexElement(index);
  if (list.keys.length > 0) {
    if (item === null) return 'associative list with keys may not have a null element';
    if (!isJsonObject(item)) return 'associative list with keys may not have non-map elements';
    const fields: Array<readonly [string, JsonValue]> = [];
    for (const name of list.keys) {
      if (Object.hasOwn(item, name)) fields.push([name, item[name]!]);
      else {
        const d = list.keyDefault(name);
        if (d === undefined) {
          return `associative list with keys has an element that omits key field ${JSON.stringify(name)} (and doesn't have default value)`;
        }
        fields.push([name, d]);
      }
    }
    return keyElement(fields);
  }
  if (item === null) return "associative list without keys has an element that's an explicit null";
  if (Array.isArray(item)) return 'not supported: associative list with lists as elements';
  if (typeof item === 'object') return "associative list without keys has an element that's a map type";
  return valueElement(item);
}

// ---- validate -------------------------------------------------------------------------------

export interface TypeError {
  /** Path in upstream's spelling (`.spec.replicas`); empty for the root. */
  readonly path: string;
  readonly message: string;
}

/** Upstream's text for a list of validation errors. */
export function typeErrorsText(errs: readonly TypeError[]): string {
  const one = (e: TypeError) => (e.path ? `${e.path}: ${e.message}` : e.message);
  if (errs.length === 1) return one(errs[0]!);
  return ['errors:', ...errs.map((e) => `  ${one(e)}`)].join('\n');
}

/** Checks a value against its type; `allowDuplicates` for stored objects. */
export function validate(value: JsonValue, t: SmdType, allowDuplicates = false): TypeError[] {
  const errs: TypeError[] = [];
  validateAt(value, t, [], allowDuplicates, errs);
  return errs;
}

/**
 * Where validateAt is: map keys (a string, shown as `.key`) and list items (their element).
 * Kept as a stack and shown only for an error: every apply body is checked, and building a path
 * text for every value it holds cost more than the checks.
 */
type ValuePath = Array<string | PathElement>;

function pathText(path: ValuePath): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'string' ? `.${seg}` : elementString(seg);
  return out;
}

function goType(v: JsonValue): string {
  if (v === null) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  switch (typeof v) {
    case 'object':
      return 'map[string]interface {}';
    case 'number':
      return Number.isInteger(v) ? 'int64' : 'float64';
    case 'boolean':
      return 'bool';
    default:
      return 'string';
  }
}

const shortJson = (v: JsonValue): string => {
  const s = JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
};

function validateAt(v: JsonValue, t: SmdType, path: ValuePath, allowDuplicates: boolean, errs: TypeError[]): void {
  switch (atomOf(t, v)) {
    case 'scalar': {
      if (v === null) return;
      const isScalar = typeof v !== 'object';
      switch (t.scalar) {
        case 'numeric':
          if (typeof v !== 'number') errs.push({ path: pathText(path), message: `expected numeric (int or float), got ${goType(v)}` });
          return;
        case 'string':
          if (typeof v !== 'string') errs.push({ path: pathText(path), message: `expected string, got ${shortJson(v)}` });
          return;
        case 'boolean':
          if (typeof v !== 'boolean') errs.push({ path: pathText(path), message: `expected boolean, got ${shortJson(v)}` });
          return;
        default:
          if (!isScalar) errs.push({ path: pathText(path), message: `expected any scalar, got ${shortJson(v)}` });
          return;
      }
    }
    case 'list': {
      if (v === null) return;
      if (!Array.isArray(v)) {
        errs.push({ path: pathText(path), message: `expected list, got ${shortJson(v)}` });
        return;
      }
      const list = t.list!;
      const seen = new Set<string>();
      for (let i = 0; i < v.length; i++) {
        const pe = listItemElement(list, v[i]!, i);
        if (typeof pe === 'string') {
          errs.push({ path: pathText(path), message: `element ${i}: ${pe}` });
          return;
        }
        if (list.associative) {
          if (seen.has(pe.id) && !allowDuplicates) errs.push({ path: pathText(path), message: `duplicate entries for key ${elementString(pe)}` });
          seen.add(pe.id);
        }
        path.push(pe);
        validateAt(v[i]!, list.element(), path, allowDuplicates, errs);
        path.pop();
      }
      return;
    }
    case 'map': {
      if (v === null) return;
      if (!isJsonObject(v)) {
        errs.push({ path: pathText(path), message: `expected map, got ${shortJson(v)}` });
        return;
      }
      const map = t.map!;
      for (const key of Object.keys(v)) {
        const ft = map.field(key) ?? map.element();
        path.push(key);
        if (!ft) {
          // Upstream stops at the first undeclared field of a map.
          errs.push({ path: pathText(path), message: 'field not declared in schema' });
          path.pop();
          return;
        }
        validateAt(v[key]!, ft, path, allowDuplicates, errs);
        path.pop();
      }
      return;
    }
    default:
      errs.push({ path: pathText(path), message: 'schema error: invalid atom' });
  }
}

// ---- toFieldSet -----------------------------------------------------------------------------

/** The fields a value sets: scalars, atomic lists/maps, list items and map keys. */
export function toFieldSet(value: JsonValue | undefined, t: SmdType): FieldSet {
  return below(value, t) ?? new FieldSet();
}

/** Whether a value's own path belongs to the set (it is a leaf: scalar, atomic list or map). */
function isLeaf(v: JsonValue | undefined, t: SmdType): boolean {
  switch (atomOf(t, v)) {
    case 'scalar':
      return true;
    case 'list':
      return t.list!.atomic;
    case 'map':
      return t.map!.atomic;
    default:
      return false;
  }
}

/** The set below a value (relative paths), undefined when empty. */
function below(v: JsonValue | undefined, t: SmdType): FieldSet | undefined {
  const atom = atomOf(t, v);
  if (atom === 'list') {
    const list = t.list!;
    const items = asList(v);
    if (list.atomic || !items) return undefined;
    const members: PathElement[] = [];
    const children: FieldSetChild[] = [];
    const elem = list.element();
    for (let i = 0; i < items.length; i++) {
      const pe = listItemElement(list, items[i]!, i);
      if (typeof pe === 'string') continue;
      members.push(pe);
      const sub = below(items[i]!, elem);
      if (sub) children.push({ pe, set: sub });
    }
    return level(members, children);
  }
  if (atom === 'map') {
    const map = t.map!;
    const m = asMap(v);
    if (map.atomic || !m) return undefined;
    const members: PathElement[] = [];
    const children: FieldSetChild[] = [];
    for (const key of Object.keys(m)) {
      const declared = map.field(key);
      const ft = declared ?? map.element();
      if (!ft) continue;
      const child = m[key]!;
      const pe = fieldElement(key);
      if (!declared || isLeaf(child, ft)) members.push(pe);
      const sub = below(child, ft);
      if (sub) children.push({ pe, set: sub });
    }
    return level(members, children);
  }
  return undefined;
}

/** A set level from unsorted parts; duplicate list items collapse (their children unite). */
function level(members: PathElement[], children: FieldSetChild[]): FieldSet | undefined {
  if (members.length === 0 && children.length === 0) return undefined;
  members = sortedMembers(members);
  if (!childrenSorted(children)) {
    children = sortChildren(children);
    const merged: FieldSetChild[] = [];
    for (const c of children) {
      const last = merged[merged.length - 1];
      if (last && elementsEqual(last.pe, c.pe)) merged[merged.length - 1] = { pe: c.pe, set: last.set.union(c.set) };
      else merged.push(c);
    }
    children = merged;
  }
  return new FieldSet(members, children);
}

// A level has a handful of elements (an object's keys, a list's items) that come in document
// order, rarely sorted: an insertion sort in place beats Array.prototype.sort's setup and its
// calls back into the comparator there. Long levels (a map with many labels) use the builtin.
const INSERTION_SORT_MAX = 24;

/** `list` sorted, without repeats (in place when short). */
function sortedMembers(list: PathElement[]): PathElement[] {
  const n = list.length;
  let i = 1;
  while (i < n && compareElements(list[i - 1]!, list[i]!) < 0) i++;
  if (i >= n) return list;
  if (n > INSERTION_SORT_MAX) {
    list.sort(compareElements);
  } else {
    for (; i < n; i++) {
      const x = list[i]!;
      let j = i - 1;
      while (j >= 0 && compareElements(list[j]!, x) > 0) {
        list[j + 1] = list[j]!;
        j--;
      }
      list[j + 1] = x;
    }
  }
  let w = 1;
  for (let r = 1; r < n; r++) if (!elementsEqual(list[w - 1]!, list[r]!)) list[w++] = list[r]!;
  list.length = w;
  return list;
}

function childrenSorted(list: readonly FieldSetChild[]): boolean {
  for (let i = 1; i < list.length; i++) if (compareElements(list[i - 1]!.pe, list[i]!.pe) >= 0) return false;
  return true;
}

/** Stable: equal elements keep their order (level then unites them in that order). */
function sortChildren(list: FieldSetChild[]): FieldSetChild[] {
  const n = list.length;
  if (n > INSERTION_SORT_MAX) return list.sort((a, b) => compareElements(a.pe, b.pe));
  for (let i = 1; i < n; i++) {
    const x = list[i]!;
    let j = i - 1;
    while (j >= 0 && compareElements(list[j]!.pe, x.pe) > 0) {
      list[j + 1] = list[j]!;
      j--;
    }
    list[j + 1] = x;
  }
  return list;
}

// ---- diff -----------------------------------------------------------------------------------

export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

/** Fields added, modified and removed going from `lhs` to `rhs`. */
export function diffValues(lhs: JsonValue | undefined, rhs: JsonValue | undefined, t: SmdType): Comparison {
  const cmp: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  diffAt([], lhs, rhs, t, cmp);
  return cmp;
}

function diffAt(path: PathElement[], lhs: JsonValue | undefined, rhs: JsonValue | undefined, t: SmdType, cmp: Comparison): void {
  if (lhs === undefined) {
    if (rhs !== undefined) addSubtree(cmp.added, path, rhs, t);
    return;
  }
  // Identical subtrees have nothing to compare, however large.
  if (lhs !== undefined && rhs !== undefined && jsonEqual(lhs, rhs)) return;
  const al = atomOf(t, lhs);
  const ar = atomOf(t, rhs);
  let inLeaf: boolean;
  if (rhs === undefined) inLeaf = diffAtom(al, path, lhs, rhs, t, cmp);
  else if (lhs === undefined || al === ar) inLeaf = diffAtom(ar, path, lhs, rhs, t, cmp);
  else {
    diffAtom(al, path, lhs, rhs, t, cmp);
    inLeaf = diffAtom(ar, path, lhs, rhs, t, cmp);
  }
  if (!inLeaf) {
    if (lhs === undefined) cmp.added.insert(path);
    else if (rhs === undefined) cmp.removed.insert(path);
  }
}

function diffLeaf(path: PathElement[], lhs: JsonValue | undefined, rhs: JsonValue | undefined, cmp: Comparison): true {
  if (lhs === undefined) cmp.added.insert(path);
  else if (rhs === undefined) cmp.removed.insert(path);
  else if (!valuesEqual(lhs, rhs)) cmp.modified.insert(path);
  return true;
}

function diffAtom(
  atom: Atom,
  path: PathElement[],
  lhs: JsonValue | undefined,
  rhs: JsonValue | undefined,
  t: SmdType,
  cmp: Comparison,
): boolean {
  switch (atom) {
    case 'scalar':
      return diffLeaf(path, lhs, rhs, cmp);
    case 'list': {
      const l = asList(lhs);
      const r = asList(rhs);
      if (t.list!.atomic || ((!l || l.length === 0) && (!r || r.length === 0))) return diffLeaf(path, lhs, rhs, cmp);
      if (!l && !r) return false;
      diffListItems(path, l ?? [], r ?? [], t.list!, cmp);
      return false;
    }
    case 'map': {
      const l = asMap(lhs);
      const r = asMap(rhs);
      const emptyL = !l || isEmptyObject(l);
      const emptyR = !r || isEmptyObject(r);
      if (t.map!.atomic || (emptyL && emptyR)) return diffLeaf(path, lhs, rhs, cmp);
      if (!l && !r) return false;
      const map = t.map!;
      if (l) {
        for (const key of Object.keys(l)) {
          const ft = map.field(key) ?? map.element();
          if (!ft) continue;
          path.push(fieldElement(key));
          diffAt(path, l[key], r && Object.hasOwn(r, key) ? r[key] : undefined, ft, cmp);
          path.pop();
        }
      }
      if (r) {
        for (const key of Object.keys(r)) {
          if (l && Object.hasOwn(l, key)) continue;
          const ft = map.field(key) ?? map.element();
          if (!ft) continue;
          path.push(fieldElement(key));
          diffAt(path, undefined, r[key], ft, cmp);
          path.pop();
        }
      }
      return false;
    }
    default:
      return false;
  }
}

interface Occurrences {
  pe: PathElement;
  first: JsonValue;
  all: JsonValue[] | undefined;
}

function indexItems(list: SmdList, items: JsonValue[], byId: Map<string, Occurrences>, order: PathElement[]): void {
  for (let i = 0; i < items.length; i++) {
    const pe = listItemElement(list, items[i]!, i);
    if (typeof pe === 'string') continue;
    const seen = byId.get(pe.id);
    if (seen) {
      seen.all ??= [seen.first];
      seen.all.push(items[i]!);
    } else {
      byId.set(pe.id, { pe, first: items[i]!, all: undefined });
      order.push(pe);
    }
  }
}

function diffListItems(path: PathElement[], l: JsonValue[], r: JsonValue[], list: SmdList, cmp: Comparison): void {
  const lValues = new Map<string, Occurrences>();
  const rValues = new Map<string, Occurrences>();
  const order: PathElement[] = [];
  indexItems(list, l, lValues, order);
  const rOrder: PathElement[] = [];
  indexItems(list, r, rValues, rOrder);
  for (const pe of rOrder) if (!lValues.has(pe.id)) order.push(pe);
  const elem = list.element();
  for (const pe of order) {
    const lo = lValues.get(pe.id);
    const ro = rValues.get(pe.id);
    const lc = lo ? (lo.all?.length ?? 1) : 0;
    const rc = ro ? (ro.all?.length ?? 1) : 0;
    path.push(pe);
    if (lc <= 1 && rc <= 1) {
      diffAt(path, lo?.first, ro?.first, elem, cmp);
    } else if (lc >= 2 && rc >= 2) {
      // Duplicates on both sides compare as one atomic value.
      if (!jsonEqual(lo!.all, ro!.all)) cmp.modified.insert(path);
    } else if (lc >= 2) {
      if (rc !== 0) diffAt(path, undefined, ro!.first, elem, cmp);
      cmp.removed.insert(path);
    } else {
      if (lc !== 0) diffAt(path, lo!.first, undefined, elem, cmp);
      cmp.added.insert(path);
    }
    path.pop();
  }
}

/**
 * What diffAt records for a value with nothing on the left (a create's whole object, an added
 * container): its path and every path below it are added. The part below is built bottom-up
 * as whole set levels (addedBelow) and attached once, instead of inserting every path from
 * the root of the set under construction.
 */
function addSubtree(added: FieldSet, path: PathElement[], rhs: JsonValue, t: SmdType): void {
  added.insert(path);
  const sub = addedBelow(rhs, t);
  if (!sub) return;
  let node = added;
  for (const pe of path) node = node.descend(pe);
  if (node.members.length === 0 && node.children.length === 0) {
    node.members.push(...sub.members);
    node.children.push(...sub.children);
  } else {
    // Not reached from diffValues (nothing else adds below a path whose left side is missing);
    // kept so that the helper stays correct on its own.
    forEachPath(sub, path, (p) => added.insert(p));
  }
}

/**
 * The paths diffAt(path, undefined, v, t) adds below `path`, relative to it: every member of
 * a non-atomic, non-empty map (declared or typed by the map's element) and every keyed item of
 * such a list, each with what is added below it, except that a list item occurring more than
 * once is added without descending. Undefined when nothing is below.
 */
function addedBelow(v: JsonValue, t: SmdType): FieldSet | undefined {
  const atom = atomOf(t, v);
  if (atom === 'list') {
    const list = t.list!;
    const items = asList(v);
    if (list.atomic || !items || items.length === 0) return undefined;
    const byId = new Map<string, Occurrences>();
    const order: PathElement[] = [];
    indexItems(list, items, byId, order);
    const members: PathElement[] = [];
    const children: FieldSetChild[] = [];
    const elem = list.element();
    for (const pe of order) {
      members.push(pe);
      const o = byId.get(pe.id)!;
      if (o.all !== undefined) continue;
      const sub = addedBelow(o.first, elem);
      if (sub) children.push({ pe, set: sub });
    }
    return level(members, children);
  }
  if (atom === 'map') {
    const map = t.map!;
    const m = asMap(v);
    if (map.atomic || !m || isEmptyObject(m)) return undefined;
    const members: PathElement[] = [];
    const children: FieldSetChild[] = [];
    for (const key of Object.keys(m)) {
      const ft = map.field(key) ?? map.element();
      const child = m[key];
      if (!ft || child === undefined) continue;
      const pe = fieldElement(key);
      members.push(pe);
      const sub = addedBelow(child, ft);
      if (sub) children.push({ pe, set: sub });
    }
    return level(members, children);
  }
  return undefined;
}

function forEachPath(set: FieldSet, prefix: PathElement[], f: (path: PathElement[]) => void): void {
  for (const pe of set.members) f([...prefix, pe]);
  for (const c of set.children) forEachPath(c.set, [...prefix, c.pe], f);
}

function isEmptyObject(o: JsonObject): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return false;
  return true;
}

// ---- merge ----------------------------------------------------------------------------------

/**
 * `rhs` (an apply body) merged into `lhs` (the live object): leaves take the body's value,
 * maps merge by key, associative lists by item (order: the body's for the items it names,
 * live items it does not name stay where they were), atomic values are replaced. The result
 * shares values with both inputs: the body's leaves, and the live subtrees the body does not
 * touch (carried over as they are), so callers copy before mutating it.
 */
export function mergeValues(lhs: JsonValue | undefined, rhs: JsonValue | undefined, t: SmdType): JsonValue | undefined {
  if (lhs === undefined && rhs === undefined) return undefined;
  const al = atomOf(t, lhs);
  const ar = atomOf(t, rhs);
  return mergeAtom(lhs !== undefined && rhs !== undefined && al !== ar ? ar : (rhs === undefined ? al : ar), lhs, rhs, t);
}

const keepRhs = (lhs: JsonValue | undefined, rhs: JsonValue | undefined): JsonValue | undefined => (rhs !== undefined ? rhs : lhs);

function mergeAtom(atom: Atom, lhs: JsonValue | undefined, rhs: JsonValue | undefined, t: SmdType): JsonValue | undefined {
  switch (atom) {
    case 'scalar':
      return keepRhs(lhs, rhs);
    case 'list': {
      const l = asList(lhs);
      const r = asList(rhs);
      if (t.list!.atomic || ((!l || l.length === 0) && (!r || r.length === 0))) return keepRhs(lhs, rhs);
      if (!l && !r) return undefined;
      return mergeListItems(l ?? [], r ?? [], t.list!);
    }
    case 'map': {
      const l = asMap(lhs);
      const r = asMap(rhs);
      if (t.map!.atomic || ((!l || isEmptyObject(l)) && (!r || isEmptyObject(r)))) return keepRhs(lhs, rhs);
      if (!l && !r) return undefined;
      const map = t.map!;
      const out: JsonObject = {};
      let any = false;
      if (l) {
        for (const key of Object.keys(l)) {
          const rv = r && Object.hasOwn(r, key) ? r[key] : undefined;
          const ft = map.field(key) ?? map.element();
          // A live field the schema does not declare is carried along untouched.
          const child = ft ? (rv === undefined ? carried(l[key]!, ft) : mergeValues(l[key], rv, ft)) : keepRhs(l[key], rv);
          if (child !== undefined) {
            out[key] = child;
            any = true;
          }
        }
      }
      if (r) {
        for (const key of Object.keys(r)) {
          if (l && Object.hasOwn(l, key)) continue;
          const ft = map.field(key) ?? map.element();
          const child = ft ? mergeValues(undefined, r[key], ft) : r[key];
          if (child !== undefined) {
            out[key] = child;
            any = true;
          }
        }
      }
      return any ? out : undefined;
    }
    default:
      return undefined;
  }
}

interface Indexed {
  order: PathElement[];
  byId: Map<string, Occurrences>;
}

function indexed(list: SmdList, items: JsonValue[]): Indexed {
  const byId = new Map<string, Occurrences>();
  const order: PathElement[] = [];
  indexItems(list, items, byId, order);
  return { order, byId };
}

function mergeListItems(l: JsonValue[], r: JsonValue[], list: SmdList): JsonValue[] | undefined {
  const elem = list.element();
  const rhs = indexed(list, r);
  const lhs = indexed(list, l);
  const shared = rhs.order.filter((pe) => lhs.byId.has(pe.id));
  let sharedAt = 0;
  let nextShared: PathElement | undefined = shared[sharedAt++];
  const out: JsonValue[] = [];
  const push = (v: JsonValue | undefined) => {
    if (v !== undefined) out.push(v);
  };
  const lLen = lhs.order.length;
  const rLen = rhs.order.length;
  let lI = 0;
  let rI = 0;
  while (lI < lLen || rI < rLen) {
    if (lI < lLen && rI < rLen) {
      const pe = lhs.order[lI]!;
      if (pe.id === rhs.order[rI]!.id) {
        push(mergeValues(lhs.byId.get(pe.id)!.first, rhs.byId.get(pe.id)!.first, elem));
        lI++;
        rI++;
        nextShared = shared[sharedAt++];
        continue;
      }
      if (rhs.byId.has(pe.id) && nextShared && nextShared.id !== pe.id) {
        // A shared item, but not the next one the body orders: it is emitted with the body's.
        lI++;
        continue;
      }
    }
    if (lI < lLen) {
      const pe = lhs.order[lI]!;
      if (!rhs.byId.has(pe.id)) {
        const occ = lhs.byId.get(pe.id)!;
        // Live duplicates the body does not touch stay as they are.
        if (occ.all) for (const v of occ.all) out.push(v);
        else push(carried(occ.first, elem));
        lI++;
        continue;
      }
    }
    if (rI < rLen) {
      const pe = rhs.order[rI]!;
      push(mergeValues(lhs.byId.get(pe.id)?.first, rhs.byId.get(pe.id)!.first, elem));
      rI++;
      if (nextShared && nextShared.id === pe.id) nextShared = shared[sharedAt++];
    }
  }
  return out.length > 0 ? out : undefined;
}

/** A live value the body does not touch, as the merge leaves it: itself when it can. */
function carried(v: JsonValue, t: SmdType): JsonValue | undefined {
  return mergesToItself(v, t) ? v : mergeValues(v, undefined, t);
}

/**
 * Whether merging nothing into `v` gives `v` back (equal, members in the same order), so the
 * merge can share it instead of rebuilding it: true unless some associative list below has an
 * item without a valid key or a repeated key (the merge drops or regroups those) or a value
 * has no type to merge by.
 */
function mergesToItself(v: JsonValue, t: SmdType): boolean {
  switch (atomOf(t, v)) {
    case 'scalar':
      return true;
    case 'list': {
      const list = t.list!;
      if (list.atomic || !Array.isArray(v) || v.length === 0) return true;
      const elem = list.element();
      const seen = v.length > 1 ? new Set<string>() : undefined;
      for (let i = 0; i < v.length; i++) {
        const pe = listItemElement(list, v[i]!, i);
        if (typeof pe === 'string') return false;
        if (seen) {
          if (seen.has(pe.id)) return false;
          seen.add(pe.id);
        }
        if (!mergesToItself(v[i]!, elem)) return false;
      }
      return true;
    }
    case 'map': {
      const map = t.map!;
      if (map.atomic || !isJsonObject(v)) return true;
      for (const key in v) {
        if (!Object.hasOwn(v, key)) continue;
        const ft = map.field(key) ?? map.element();
        if (ft && !mergesToItself(v[key]!, ft)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

// ---- removeItems ----------------------------------------------------------------------------

/**
 * The value without the members of `toRemove` (a member removes the whole value at its path).
 * Containers emptied by the removal stay, empty; returns null when nothing is left at the root.
 */
export function removeItems(value: JsonValue, toRemove: FieldSet, t: SmdType): JsonValue {
  return removeAt(value, toRemove, t);
}

function removeAt(v: JsonValue, toRemove: FieldSet, t: SmdType): JsonValue {
  switch (atomOf(t, v)) {
    case 'list': {
      const items = asList(v);
      if (!items || items.length === 0 || t.list!.atomic) return null;
      const list = t.list!;
      const elem = list.element();
      const out: JsonValue[] = [];
      let hadMatches = false;
      for (let i = 0; i < items.length; i++) {
        let item = items[i] as JsonValue;
        const pe = listItemElement(list, item, i);
        if (typeof pe !== 'string') {
          if (toRemove.hasMember(pe)) continue;
          const sub = toRemove.child(pe);
          if (sub && !sub.isEmpty()) {
            hadMatches = true;
            item = keepContainer(item, removeAt(item, sub, elem));
          }
        }
        out.push(item);
      }
      return out.length > 0 || hadMatches ? out : null;
    }
    case 'map': {
      const m = asMap(v);
      if (!m || isEmptyObject(m) || t.map!.atomic) return null;
      const map = t.map!;
      const out: JsonObject = {};
      let any = false;
      let hadMatches = false;
      for (const key of Object.keys(m)) {
        const pe = fieldElement(key);
        if (toRemove.hasMember(pe)) continue;
        let val = m[key] as JsonValue;
        const sub = toRemove.child(pe);
        const ft = map.field(key) ?? map.element();
        if (sub && ft && !sub.isEmpty()) {
          hadMatches = true;
          val = keepContainer(val, removeAt(val, sub, ft));
        }
        out[key] = val;
        any = true;
      }
      return any || hadMatches ? out : null;
    }
    default:
      return v;
  }
}

/** Removing fields inside a container never removes the container itself. */
function keepContainer(before: JsonValue, after: JsonValue): JsonValue {
  if (after !== null) return after;
  if (Array.isArray(before)) return [];
  if (isJsonObject(before)) return {};
  return after;
}

// ---- schema-aware set adjustments -----------------------------------------------------------

/** The set plus every declared struct field that has members below it (maps' keys excluded). */
export function ensureNamedFieldsAreMembers(set: FieldSet, t: SmdType): FieldSet {
  const map = t.map;
  let members = set.members;
  if (map) {
    for (const c of set.children) {
      if (c.pe.kind === FIELD && map.field(c.pe.name)) {
        if (members === set.members) members = [...members];
        insertMember(members, c.pe);
      }
    }
  }
  const children = set.children.map((c) => {
    let ct: SmdType | undefined;
    if (c.pe.kind === FIELD && map) ct = map.field(c.pe.name) ?? map.element();
    else if (c.pe.kind === KEY && t.list) ct = t.list.element();
    return { pe: c.pe, set: ensureNamedFieldsAreMembers(c.set, ct ?? NO_TYPE) };
  });
  return new FieldSet(members, children);
}

function insertMember(list: PathElement[], pe: PathElement): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareElements(list[mid]!, pe) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo < list.length && elementsEqual(list[lo]!, pe)) return;
  list.splice(lo, 0, pe);
}

/**
 * Adjusts a manager's set to schema changes since it was recorded: a structure that became
 * atomic is owned whole by whoever owned any part of it; one that became granular is owned
 * field by field (from the live object). Undefined when nothing changes. Schemaless (deduced)
 * types are never reconciled.
 */
export function reconcileWithSchema(set: FieldSet, live: JsonValue | undefined, t: SmdType): FieldSet | undefined {
  if (t.deduced) return undefined;
  // A set found in line with the type stays so (sets are immutable): decoded sets are shared
  // (fields-v1), so this walk is done once per set and type rather than on every write. A
  // verdict that looked at the live object holds while the structs it found empty still are.
  let inLine = reconciledSets.get(t);
  const emptyAt = inLine?.get(set);
  if (emptyAt !== undefined && emptyAt.every((p) => isEmptyAt(live, p))) return undefined;
  const toRemove = new FieldSet();
  let toAdd = new FieldSet();
  let changed = false;
  let liveSet: FieldSet | undefined;
  const path: PathElement[] = [];

  // toAdd grows by union only: unions share subtrees, which must never be mutated afterwards.
  const collapse = () => {
    toRemove.insert(path);
    toAdd = toAdd.union(FieldSet.of(path));
    changed = true;
  };
  // Paths of structs owned whole that were empty in the live object: the verdict depends on them.
  const checkedEmpty: Path[] = [];
  const granular = () => {
    // Nothing below the path in the live object (a defaulted empty struct such as a pod's
    // securityContext: {}): the path alone would be added, and the set already has it as a
    // member; spares walking the whole live object on every write of such an object.
    if (path.every((pe) => pe.kind === FIELD) && isEmptyAt(live, path)) {
      checkedEmpty.push(path.slice());
      return;
    }
    liveSet ??= toFieldSet(live, t);
    const add = FieldSet.of(path);
    let src: FieldSet | undefined = liveSet;
    for (const pe of path) src = src?.child(pe);
    if (src && path.length > 0) {
      let dst = add;
      for (let i = 0; i < path.length - 1; i++) dst = dst.descend(path[i]!);
      const node = dst.descend(path[path.length - 1]!);
      node.members.push(...src.members);
      node.children.push(...src.children);
    }
    toAdd = toAdd.union(add);
    changed = true;
  };

  const walk = (fields: FieldSet | undefined, type: SmdType, isAtomic: boolean): void => {
    if (type.map) {
      if (!isAtomic && type.map.atomic) {
        if (fields && fields.size() > 0) collapse();
        return;
      }
      if (isAtomic && !type.map.atomic) granular();
      if (fields) visit(fields, (pe) => (pe.kind === FIELD ? (type.map!.field(pe.name) ?? type.map!.element()) : type.map!.element()));
      return;
    }
    if (type.scalar) return;
    if (type.list) {
      if (!isAtomic && type.list.atomic) {
        collapse();
        return;
      }
      if (isAtomic && type.list.associative) granular();
      const elem = type.list.element();
      if (fields) visit(fields, () => elem);
    }
  };

  const visit = (fields: FieldSet, typeOf: (pe: PathElement) => SmdType | undefined): void => {
    for (const c of fields.children) {
      if (fields.hasMember(c.pe)) continue;
      const ct = typeOf(c.pe);
      if (!ct) continue;
      path.push(c.pe);
      walk(c.set, ct, false);
      path.pop();
    }
    for (const m of fields.members) {
      const ct = typeOf(m);
      if (!ct) continue;
      const sub = fields.child(m);
      path.push(m);
      walk(sub, ct, sub === undefined);
      path.pop();
    }
  };

  walk(set, t, false);
  if (!changed) {
    if (!inLine) reconciledSets.set(t, (inLine = new WeakMap()));
    inLine.set(set, checkedEmpty);
    return undefined;
  }
  return set.recursiveDifference(toRemove).union(toAdd);
}

/**
 * Per type, the sets reconcileWithSchema found in line with it, each with the paths (all field
 * names) that had to be empty in the live object for that verdict.
 */
const reconciledSets = new WeakMap<SmdType, WeakMap<FieldSet, readonly Path[]>>();

/** Nothing at `path` of `live`, or an empty object. */
function isEmptyAt(live: JsonValue | undefined, path: Path): boolean {
  const v = valueAt(live, path);
  return v === undefined || (isJsonObject(v) && isEmptyObject(v));
}

/** The value at a path of an object, for tests and diagnostics. */
export function valueAt(root: JsonValue | undefined, path: Path): JsonValue | undefined {
  let v = root;
  for (const pe of path) {
    if (v === undefined || v === null) return undefined;
    if (pe.kind === FIELD) v = isJsonObject(v) ? v[pe.name] : undefined;
    else if (Array.isArray(v)) {
      if (pe.kind === KEY) v = v.find((item) => isJsonObject(item) && pe.fields.every(([k, x]) => valuesEqual(item[k], x)));
      else if (pe.kind === 3) v = v[pe.index];
      else v = v.find((item) => valuesEqual(item, pe.value));
    } else return undefined;
  }
  return v;
}
