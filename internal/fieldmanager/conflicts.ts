// internal/fieldmanager/conflicts owns the 409 an apply answers when it would change fields
// other managers own: one cause per conflicting field (reason FieldManagerConflict, the field
// path, "conflict with <manager>"), and the message kubectl prints —
//   Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas
//   Apply failed with 2 conflicts: conflicts with "a":\n- .spec.replicas\n- .spec.paused
// Managers are named as upstream prints them (`"x" with subresource "status"`, `"x" using apps/v1`).
// Imports: apierrors, fieldmanager/{field-set,managed-fields,path-element}.

import { StatusError, type StatusCause } from '../apierrors/status.js';
import type { FieldSet } from './field-set.js';
import { parseManagerIdentifier } from './managed-fields.js';
import { compareStrings, pathString } from './path-element.js';

export const FIELD_MANAGER_CONFLICT = 'FieldManagerConflict';

/** How upstream names a manager identifier in conflict messages. */
export function printManager(id: string): string {
  const info = parseManagerIdentifier(id);
  let s = JSON.stringify(info.manager);
  if (info.subresource) s += ` with subresource ${JSON.stringify(info.subresource)}`;
  if (info.operation === 'Update') s += ` using ${info.apiVersion ?? ''}`;
  return s;
}

/** The 409 for conflicts by manager identifier (managers sorted, paths in set order). */
export function applyConflictError(conflicts: ReadonlyMap<string, FieldSet>): StatusError {
  const managers = [...conflicts.keys()].sort(compareStrings);
  const byManager = managers.map((id) => ({ name: printManager(id), paths: conflicts.get(id)!.paths().map(pathString) }));
  const causes: StatusCause[] = [];
  for (const { name, paths } of byManager) {
    for (const field of paths) causes.push({ reason: FIELD_MANAGER_CONFLICT, message: `conflict with ${name}`, field });
  }
  let message: string;
  if (causes.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${byManager[0]!.name}: ${causes[0]!.field}`;
  } else {
    const lines: string[] = [];
    for (const { name, paths } of byManager) {
      lines.push(`conflicts with ${name}:`);
      for (const p of paths) lines.push(`- ${p}`);
    }
    message = `Apply failed with ${causes.length} conflicts: ${lines.join('\n')}`;
  }
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: 'Conflict',
    details: { causes },
    code: 409,
  });
}
