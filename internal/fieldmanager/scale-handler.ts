// internal/fieldmanager/scale-handler owns the translation of field ownership between a
// workload and its scale sub-resource (§2.7), so that server-side apply on /scale sees, and
// leaves behind, the same owners of the replicas field as an apply on the workload itself:
//   - toSubresource: the workload's entries that own its replicas path become Scale entries
//     owning `.spec.replicas` at the Scale's apiVersion (every other entry is invisible there);
//   - toParent: after the write, a workload entry whose Scale counterpart still owns
//     `.spec.replicas` is kept as it was; one whose counterpart lost it loses the replicas path
//     (and disappears if that was all it owned); Scale entries that own `.spec.replicas` and
//     are not the counterpart of a workload entry (the scale writer, typically with
//     `subresource: scale`) become workload entries owning the replicas path at the
//     workload's apiVersion.
// Upstream's ScaleHandler does the same; where we differ, on purpose:
//   - Update entries are matched to their Scale counterpart by manager, operation and
//     subresource (their identity with the apiVersion swapped). Upstream matches identifiers,
//     which for Update entries include the apiVersion and so never match: an Update entry that
//     co-owns replicas comes back as a second entry with the same identity.
//   - Entries at an apiVersion whose replicas path is unknown are kept as they are (upstream
//     drops them from the workload).
//   - Times: kept entries keep theirs, Scale-born entries carry the Scale entry's time (the
//     write's time for the writer), as our other scale writes do; upstream looks the time up
//     under the Scale identifier in the workload's entries, which usually finds none.
// Imports: fieldmanager/{field-set,managed-fields,path-element}.

import { FieldSet } from './field-set.js';
import {
  decodeManagedFields,
  emptyManaged,
  encodeManagedFields,
  managerIdentifier,
  parseManagerIdentifier,
  type Managed,
  type ManagedFieldsEntry,
} from './managed-fields.js';
import { fieldElement, type Path } from './path-element.js';

/** Where replicas live in every Scale. */
export const SCALE_REPLICAS_PATH: Path = [fieldElement('spec'), fieldElement('replicas')];

/**
 * The workload's replicas path at an apiVersion: a path, null when objects of that version have
 * no scale sub-resource (custom resources), undefined when the version is unknown here.
 */
export type ReplicasPaths = (apiVersion: string) => Path | null | undefined;

/** A dotted custom-resource path (`.spec.replicas`) as field steps; null for anything else. */
export function replicasPathFromJsonPath(jsonPath: string): Path | null {
  const trimmed = jsonPath.replace(/^\./, '');
  if (trimmed === '' || /[[\]{}]/.test(trimmed)) return null;
  const parts = trimmed.split('.');
  if (parts.some((p) => p === '')) return null;
  return parts.map(fieldElement);
}

/** The same manager identity at another apiVersion (only Update identities carry one). */
function withApiVersion(id: string, apiVersion: string): string {
  const info = parseManagerIdentifier(id);
  return info.operation === 'Update' ? managerIdentifier({ ...info, apiVersion }) : id;
}

/** Decodes leniently: unreadable managed fields count as none, as the field manager treats them. */
function decode(entries: unknown): Managed {
  try {
    return decodeManagedFields(entries);
  } catch {
    return emptyManaged();
  }
}

export class ScaleHandler {
  /**
   * `parentEntries`: the workload's stored `metadata.managedFields`; `parentApiVersion`: the
   * version the workload is written at; `scaleApiVersion`: the Scale's (autoscaling/v1).
   */
  constructor(
    private readonly parentEntries: unknown,
    private readonly parentApiVersion: string,
    private readonly scaleApiVersion: string,
    private readonly paths: ReplicasPaths,
  ) {}

  /** The Scale's managed fields: the workload's owners of replicas, owning `.spec.replicas`. */
  toSubresource(): ManagedFieldsEntry[] | undefined {
    const parent = decode(this.parentEntries);
    const out = emptyManaged();
    for (const [id, vs] of parent.sets) {
      const path = this.paths(vs.apiVersion);
      if (!path || !vs.set.has(path)) continue;
      const scaleId = withApiVersion(id, this.scaleApiVersion);
      // Two Update entries of one manager at different versions meet here; together they own it.
      const previous = out.sets.get(scaleId);
      out.sets.set(scaleId, { set: previous ? previous.set : FieldSet.of(SCALE_REPLICAS_PATH), apiVersion: this.scaleApiVersion, applied: vs.applied });
      const time = parent.times.get(id);
      if (time && (!out.times.has(scaleId) || out.times.get(scaleId)! < time)) out.times.set(scaleId, time);
    }
    return encodeManagedFields(out);
  }

  /** The workload's managed fields after a write through the Scale left `scaleEntries`. */
  toParent(scaleEntries: unknown): ManagedFieldsEntry[] | undefined {
    const parent = decode(this.parentEntries);
    const scale = decode(scaleEntries);
    const out = emptyManaged();
    const remaining = new Map(scale.sets);
    const keep = (id: string, set: FieldSet, apiVersion: string, applied: boolean): void => {
      out.sets.set(id, { set, apiVersion, applied });
      const time = parent.times.get(id);
      if (time) out.times.set(id, time);
      const stored = parent.stored.get(id);
      if (stored) out.stored.set(id, stored);
    };
    for (const [id, vs] of parent.sets) {
      const path = this.paths(vs.apiVersion);
      if (!path || !vs.set.has(path)) {
        keep(id, vs.set, vs.apiVersion, vs.applied);
        continue;
      }
      const scaleId = withApiVersion(id, this.scaleApiVersion);
      const counterpart = remaining.get(scaleId);
      if (counterpart?.set.has(SCALE_REPLICAS_PATH)) {
        // Still an owner of replicas after the write: the entry stays as it was.
        keep(id, vs.set, vs.apiVersion, vs.applied);
        remaining.delete(scaleId);
        continue;
      }
      remaining.delete(scaleId);
      const rest = vs.set.difference(FieldSet.of(path));
      if (!rest.isEmpty()) keep(id, rest, vs.apiVersion, vs.applied);
    }
    const target = this.paths(this.parentApiVersion);
    if (target) {
      for (const [scaleId, vs] of remaining) {
        if (!vs.set.has(SCALE_REPLICAS_PATH)) continue;
        const id = withApiVersion(scaleId, this.parentApiVersion);
        const previous = out.sets.get(id);
        const set = FieldSet.of(target);
        out.sets.set(id, { set: previous ? previous.set.union(set) : set, apiVersion: this.parentApiVersion, applied: vs.applied });
        const time = scale.times.get(scaleId);
        if (time) out.times.set(id, time);
      }
    }
    return encodeManagedFields(out);
  }
}
