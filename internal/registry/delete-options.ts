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

/** The finalizers the garbage collector acts on (upstream's metav1 names, under both namings). */
export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

/**
 * What deleting an object without a policy does to its dependents (upstream's
 * DefaultGarbageCollectionPolicy): `orphan` for the legacy versions of the workload kinds, as
 * upstream keeps them for old clients; `unsupported` for events, which the collector never
 * finalizes; `delete` (background) otherwise.
 */
export type GarbageCollectionPolicy = 'delete' | 'orphan' | 'unsupported';

const LEGACY_WORKLOAD_VERSIONS: Readonly<Record<string, readonly string[]>> = {
  'apps/deployments': ['extensions/v1beta1', 'apps/v1beta1', 'apps/v1beta2'],
  'apps/replicasets': ['extensions/v1beta1', 'apps/v1beta2'],
  'apps/daemonsets': ['extensions/v1beta1', 'apps/v1beta2'],
  'apps/statefulsets': ['apps/v1beta1', 'apps/v1beta2'],
  'core/replicationcontrollers': ['/v1'],
  // The same objects requested through extensions (upstream served them there too).
  'extensions/deployments': ['extensions/v1beta1'],
  'extensions/replicasets': ['extensions/v1beta1'],
  'extensions/daemonsets': ['extensions/v1beta1'],
};

/**
 * The default policy for a delete request through `request` (upstream group/version of the
 * request, as upstream's strategies read it from the request info) of objects stored as
 * `storageResource` (`<upstream group or core>/<resource>`, events in `core/events`).
 */
export function defaultGarbageCollectionPolicy(storageResource: string, request: { upstreamGroup: string; version: string }): GarbageCollectionPolicy {
  const key = storageResource.startsWith('/') ? `core${storageResource}` : storageResource;
  if (key === 'core/events') return 'unsupported';
  const legacy = LEGACY_WORKLOAD_VERSIONS[key];
  return legacy?.includes(`${request.upstreamGroup}/${request.version}`) ? 'orphan' : 'delete';
}

/**
 * The object's finalizers after a delete with `options` (upstream's
 * deletionFinalizersForGarbageCollection): both collector finalizers are dropped and added back
 * as the options, else the finalizers already present, else the default policy say. `changed`
 * is false when the set is the same.
 */
export function deletionFinalizers(
  existing: readonly string[],
  options: Pick<DeleteOptions, 'orphanDependents' | 'propagationPolicy'>,
  policy: GarbageCollectionPolicy,
): { changed: boolean; finalizers: string[] } {
  if (policy === 'unsupported') return { changed: false, finalizers: [...existing] };
  let orphan: boolean;
  let foreground: boolean;
  if (options.orphanDependents !== undefined) {
    orphan = options.orphanDependents;
    foreground = false;
  } else if (options.propagationPolicy !== undefined) {
    orphan = options.propagationPolicy === 'Orphan';
    foreground = options.propagationPolicy === 'Foreground';
  } else {
    // The first collector finalizer present decides; else the kind's default.
    const first = existing.find((f) => f === FINALIZER_ORPHAN || f === FINALIZER_FOREGROUND);
    orphan = first ? first === FINALIZER_ORPHAN : policy === 'orphan';
    foreground = first === FINALIZER_FOREGROUND;
  }
  const finalizers = existing.filter((f) => f !== FINALIZER_ORPHAN && f !== FINALIZER_FOREGROUND);
  if (orphan) finalizers.push(FINALIZER_ORPHAN);
  if (foreground) finalizers.push(FINALIZER_FOREGROUND);
  const before = new Set(existing);
  const after = new Set(finalizers);
  const changed = before.size !== after.size || [...after].some((f) => !before.has(f));
  return { changed, finalizers: changed ? finalizers : [...existing] };
}
