// internal/registry/strategy owns the per-kind behaviour the schema data cannot express: which
// kinds may be created by PUT, which accept unconditional updates, how the status sub-resource
// splits writes, when generation moves, and graceful deletion. The generic
// registry asks the strategy; a kind without an entry gets the defaults derived from the
// catalog. (Selectable fields live in internal/selectors.) Imports: schema/catalog (types),
// patch/json-value (equality).

import type { Naming } from '../naming/naming.js';
import { jsonEqual } from '../patch/json-value.js';
import type { ResourceInfo } from '../schema/catalog.js';
import { builtinSchemas } from '../schema/openapi-index.js';

export type JsonObject = Record<string, unknown>;

export interface DeleteDecision {
  /** Seconds until removal; 0 removes at once (when no finalizers remain). */
  gracePeriodSeconds: number;
}

export interface Strategy {
  /** Has a status sub-resource: main-resource writes keep the stored status; status writes change only status. */
  readonly hasStatus: boolean;
  /** PUT of a missing object creates it. */
  readonly allowCreateOnUpdate: boolean;
  /** PUT without metadata.resourceVersion overwrites instead of failing. */
  readonly allowUnconditionalUpdate: boolean;
  /** Extra preparation of a new object after the generic metadata is set. */
  prepareForCreate(obj: JsonObject): void;
  /** Extra preparation of an update; `old` is the stored object (read-only). */
  prepareForUpdate(obj: JsonObject, old: JsonObject): void;
  /** Extra preparation of a status sub-resource write. */
  prepareForStatusUpdate(obj: JsonObject, old: JsonObject): void;
  /** A create keeps the status it is given although the kind has a status sub-resource (nodes, as upstream). */
  readonly keepsStatusOnCreate: boolean;
  /** Sets generation: the stored one, plus one when anything but metadata and status changed. Run after defaulting. */
  bumpGeneration(obj: JsonObject, old: JsonObject): void;
  /** The grace period a delete should use (pods with a node wait for their node agent). */
  gracefulDelete(obj: JsonObject, requested: number | undefined): DeleteDecision;
  /** An immediate delete answers with the object instead of a Success Status (as upstream for these kinds). */
  readonly returnDeletedObject: boolean;
}

const meta = (obj: JsonObject): JsonObject => (obj.metadata ??= {}) as JsonObject;
const get = (obj: JsonObject, ...path: string[]): unknown =>
  path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as JsonObject)[k] : undefined), obj);
const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

/** Kinds whose delete answers with the deleted object upstream. */
const RETURN_DELETED = new Set(['/pods', '/serviceaccounts', 'storage.k8s.io/storageclasses', '/namespaces']);

/** Kinds upstream lets PUT create. */
const CREATE_ON_UPDATE = new Set(['/events', 'events.k8s.io/events', 'coordination.k8s.io/leases', '/nodes', '/endpoints', '/limitranges', 'coordination.k8s.io/leasecandidates', 'discovery.k8s.io/endpointslices']);

/** The feature gates that change what a kind keeps of a write. */
export interface StrategyGates {
  nodeDeclaredFeatures?: boolean;
}

interface KindOverrides {
  keepsStatusOnCreate?: boolean;
  prepareForCreate?(obj: JsonObject): void;
  prepareForUpdate?(obj: JsonObject, old: JsonObject): void;
  prepareForStatusUpdate?(obj: JsonObject, old: JsonObject): void;
  gracefulDelete?(obj: JsonObject, requested: number | undefined): DeleteDecision;
}

/**
 * A field behind a gate that is off is dropped from a write, unless the stored object already
 * has it (a cluster that turned the gate off again keeps what was written), as upstream's
 * dropDisabledFields does.
 */
function dropDisabledStatusField(obj: JsonObject, old: JsonObject | undefined, field: string): void {
  const status = obj.status as JsonObject | undefined;
  if (!status || !(field in status)) return;
  if (old && (old.status as JsonObject | undefined)?.[field] !== undefined) return;
  delete status[field];
}

const overridesFor = (naming: Naming, gates: StrategyGates): Record<string, KindOverrides> => ({
  '/nodes': {
    // The node agent registers its node with its status (capacity, addresses, info).
    keepsStatusOnCreate: true,
    prepareForCreate(obj) {
      if (!gates.nodeDeclaredFeatures) dropDisabledStatusField(obj, undefined, 'declaredFeatures');
    },
    prepareForUpdate(obj, old) {
      if (!gates.nodeDeclaredFeatures) dropDisabledStatusField(obj, old, 'declaredFeatures');
    },
    prepareForStatusUpdate(obj, old) {
      if (!gates.nodeDeclaredFeatures) dropDisabledStatusField(obj, old, 'declaredFeatures');
    },
  },
  'apiextensions.k8s.io/customresourcedefinitions': {
    prepareForCreate(obj) {
      // Deleting a definition first deletes its custom resources; this finalizer holds it until then.
      const m = meta(obj);
      const finalizer = `customresourcecleanup.${naming.group('apiextensions.k8s.io')}`;
      const finalizers = Array.isArray(m.finalizers) ? (m.finalizers as string[]) : [];
      if (!finalizers.includes(finalizer)) m.finalizers = [...finalizers, finalizer];
    },
  },
  '/pods': {
    gracefulDelete(obj, requested) {
      // A pod that no node runs has nothing to stop: it goes at once, as upstream does.
      const scheduled = Boolean(get(obj, 'spec', 'nodeName'));
      const phase = str(get(obj, 'status', 'phase'));
      if (!scheduled || phase === 'Succeeded' || phase === 'Failed') return { gracePeriodSeconds: 0 };
      const spec = get(obj, 'spec', 'terminationGracePeriodSeconds');
      const grace = requested ?? (typeof spec === 'number' ? spec : 30);
      return { gracePeriodSeconds: Math.max(0, grace) };
    },
  },
});

/**
 * Whether two objects have the same members apart from the `skip` keys, compared in place
 * (no copies without those keys: this runs on every update).
 */
export function equalExcept(a: JsonObject, b: JsonObject, skip: (key: string) => boolean): boolean {
  const has = Object.prototype.hasOwnProperty;
  let counted = 0;
  for (const k of Object.keys(a)) {
    if (skip(k)) continue;
    if (!has.call(b, k) || !jsonEqual(a[k], b[k])) return false;
    counted++;
  }
  for (const k of Object.keys(b)) if (!skip(k)) counted--;
  return counted === 0;
}

const metadataOrStatus = (k: string): boolean => k === 'metadata' || k === 'status';

/** Spec changed? Everything but metadata and status counts, as for custom resources upstream. */
export function specChanged(obj: JsonObject, old: JsonObject): boolean {
  return !equalExcept(obj, old, metadataOrStatus);
}

export function strategyFor(resource: ResourceInfo, naming: Naming, gates: StrategyGates = {}): Strategy {
  const id = `${resource.upstreamGroup}/${resource.resource}`;
  const o = overridesFor(naming, gates)[id] ?? {};
  const hasStatus = resource.subresources.has('status');
  // Generation tracks spec changes, so only kinds with a spec carry one (a ConfigMap has none).
  // Looked up on the first write, so start-up does not load the schemas.
  let specKnown: boolean | undefined;
  const hasSpec = (): boolean =>
    (specKnown ??= resource.schemaName ? builtinSchemas.get(resource.schemaName)?.properties?.spec !== undefined : true);
  return {
    hasStatus,
    allowCreateOnUpdate: CREATE_ON_UPDATE.has(id),
    allowUnconditionalUpdate: true,
    returnDeletedObject: RETURN_DELETED.has(id),
    keepsStatusOnCreate: o.keepsStatusOnCreate ?? false,
    prepareForCreate(obj) {
      if (hasSpec()) meta(obj).generation = 1;
      o.prepareForCreate?.(obj);
    },
    prepareForUpdate(obj, old) {
      o.prepareForUpdate?.(obj, old);
    },
    prepareForStatusUpdate(obj, old) {
      o.prepareForStatusUpdate?.(obj, old);
    },
    bumpGeneration(obj, old) {
      if (!hasSpec()) return;
      const oldGeneration = typeof meta(old).generation === 'number' ? (meta(old).generation as number) : 1;
      meta(obj).generation = specChanged(obj, old) ? oldGeneration + 1 : oldGeneration;
    },
    gracefulDelete: (obj, requested) => (o.gracefulDelete ? o.gracefulDelete(obj, requested) : { gracePeriodSeconds: 0 }),
  };
}
