// internal/registry/delete-options owns DeleteOptions: reading them from the body or query,
// and validating them (propagation policy values, orphanDependents vs propagationPolicy, the
// forced-deletion option's exclusive rules). Imports: apierrors, codec/query-params.

import { errors } from '../apierrors/status.js';
import { fieldErrors, type FieldError } from '../apierrors/field-errors.js';
import { queryBool } from '../codec/query-params.js';

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  dryRun: boolean;
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

const POLICIES = ['Foreground', 'Background', 'Orphan'] as const;

/** A boolean option from the query (read as `queryBool` reads it) or else from the body (must be a JSON boolean). */
function boolOption(query: URLSearchParams, body: Record<string, unknown>, name: string): boolean | undefined {
  const fromQuery = queryBool(query.get(name));
  if (fromQuery !== undefined) return fromQuery;
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw errors.badRequest(`invalid DeleteOptions: ${name} must be a boolean, not ${JSON.stringify(v)}`);
  return v;
}

function parseDryRun(values: unknown): boolean {
  const list = Array.isArray(values) ? values : values === undefined ? [] : [values];
  for (const v of list) {
    if (v !== 'All' && v !== '') throw errors.badRequest(`Invalid dryRun value: "${String(v)}": supported values: "All"`);
  }
  return list.includes('All');
}

/** Merges the body (a DeleteOptions object, maybe empty) with query parameters (the query wins). */
export function readDeleteOptions(body: Record<string, unknown> | undefined, query: URLSearchParams): DeleteOptions {
  const b = body ?? {};
  if (b.kind !== undefined && b.kind !== 'DeleteOptions') throw errors.badRequest(`expected a DeleteOptions body, got kind ${String(b.kind)}`);
  const out: DeleteOptions = { dryRun: parseDryRun(query.has('dryRun') ? query.getAll('dryRun') : b.dryRun) };
  const grace = query.get('gracePeriodSeconds') ?? (b.gracePeriodSeconds as number | undefined);
  if (grace !== undefined && grace !== null) {
    const n = Number(grace);
    if (!Number.isInteger(n)) throw errors.badRequest(`invalid gracePeriodSeconds: ${String(grace)}`);
    out.gracePeriodSeconds = n;
  }
  const policy = query.get('propagationPolicy') ?? (b.propagationPolicy as string | undefined);
  if (policy !== undefined && policy !== null) out.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  const orphan = boolOption(query, b, 'orphanDependents');
  if (orphan !== undefined) out.orphanDependents = orphan;
  const force = boolOption(query, b, 'ignoreStoreReadErrorWithClusterBreakingPotential');
  if (force !== undefined) out.ignoreStoreReadErrorWithClusterBreakingPotential = force;
  if (b.preconditions && typeof b.preconditions === 'object') {
    const p = b.preconditions as Record<string, unknown>;
    out.preconditions = {};
    if (typeof p.uid === 'string') out.preconditions.uid = p.uid;
    if (typeof p.resourceVersion === 'string') out.preconditions.resourceVersion = p.resourceVersion;
  }
  return out;
}

/** Field errors of a DeleteOptions (422 Invalid on `DeleteOptions`). */
export function validateDeleteOptions(o: DeleteOptions, unsafeDeletionEnabled: boolean): FieldError[] {
  // Upstream's ValidateDeleteOptions, in its order. A negative gracePeriodSeconds is no error:
  // rest.BeforeDelete reads it as 1 (see normalizeGracePeriod).
  const errs: FieldError[] = [];
  if (o.orphanDependents !== undefined && o.propagationPolicy !== undefined) {
    errs.push(fieldErrors.invalid('propagationPolicy', o.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (o.propagationPolicy !== undefined && !(POLICIES as readonly string[]).includes(o.propagationPolicy)) {
    errs.push(fieldErrors.notSupported('propagationPolicy', o.propagationPolicy, [...POLICIES, 'nil']));
  }
  if (o.ignoreStoreReadErrorWithClusterBreakingPotential) {
    if (!unsafeDeletionEnabled) {
      errs.push(fieldErrors.forbidden('ignoreStoreReadErrorWithClusterBreakingPotential', 'not allowed while the feature gate AllowUnsafeMalformedObjectDeletion is disabled'));
    }
    const exclusive: Array<[keyof DeleteOptions, boolean]> = [
      ['dryRun', o.dryRun],
      ['gracePeriodSeconds', o.gracePeriodSeconds !== undefined],
      ['orphanDependents', o.orphanDependents !== undefined],
      ['preconditions', o.preconditions !== undefined],
      ['propagationPolicy', o.propagationPolicy !== undefined],
    ];
    for (const [field, set] of exclusive) {
      if (set) errs.push(fieldErrors.invalid(field, '', 'cannot be set together with ignoreStoreReadErrorWithClusterBreakingPotential'));
    }
  }
  return errs;
}

/** A negative grace period means 1 second on the delete path, as upstream's rest.BeforeDelete has it. */
export function normalizeGracePeriod(o: DeleteOptions): DeleteOptions {
  return o.gracePeriodSeconds !== undefined && o.gracePeriodSeconds < 0 ? { ...o, gracePeriodSeconds: 1 } : o;
}
