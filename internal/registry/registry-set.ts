// internal/registry/registry-set owns the registries of every served resource: one
// GenericRegistry per stored resource (shared by all versions that serve it), the per-prefix
// attributes the watch cache needs, and lookup from a request's resource.
// Imports: schema/catalog, selectors, watchcache (types), generic-registry, strategy, keys.

import type { ApiCatalog, ResourceInfo } from '../schema/catalog.js';
import type { ObjectAttributes, ResourceSpec } from '../watchcache/types.js';
import { GenericRegistry, type RegistryDeps } from './generic-registry.js';
import { resourcePrefix } from './keys.js';
import { strategyFor } from './strategy.js';
import { registerHpaConversion } from './hpa-conversion.js';

registerHpaConversion();
import { fieldsetFor } from '../selectors/index.js';

export class RegistrySet {
  private readonly byStorage = new Map<string, GenericRegistry>();
  private readonly byPrefix = new Map<string, GenericRegistry>();

  constructor(
    private readonly catalog: ApiCatalog,
    private deps: RegistryDeps | undefined = undefined,
  ) {
    for (const r of catalog.all()) {
      if (r.version !== r.storageVersion || this.byStorage.has(r.storageResource)) continue;
      if (!r.verbs.includes('create') && !r.verbs.includes('get')) continue;
      const reg = new GenericRegistry(r, strategyFor(r, catalog.naming), this.lazyDeps());
      this.byStorage.set(r.storageResource, reg);
      this.byPrefix.set(resourcePrefix(r), reg);
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
      get fields() { return self.required().fields; },
      get cache() { return self.required().cache; },
      get admission() { return self.required().admission; },
      get rules() { return self.required().rules; },
      get now() { return self.required().now; },
      get unsafeDeletionEnabled() { return self.required().unsafeDeletionEnabled; },
      get tooLargeWaitMs() { return self.required().tooLargeWaitMs; },
      get listSnapshotTtlMs() { return self.required().listSnapshotTtlMs; },
    };
  }

  private required(): RegistryDeps {
    if (!this.deps) throw new Error('registry dependencies are not bound yet');
    return this.deps;
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
