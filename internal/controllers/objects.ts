// internal/controllers/objects owns how the controllers added for a fresh cluster (kubernetes
// endpoints, disruption budgets, the CSR signer) and the start-up objects read and write objects
// of any built-in group: reads from the watch cache, writes through the registries as one
// named field manager with system:masters rights. Groups are given in upstream spelling and
// served in the configured naming. Imports: apierrors, registry, schema, controllers env.

import { isAlreadyExists, isConflict, isNotFound } from '../apierrors/status.js';
import { namespacePrefix, objectKey, resourcePrefix } from '../registry/keys.js';
import type { ResourceInfo } from '../schema/catalog.js';
import type { ControllerEnv } from './serviceaccount-controllers.js';

export type Obj = Record<string, unknown>;
export type Meta = {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  deletionTimestamp?: string;
  creationTimestamp?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  generation?: number;
};

export const metaOf = (o: Obj): Meta => (o.metadata ?? {}) as Meta;

/** `group/version/resource` in upstream spelling, for example `policy/v1/poddisruptionbudgets`. */
export type ResourceRef = readonly [upstreamGroup: string, version: string, resource: string];

export class Objects {
  constructor(
    readonly env: ControllerEnv,
    private readonly manager: string,
    private readonly userName = `system:serviceaccount:kube-system:${manager}`,
  ) {}

  resource([group, version, resource]: ResourceRef): ResourceInfo {
    const r = this.env.catalog.resource(group ? this.env.naming.group(group) : '', version, resource);
    if (!r) throw new Error(`resource ${group}/${version}/${resource} is not served`);
    return r;
  }

  prefix(ref: ResourceRef): string {
    return resourcePrefix(this.resource(ref));
  }

  get(ref: ResourceRef, namespace: string, name: string): Obj | undefined {
    const r = this.resource(ref);
    const e = this.env.cache.resource(resourcePrefix(r)).get(objectKey(r, namespace, name));
    return e && !e.corrupt ? (JSON.parse(e.bytes.toString('utf8')) as Obj) : undefined;
  }

  /** A namespace's objects ('' for every namespace or a cluster-scoped resource). */
  list(ref: ResourceRef, namespace = ''): Obj[] {
    const r = this.resource(ref);
    const opts = namespace && r.namespaced ? { keyPrefix: namespacePrefix(r, namespace) } : {};
    return this.env.cache
      .resource(resourcePrefix(r))
      .list(opts)
      .entries.filter((e) => !e.corrupt)
      .map((e) => JSON.parse(e.bytes.toString('utf8')) as Obj);
  }

  ctx(namespace: string) {
    return { user: { name: this.userName, groups: ['system:masters', 'system:authenticated'] }, manager: this.manager, namespace, dryRun: false, warnings: [] as string[] };
  }

  /** Creates the object; an existing one is left as it is. Returns whether it was created. */
  async create(ref: ResourceRef, namespace: string, obj: Obj): Promise<boolean> {
    const r = this.resource(ref);
    try {
      await this.env.registries.for(r)!.create(r, this.ctx(namespace), obj);
      return true;
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      return false;
    }
  }

  /** Replaces the object (or its sub-resource) as read: a conflict is retried by the caller. */
  async update(ref: ResourceRef, namespace: string, obj: Obj, subresource = ''): Promise<Obj> {
    const r = this.resource(ref);
    const res = await this.env.registries.for(r)!.update(r, this.ctx(namespace), String(metaOf(obj).name), obj, subresource);
    return res.object;
  }

  async delete(ref: ResourceRef, namespace: string, name: string, uid?: string): Promise<void> {
    const r = this.resource(ref);
    try {
      await this.env.registries.for(r)!.delete(r, this.ctx(namespace), name, { dryRun: false, ...(uid ? { preconditions: { uid } } : {}) });
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }
}
