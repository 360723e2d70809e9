// internal/fieldmanager/field-set owns the set of field paths a manager owns, as a trie in
// structured-merge-diff's shape: at each level, sorted `members` (paths that are in the set) and
// sorted `children` (elements below which some path is in the set; being a child does not make
// the element a member). Set algebra (union, intersection, difference, recursive difference)
// follows the same definitions, so ownership arithmetic matches upstream's.
// Sets are built with `insert` and treated as immutable afterwards: the operations return new
// sets that may share unchanged subtrees with their inputs.
// Imports: fieldmanager/path-element.

import { compareElements, elementsEqual, pathString, type Path, type PathElement } from './path-element.js';

export interface FieldSetChild {
  readonly pe: PathElement;
  readonly set: FieldSet;
}

export class FieldSet {
  constructor(
    readonly members: PathElement[] = [],
    readonly children: FieldSetChild[] = [],
  ) {}

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path (not its parents). Only for sets under construction. */
  insert(path: Path): void {
    if (path.length === 0) return; // nobody owns the whole object
    let node: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) node = node.descend(path[i]!);
    insertSorted(node.members, path[path.length - 1]!);
  }

  /** The child set for `pe`, created when missing. Only for sets under construction. */
  descend(pe: PathElement): FieldSet {
    const c = this.children;
    let lo = 0;
    let hi = c.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareElements(c[mid]!.pe, pe) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo < c.length && elementsEqual(c[lo]!.pe, pe)) return c[lo]!.set;
    const set = new FieldSet();
    c.splice(lo, 0, { pe, set });
    return set;
  }

  hasMember(pe: PathElement): boolean {
    return search(this.members, pe, (x) => x) >= 0;
  }

  /** The subset below `pe` (the child set), or undefined. */
  child(pe: PathElement): FieldSet | undefined {
    const i = search(this.children, pe, (x) => x.pe);
    return i >= 0 ? this.children[i]!.set : undefined;
  }

  /** The subset below `pe`, relative to it; empty when none. */
  withPrefix(pe: PathElement): FieldSet {
    return this.child(pe) ?? EMPTY;
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    let node: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && node; i++) node = node.child(path[i]!);
    return node ? node.hasMember(path[path.length - 1]!) : false;
  }

  isEmpty(): boolean {
    if (this.members.length > 0) return false;
    for (const c of this.children) if (!c.set.isEmpty()) return false;
    return true;
  }

  /** Number of members at every level. */
  size(): number {
    let n = this.members.length;
    for (const c of this.children) n += c.set.size();
    return n;
  }

  union(other: FieldSet): FieldSet {
    if (other.isEmptyShallow()) return this;
    if (this.isEmptyShallow()) return other;
    return new FieldSet(
      mergeSorted(this.members, other.members, (x) => x, true, true, true),
      mergeChildren(this.children, other.children, (a, b) => a.union(b), true, true),
    );
  }

  /** Members present in both, at every level. */
  intersection(other: FieldSet): FieldSet {
    return new FieldSet(
      mergeSorted(this.members, other.members, (x) => x, false, true, false),
      mergeChildren(this.children, other.children, (a, b) => a.intersection(b), false, false),
    );
  }

  /** This set minus `other`'s members, level by level (a parent minus a child keeps the parent). */
  difference(other: FieldSet): FieldSet {
    if (other.isEmptyShallow()) return this;
    const members = mergeSorted(this.members, other.members, (x) => x, true, false, false);
    const children = mergeChildren(this.children, other.children, (a, b) => a.difference(b), true, false);
    // Nothing removed: the set itself, so that callers comparing by identity (the reuse of a
    // stored fieldsV1, remembered schema checks) need not walk it.
    if (members.length === this.members.length && sameChildren(children, this.children)) return this;
    return new FieldSet(members, children);
  }

  /** Like difference, but a member of `other` also removes everything below it. */
  recursiveDifference(other: FieldSet): FieldSet {
    if (other.isEmptyShallow()) return this;
    const children: FieldSetChild[] = [];
    for (const c of this.children) {
      if (other.hasMember(c.pe)) continue;
      const o = other.child(c.pe);
      if (!o) {
        children.push(c);
        continue;
      }
      const d = c.set.recursiveDifference(o);
      if (!d.isEmpty()) children.push({ pe: c.pe, set: d });
    }
    return new FieldSet(mergeSorted(this.members, other.members, (x) => x, true, false, false), children);
  }

  /** Whether every member path of this set is a member path of `other`. */
  isSubsetOf(other: FieldSet): boolean {
    if (this === other) return true;
    const m = this.members;
    const om = other.members;
    for (let i = 0, j = 0; i < m.length; i++) {
      while (j < om.length && compareElements(om[j]!, m[i]!) < 0) j++;
      if (j >= om.length || !elementsEqual(om[j]!, m[i]!)) return false;
    }
    const c = this.children;
    const oc = other.children;
    for (let i = 0, j = 0; i < c.length; i++) {
      while (j < oc.length && compareElements(oc[j]!.pe, c[i]!.pe) < 0) j++;
      if (j >= oc.length || !elementsEqual(oc[j]!.pe, c[i]!.pe)) {
        if (c[i]!.set.isEmpty()) continue;
        return false;
      }
      if (!c[i]!.set.isSubsetOf(oc[j]!.set)) return false;
    }
    return true;
  }

  equals(other: FieldSet): boolean {
    if (this === other) return true;
    if (this.members.length !== other.members.length || this.children.length !== other.children.length) return false;
    for (let i = 0; i < this.members.length; i++) if (!elementsEqual(this.members[i]!, other.members[i]!)) return false;
    for (let i = 0; i < this.children.length; i++) {
      const a = this.children[i]!;
      const b = other.children[i]!;
      if (!elementsEqual(a.pe, b.pe) || !a.set.equals(b.set)) return false;
    }
    return true;
  }

  /** Calls `fn` for every member path: a level's members first, then its children (preorder). */
  forEachPath(fn: (path: Path) => void, prefix: PathElement[] = []): void {
    for (const m of this.members) fn([...prefix, m]);
    for (const c of this.children) {
      prefix.push(c.pe);
      c.set.forEachPath(fn, prefix);
      prefix.pop();
    }
  }

  paths(): Path[] {
    const out: Path[] = [];
    this.forEachPath((p) => out.push(p));
    return out;
  }

  /** One path per line, as upstream prints sets. */
  toString(): string {
    return this.paths().map(pathString).join('\n');
  }

  private isEmptyShallow(): boolean {
    return this.members.length === 0 && this.children.length === 0;
  }
}

const EMPTY = new FieldSet();
Object.freeze(EMPTY.members);
Object.freeze(EMPTY.children);

function search<T>(list: readonly T[], pe: PathElement, key: (x: T) => PathElement): number {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareElements(key(list[mid]!), pe);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

function insertSorted(list: PathElement[], pe: PathElement): void {
  let lo = 0;
  let hi = list.length;
  // Most inserts arrive in order: check the end first.
  if (hi > 0) {
    const c = compareElements(list[hi - 1]!, pe);
    if (c < 0) {
      list.push(pe);
      return;
    }
    if (c === 0) return;
  } else {
    list.push(pe);
    return;
  }
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareElements(list[mid]!, pe) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo < list.length && elementsEqual(list[lo]!, pe)) return;
  list.splice(lo, 0, pe);
}

/** Sorted merge keeping elements only in a, in both, and/or only in b. */
function mergeSorted<T>(
  a: readonly T[],
  b: readonly T[],
  key: (x: T) => PathElement,
  onlyA: boolean,
  both: boolean,
  onlyB: boolean,
): T[] {
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const c = compareElements(key(a[i]!), key(b[j]!));
    if (c < 0) {
      if (onlyA) out.push(a[i]!);
      i++;
    } else if (c > 0) {
      if (onlyB) out.push(b[j]!);
      j++;
    } else {
      if (both) out.push(a[i]!);
      i++;
      j++;
    }
  }
  if (onlyA) while (i < a.length) out.push(a[i++]!);
  if (onlyB) while (j < b.length) out.push(b[j++]!);
  return out;
}

function mergeChildren(
  a: readonly FieldSetChild[],
  b: readonly FieldSetChild[],
  combine: (x: FieldSet, y: FieldSet) => FieldSet,
  keepOnlyA: boolean,
  keepOnlyB: boolean,
): FieldSetChild[] {
  const out: FieldSetChild[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const c = compareElements(a[i]!.pe, b[j]!.pe);
    if (c < 0) {
      if (keepOnlyA) out.push(a[i]!);
      i++;
    } else if (c > 0) {
      if (keepOnlyB) out.push(b[j]!);
      j++;
    } else {
      const set = combine(a[i]!.set, b[j]!.set);
      // Upstream never keeps a child without members below it; neither do we.
      if (!set.isEmpty()) out.push(set === a[i]!.set ? a[i]! : { pe: a[i]!.pe, set });
      i++;
      j++;
    }
  }
  if (keepOnlyA) while (i < a.length) out.push(a[i++]!);
  if (keepOnlyB) while (j < b.length) out.push(b[j++]!);
  return out;
}

function sameChildren(a: readonly FieldSetChild[], b: readonly FieldSetChild[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export const EMPTY_FIELD_SET = EMPTY;
