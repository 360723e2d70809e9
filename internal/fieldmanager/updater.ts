// internal/fieldmanager/updater owns the ownership arithmetic of structured-merge-diff's
// Updater, on decoded managed fields (manager identifier → owned set, apiVersion, applied?):
//   update — a non-apply write: every other manager loses the fields whose value changed or
//            that were removed; the writer gains the changed and added ones. Never conflicts.
//   apply  — an apply body is merged into the live object; the applier owns exactly the body's
//            fields; fields it applied last time, left out now and owned by nobody else are
//            pruned; a changed field another manager owns is a conflict unless forced, in which
//            case that manager loses it. Unchanged values shared with other managers are shared.
// Both first reconcile every manager's set with the current schema. Objects of one kind are
// assumed to have the same field paths in every apiVersion (there is no conversion here).
// Imports: patch/json-value, fieldmanager/{field-set,path-element,smd-type,typed-value}.

import { isJsonObject, type JsonObject, type JsonValue } from '../patch/json-value.js';
import { FieldSet } from './field-set.js';
import type { SmdType } from './smd-type.js';
import {
  diffValues,
  ensureNamedFieldsAreMembers,
  mergeValues,
  reconcileWithSchema,
  removeItems,
  toFieldSet,
  type Comparison,
} from './typed-value.js';
import { valuesEqual } from './path-element.js';

export interface VersionedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  /** True for Apply entries. */
  readonly applied: boolean;
}

/** Managed fields keyed by manager identifier (see managed-fields). Owned by the caller. */
export type ManagedSets = Map<string, VersionedSet>;

/** Fields changed by an apply that other managers own; thrown unless the apply is forced. */
export class ApplyConflicts extends Error {
  constructor(readonly conflicts: ReadonlyMap<string, FieldSet>) {
    super('apply conflicts');
    this.name = 'ApplyConflicts';
  }
}

export interface UpdaterOptions {
  /** Fields nobody owns at this endpoint (reset by the strategy, for example `status`). */
  readonly ignored?: FieldSet;
}

export class Updater {
  constructor(
    private readonly type: SmdType,
    private readonly options: UpdaterOptions = {},
  ) {}

  /** Ownership after a non-apply write of `next` over `live` by `manager`. */
  update(live: JsonValue | undefined, next: JsonValue, version: string, managers: ManagedSets, manager: string): ManagedSets {
    const reconciled = this.reconcile(live, managers);
    const { managers: out, compare } = this.transfer(live, next, reconciled, manager, true);
    const previous = out.get(manager)?.set ?? new FieldSet();
    let set = previous.difference(compare.removed).union(compare.modified).union(compare.added);
    if (this.options.ignored) set = set.recursiveDifference(this.options.ignored);
    if (set.isEmpty()) out.delete(manager);
    else out.set(manager, { set, apiVersion: version, applied: false });
    return out;
  }

  /**
   * Merges `config` into `live` for `manager`. Returns the new object (undefined when the apply
   * changes nothing) and the new ownership. Throws ApplyConflicts unless `force`.
   */
  apply(
    live: JsonValue | undefined,
    config: JsonObject,
    version: string,
    managers: ManagedSets,
    manager: string,
    force: boolean,
  ): { object: JsonValue | undefined; managers: ManagedSets } {
    const t = this.type;
    const reconciled = this.reconcile(live, managers);
    let merged: JsonValue = mergeValues(live, config, t) ?? {};
    const lastSet = reconciled.get(manager);
    let set = toFieldSet(config, t);
    if (this.options.ignored) set = set.recursiveDifference(this.options.ignored);
    reconciled.set(manager, { set, apiVersion: version, applied: true });
    merged = this.prune(merged, reconciled, lastSet, set);
    const { managers: out } = this.transfer(live, merged, reconciled, manager, force);
    if (set.isEmpty()) out.delete(manager);
    const unchanged = live !== undefined && valuesEqual(live, merged);
    return { object: unchanged ? undefined : merged, managers: out };
  }

  private reconcile(live: JsonValue | undefined, managers: ManagedSets): ManagedSets {
    const out: ManagedSets = new Map();
    for (const [id, vs] of managers) {
      const set = reconcileWithSchema(vs.set, live, this.type);
      out.set(id, set ? { ...vs, set } : vs);
    }
    return out;
  }

  /**
   * Takes changed fields away from the managers other than `workflow` (conflicts unless `force`)
   * and removed fields away from everybody else; drops managers left with nothing.
   */
  private transfer(
    oldObject: JsonValue | undefined,
    newObject: JsonValue,
    managers: ManagedSets,
    workflow: string,
    force: boolean,
  ): { managers: ManagedSets; compare: Comparison } {
    let compare = diffValues(oldObject, newObject, this.type);
    const ignored = this.options.ignored;
    if (ignored) {
      compare = {
        added: compare.added.recursiveDifference(ignored),
        modified: compare.modified.recursiveDifference(ignored),
        removed: compare.removed.recursiveDifference(ignored),
      };
    }
    const changed = compare.modified.union(compare.added);
    const conflicts = new Map<string, FieldSet>();
    const removedAny = !compare.removed.isEmpty();
    for (const [id, vs] of managers) {
      if (id === workflow) continue;
      const conflict = vs.set.intersection(changed);
      if (!conflict.isEmpty()) conflicts.set(id, conflict);
    }
    if (!force && conflicts.size > 0) throw new ApplyConflicts(conflicts);
    const out: ManagedSets = new Map();
    for (const [id, vs] of managers) {
      let set = vs.set;
      if (id !== workflow) {
        const conflict = conflicts.get(id);
        if (conflict) set = set.difference(conflict);
        if (removedAny) set = set.difference(compare.removed);
      }
      if (!set.isEmpty() || id === workflow) out.set(id, set === vs.set ? vs : { ...vs, set });
    }
    return { managers: out, compare };
  }

  /**
   * Removes what the applier applied last time but not now, unless another manager (or the new
   * body) owns it; fields nobody ever applied (set by updaters or defaults) stay.
   */
  private prune(merged: JsonValue, managers: ManagedSets, lastSet: VersionedSet | undefined, applied: FieldSet): JsonValue {
    if (!lastSet || lastSet.set.isEmpty()) return merged;
    // An applier that still applies everything it applied last time relinquishes nothing: the
    // new body's set, with its named parents, holds every prefix of every path it had, so the
    // full computation below removes nothing. The common case (the same fields, new values)
    // skips its four walks of the merged object.
    if (lastSet.set.isSubsetOf(applied)) return merged;
    return pruneRelinquished(merged, managers, lastSet.set, this.type);
  }
}

/**
 * structured-merge-diff's prune: `merged` without the fields of `last` (the applier's previous
 * set) that no manager in `managers` (the applier's new set included) owns; fields nobody ever
 * applied stay. Exported for the test that checks the shortcut in Updater.prune against it.
 */
export function pruneRelinquished(merged: JsonValue, managers: ManagedSets, lastSet: FieldSet, t: SmdType): JsonValue {
  const ensure = (s: FieldSet) => ensureNamedFieldsAreMembers(s, t);
  const last = ensure(lastSet);
  const pruned = root(removeItems(merged, last, t));

  // Add back what any manager (the applier's new body included) owns.
  let owned = new FieldSet();
  for (const vs of managers.values()) owned = owned.union(vs.set);
  const mergedSet = ensure(toFieldSet(merged, t));
  const prunedSet = ensure(toFieldSet(pruned, t));
  const prunedOwned = root(removeItems(merged, mergedSet.difference(prunedSet.union(ensure(owned))), t));

  // Add back what the applier never owned (dangling items): only its own fields go.
  const finalSet = ensure(toFieldSet(prunedOwned, t));
  return root(removeItems(merged, mergedSet.difference(finalSet).intersection(last), t));
}

const root = (v: JsonValue): JsonValue => (v === null || !isJsonObject(v) ? (v ?? {}) : v);
