// internal/aggregator/apiservices owns reading APIServices as this replica's watch cache holds
// them: the one for a group/version (by its name, `<version>.<group>`), all of them, and the
// parts of one the aggregator acts on (service reference, TLS settings, priorities,
// availability). Parsed objects are kept per cache entry, so a request costs a map lookup.
// Imports: registry/keys, schema (catalog), watchcache, naming.

import type { Naming } from '../naming/naming.js';
import { resourcePrefix } from '../registry/keys.js';
import type { ApiCatalog, ResourceInfo } from '../schema/catalog.js';
import type { CacheEntry } from '../watchcache/types.js';
import type { WatchCache } from '../watchcache/watch-cache.js';

export const REGISTRATION_GROUP = 'apiregistration.k8s.io';

export interface ApiServiceView {
  readonly name: string;
  readonly group: string;
  readonly version: string;
  /** Absent for a local APIService (served by this server). */
  readonly service: { namespace: string; name: string; port: number } | undefined;
  readonly caBundle: string | undefined;
  readonly insecureSkipTLSVerify: boolean;
  readonly groupPriorityMinimum: number;
  readonly versionPriority: number;
  /** The `Available` condition's status ('Unknown' when there is none). */
  readonly available: 'True' | 'False' | 'Unknown';
  readonly raw: Record<string, unknown>;
  readonly entry: CacheEntry;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function viewOf(entry: CacheEntry): ApiServiceView | undefined {
  if (entry.corrupt) return undefined;
  const raw = JSON.parse(entry.bytes.toString('utf8')) as Obj;
  const spec = obj(raw.spec);
  const svc = spec.service === null || spec.service === undefined ? undefined : obj(spec.service);
  const conditions = Array.isArray(obj(raw.status).conditions) ? (obj(raw.status).conditions as unknown[]).map(obj) : [];
  const cond = str(conditions.find((c) => c.type === 'Available')?.status);
  return {
    name: entry.name,
    group: str(spec.group),
    version: str(spec.version),
    service: svc ? { namespace: str(svc.namespace), name: str(svc.name), port: typeof svc.port === 'number' ? svc.port : 443 } : undefined,
    caBundle: str(spec.caBundle) || undefined,
    insecureSkipTLSVerify: spec.insecureSkipTLSVerify === true,
    groupPriorityMinimum: typeof spec.groupPriorityMinimum === 'number' ? spec.groupPriorityMinimum : 0,
    versionPriority: typeof spec.versionPriority === 'number' ? spec.versionPriority : 0,
    available: cond === 'True' || cond === 'False' ? cond : 'Unknown',
    raw,
    entry,
  };
}

export class ApiServices {
  readonly resource: ResourceInfo;
  readonly prefix: string;
  private readonly views = new WeakMap<CacheEntry, ApiServiceView | null>();

  constructor(
    private readonly cache: WatchCache,
    catalog: ApiCatalog,
    naming: Naming,
  ) {
    this.resource = catalog.resource(naming.group(REGISTRATION_GROUP), 'v1', 'apiservices') ?? {
      // Disabled by --runtime-config: nothing is registered, nothing is proxied.
      upstreamGroup: REGISTRATION_GROUP,
      resource: 'apiservices',
    } as ResourceInfo;
    this.prefix = resourcePrefix({ upstreamGroup: REGISTRATION_GROUP, resource: 'apiservices' });
  }

  private view(entry: CacheEntry | undefined): ApiServiceView | undefined {
    if (!entry) return undefined;
    let v = this.views.get(entry);
    if (v === undefined) {
      v = viewOf(entry) ?? null;
      this.views.set(entry, v);
    }
    return v ?? undefined;
  }

  /** The APIService for a served group/version (core: group ''). */
  get(group: string, version: string): ApiServiceView | undefined {
    if (!this.cache.ready) return undefined;
    return this.byName(`${version}.${group}`);
  }

  byName(name: string): ApiServiceView | undefined {
    if (!this.cache.ready) return undefined;
    return this.view(this.cache.resource(this.prefix).get(`${this.prefix}${name}`));
  }

  all(): ApiServiceView[] {
    if (!this.cache.ready) return [];
    return this.cache
      .resource(this.prefix)
      .list()
      .entries.map((e) => this.view(e))
      .filter((v): v is ApiServiceView => v !== undefined);
  }
}
