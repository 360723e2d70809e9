// internal/registry/registry-set owns the registries of every served resource: one
// GenericRegistry per stored resource (shared by every version, and group, that serves it), the per-prefix
// attributes the watch cache needs, and lookup from a request's resource.
// Imports: schema/catalog, selectors, watchcache (types), generic-registry, strategy, keys,
// hpa-conversion, event-conversion.

import type { ApiCatalog, ResourceInfo } from '../schema/catalog.js';
import type { ObjectAttributes, ResourceSpec } from '../watchcache/types.js';
import { GenericRegistry, type RegistryDeps } from './generic-registry.js';
import { resourcePrefix } from './keys.js';
import { strategyFor } from './strategy.js';
import { registerHpaConversion } from './hpa-conversion.js';
import { registerEventConversion } from './event-conversion.js';
import { fieldsetFor } from '../selectors/index.js';

registerHpaConversion();
registerEventConversion();

export class RegistrySet {
  private readonly byStorage = new Map<string, GenericRegistry>();
  private readonly byPrefix = new Map<string, GenericRegistry>();

  constructor(
    private readonly catalog: ApiCatalog,
    private deps: RegistryDeps | undefined = undefined,
  ) {
    for (const r of catalog.all()) this.ensure(r);
    // Custom resources come and go with their definitions.
    catalog.onChange(() => this.syncCustom());
  }

  private ensure(r: ResourceInfo): void {
    if (this.byStorage.has(r.storageResource)) return;
    // One registry per stored resource, built on its storage version, which for a resource
    // served from another's storage (events.k8s.io Events) is that other resource.
    const storage = r.custom ? (r.version === r.storageVersion ? r : undefined) : this.catalog.storageOf(r);
    if (!storage) return;
    if (!storage.verbs.includes('create') && !storage.verbs.includes('get')) return;
    const reg = new GenericRegistry(storage, strategyFor(storage, this.catalog.naming), this.lazyDeps());
    this.byStorage.set(storage.storageResource, reg);
    this.byPrefix.set(resourcePrefix(storage), reg);
  }

  /** Registers new custom resources and drops those no longer served (their data stays in the store). */
  private syncCustom(): void {
    const served = new Set<string>();
    for (const r of this.catalog.all()) {
      if (!r.custom) continue;
      served.add(r.storageResource);
      const existing = this.byStorage.get(r.storageResource);
      // A changed definition (new storage version, schema, scope) gets a fresh registry.
      if (existing && r.version === r.storageVersion && existing.storage !== r) {
        this.byStorage.delete(r.storageResource);
        this.byPrefix.delete(resourcePrefix(r));
      }
      this.ensure(r);
    }
    for (const [key, reg] of this.byStorage) {
      if (reg.storage.custom && !served.has(key)) {
        this.byStorage.delete(key);
        this.byPrefix.delete(resourcePrefix(reg.storage));
      }
    }
  }

  /** The registries exist before their dependencies (the watch cache needs specFor first). */
  bind(deps: RegistryDeps): void {
    this.deps = deps;
  }

  private lazyDeps(): RegistryDeps {
    // A getter view so registries built before bind() see the bound dependencies.
    const self = this;
    return {
      get store() { return self.required().store; },
      get storage() { return self.required().storage; },
      get fields() { return self.required().fields; },
      get admission() { return self.required().admission; },
      get rules() { return self.required().rules; },
      get now() { return self.required().now; },
      get unsafeDeletionEnabled() { return self.required().unsafeDeletionEnabled; },
    };
  }

  private required(): RegistryDeps {
    if (!this.deps) throw new Error('registry dependencies are not bound yet');
    return this.deps;
  }

  /** A registry for a resource that is not (or no longer) served, e.g. to clean up its objects. */
  detached(r: ResourceInfo): GenericRegistry {
    return new GenericRegistry(r, strategyFor(r, this.catalog.naming), this.lazyDeps());
  }

  /** The registry serving a request's resource (any version), if it stores objects. */
  for(r: ResourceInfo): GenericRegistry | undefined {
    return this.byStorage.get(r.storageResource);
  }

  all(): IterableIterator<GenericRegistry> {
    return this.byStorage.values();
  }

  /** Watch-cache attributes of a resource prefix: labels plus the kind's selectable fields. */
  specFor = (prefix: string): ResourceSpec | undefined => {
    const reg = this.byPrefix.get(prefix);
    if (!reg) return undefined;
    return {
      attributes(obj): ObjectAttributes {
        const labels = (obj.metadata as { labels?: Record<string, string> } | undefined)?.labels;
        return { labels: labels && typeof labels === 'object' ? labels : {}, fields: { ...fieldsetFor(reg.storage, obj) } };
      },
    };
  };
}
