// internal/registry/registry-set owns the registries of every served resource: one
// GenericRegistry per stored resource (shared by every version, and group, that serves it), the per-prefix
// attributes the watch cache needs (from the catalog alone: the cache exists before the
// registries, which read through it), and lookup from a request's resource.
// Imports: schema/catalog, selectors, watchcache (types), generic-registry, strategy, keys,
// hpa-conversion, event-conversion.

import { createHash } from 'node:crypto';
import type { ApiCatalog, ResourceInfo } from '../schema/catalog.js';
import type { ObjectAttributes, ResourceSpec } from '../watchcache/types.js';
import { GenericRegistry, type RegistryDeps } from './generic-registry.js';
import { resourcePrefix } from './keys.js';
import { strategyFor } from './strategy.js';
import { registerHpaConversion } from './hpa-conversion.js';
import { registerEventConversion } from './event-conversion.js';
import { FIELD_SETS_VERSION, fieldsetFor } from '../selectors/index.js';

registerHpaConversion();
registerEventConversion();

export class RegistrySet {
  private readonly byStorage = new Map<string, GenericRegistry>();

  constructor(
    private readonly catalog: ApiCatalog,
    private readonly deps: RegistryDeps,
  ) {
    for (const r of catalog.all()) this.ensure(r);
    // Custom resources come and go with their definitions.
    catalog.onChange(() => this.syncCustom());
  }

  private ensure(r: ResourceInfo): void {
    if (this.byStorage.has(r.storageResource)) return;
    const storage = storedAs(this.catalog, r);
    if (!storage) return;
    const reg = new GenericRegistry(storage, strategyFor(storage, this.catalog.naming, this.deps.strategyGates), this.deps);
    this.byStorage.set(storage.storageResource, reg);
  }

  /** Registers new custom resources and drops those no longer served (their data stays in the store). */
  private syncCustom(): void {
    const served = new Set<string>();
    for (const r of this.catalog.all()) {
      if (!r.custom) continue;
      served.add(r.storageResource);
      const existing = this.byStorage.get(r.storageResource);
      // A changed definition (new storage version, schema, scope) gets a fresh registry.
      if (existing && r.version === r.storageVersion && existing.storage !== r) this.byStorage.delete(r.storageResource);
      this.ensure(r);
    }
    for (const [key, reg] of this.byStorage) if (reg.storage.custom && !served.has(key)) this.byStorage.delete(key);
  }

  /** The admission chain writes go through (sub-resources that store nothing, as TokenRequest, run it too). */
  get admission(): RegistryDeps['admission'] {
    return this.deps.admission;
  }

  /** A registry for a resource that is not (or no longer) served, e.g. to clean up its objects. */
  detached(r: ResourceInfo): GenericRegistry {
    return new GenericRegistry(r, strategyFor(r, this.catalog.naming, this.deps.strategyGates), this.deps);
  }

  /** The registry serving a request's resource (any version), if it stores objects. */
  for(r: ResourceInfo): GenericRegistry | undefined {
    return this.byStorage.get(r.storageResource);
  }

  all(): IterableIterator<GenericRegistry> {
    return this.byStorage.values();
  }
}

/**
 * The resource a served one is stored as, when it stores objects: its storage version, which
 * for a resource served from another's storage (events.k8s.io Events) is that other resource.
 * A custom resource's other versions yield nothing: its storage version stands for them.
 */
function storedAs(catalog: ApiCatalog, r: ResourceInfo): ResourceInfo | undefined {
  const storage = r.custom ? (r.version === r.storageVersion ? r : undefined) : catalog.storageOf(r);
  if (!storage) return undefined;
  if (!storage.verbs.includes('create') && !storage.verbs.includes('get')) return undefined;
  return storage;
}

const stamps = new WeakMap<ResourceInfo, string>();

/**
 * What a resource's field sets are derived by: the derivation's version and the field names
 * (a custom resource's follow its definition's selectable fields). Field names are paths, so
 * the same name is derived the same way while the version stands.
 */
function fieldsStamp(storage: ResourceInfo): string {
  let stamp = stamps.get(storage);
  if (stamp === undefined) {
    // Hashed: it is stored with every object (and travels in every log entry).
    const text = `${FIELD_SETS_VERSION}:${Object.keys(fieldsetFor(storage, {})).sort().join(',')}`;
    stamp = createHash('sha256').update(text).digest('base64url').slice(0, 12);
    stamps.set(storage, stamp);
  }
  return stamp;
}

/**
 * Watch-cache attributes of each resource prefix (labels plus the kind's selectable fields),
 * following the catalog as definitions come and go, for the resources RegistrySet serves.
 */
export function resourceSpecs(catalog: ApiCatalog): (prefix: string) => ResourceSpec | undefined {
  // One spec object per prefix until the catalog changes: the watch cache recognises what it
  // derived for a local write by the spec's identity (a fresh spec per call made every write
  // derive its attributes twice).
  let byPrefix: Map<string, ResourceSpec> | undefined;
  catalog.onChange(() => {
    byPrefix = undefined;
  });
  return (prefix) => {
    if (!byPrefix) {
      byPrefix = new Map();
      for (const r of catalog.all()) {
        const storage = storedAs(catalog, r);
        if (storage) byPrefix.set(resourcePrefix(storage), specOf(storage));
      }
    }
    return byPrefix.get(prefix);
  };
}

function specOf(storage: ResourceInfo): ResourceSpec {
  return {
    stamp: fieldsStamp(storage),
    attributes(obj): ObjectAttributes {
      const labels = (obj.metadata as { labels?: Record<string, string> } | undefined)?.labels;
      return { labels: labels && typeof labels === 'object' ? labels : {}, fields: { ...fieldsetFor(storage, obj) } };
    },
  };
}
