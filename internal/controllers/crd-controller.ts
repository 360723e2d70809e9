// internal/controllers/crd-controller owns serving custom resources: it follows
// CustomResourceDefinitions through the watch cache and, for each, registers the served
// versions in the catalog (so discovery, routing and registries see them, with the conversion
// webhook a definition names), reports the definition's status (NamesAccepted, Established,
// accepted names, stored versions), and on deletion removes every custom resource of the
// definition before releasing its cleanup finalizer.
// Imports: registry, schema, watchcache, log, naming, apierrors.

import { isNotFound } from '../apierrors/status.js';
import type { Logger } from '../log/logger.js';
import type { Naming } from '../naming/naming.js';
import { resourcePrefix } from '../registry/keys.js';
import type { RegistrySet } from '../registry/registry-set.js';
import { apiVersionOf, type ApiCatalog, type CustomResourceInfo, type CustomResourceWebhookConversion, type ResourceInfo, type SubresourceInfo } from '../schema/catalog.js';
import { compareVersionPriority, stabilityOf } from '../schema/versions.js';
import type { WatchCache } from '../watchcache/watch-cache.js';
import type { CacheWatcher } from '../watchcache/watcher.js';

type Obj = Record<string, unknown>;

const CONTROLLER_USER = { name: 'system:serviceaccount:kube-system:crd-controller', groups: ['system:masters', 'system:authenticated'] };
const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** The finalizer that holds a deleted definition until its custom resources are gone. */
export const crdCleanupFinalizer = (naming: Naming): string => `customresourcecleanup.${naming.group('apiextensions.k8s.io')}`;

const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The resources a definition serves, one per served version. */
export function customResourceInfos(crd: Obj): ResourceInfo[] {
  const name = str(obj(crd.metadata).name);
  const spec = obj(crd.spec);
  const names = obj(spec.names);
  const group = str(spec.group);
  const plural = str(names.plural);
  const kind = str(names.kind);
  if (!group || !plural || !kind) return [];
  const versions = Array.isArray(spec.versions) ? (spec.versions as Obj[]) : [];
  const storage = versions.find((v) => v.storage === true);
  const storageVersion = str(storage?.name) || str(versions[0]?.name);
  const namespaced = spec.scope !== 'Cluster';
  const selectablePaths = (v: Obj): string[] =>
    Array.isArray(v.selectableFields) ? (v.selectableFields as unknown[]).map((f) => str(obj(f).jsonPath)).filter((p) => p !== '') : [];
  // The stored objects' field sets carry the selectable fields of all versions (each version
  // accepts its own); a webhook may reshape objects, but a path absent from one simply selects "".
  const storedSelectableFields = [...new Set(versions.flatMap(selectablePaths))];
  const webhookConversion = webhookConversionOf(obj(spec.conversion));
  const infos: ResourceInfo[] = [];
  for (const v of versions) {
    if (v.served !== true) continue;
    const version = str(v.name);
    const subs = obj(v.subresources);
    const subresources = new Map<string, SubresourceInfo>();
    if (subs.status !== undefined) subresources.set('status', { name: 'status', verbs: ['get', 'patch', 'update'], group, version, kind });
    const scale = subs.scale !== undefined ? obj(subs.scale) : undefined;
    if (scale) subresources.set('scale', { name: 'scale', verbs: ['get', 'patch', 'update'], group: 'autoscaling', version: 'v1', kind: 'Scale' });
    const schema = obj(obj(v.schema).openAPIV3Schema);
    const columns = Array.isArray(v.additionalPrinterColumns) ? (v.additionalPrinterColumns as Obj[]) : [];
    const custom: CustomResourceInfo = {
      crdName: name,
      selectableFields: selectablePaths(v),
      storedSelectableFields,
      ...(webhookConversion ? { webhookConversion } : {}),
      ...(versions.length === 1 ? { singleVersion: true } : {}),
      schema: Object.keys(schema).length ? schema : undefined,
      preserveUnknownFields: schema['x-kubernetes-preserve-unknown-fields'] === true || spec.preserveUnknownFields === true,
      printerColumns: columns.map((c) => ({
        name: str(c.name),
        type: str(c.type) || 'string',
        ...(c.format !== undefined ? { format: str(c.format) } : {}),
        ...(c.description !== undefined ? { description: str(c.description) } : {}),
        ...(typeof c.priority === 'number' ? { priority: c.priority } : {}),
        jsonPath: str(c.jsonPath),
      })),
      ...(scale
        ? {
            scale: {
              specReplicasPath: str(scale.specReplicasPath) || '.spec.replicas',
              statusReplicasPath: str(scale.statusReplicasPath) || '.status.replicas',
              ...(scale.labelSelectorPath !== undefined ? { labelSelectorPath: str(scale.labelSelectorPath) } : {}),
            },
          }
        : {}),
    };
    infos.push({
      group,
      upstreamGroup: group,
      version,
      apiVersion: apiVersionOf(group, version),
      resource: plural,
      singularName: str(names.singular) || kind.toLowerCase(),
      kind,
      listKind: str(names.listKind) || `${kind}List`,
      namespaced,
      verbs: VERBS,
      shortNames: strings(names.shortNames),
      categories: strings(names.categories),
      schemaName: undefined,
      subresources,
      stability: stabilityOf(version),
      storageResource: `${group}/${plural}`,
      storageVersion,
      custom,
      ...(v.deprecated === true ? { deprecation: { warning: deprecationWarning(v, versions, group, kind), removedRelease: '' } } : {}),
    });
  }
  return infos;
}

/** The ConversionReview versions the server speaks, in the order it prefers them. */
export const CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;

/**
 * A definition's webhook conversion, when `strategy` is Webhook: the client config and the first
 * of `conversionReviewVersions` the server speaks (validation refuses a list without one).
 */
export function webhookConversionOf(conversion: Obj): CustomResourceWebhookConversion | undefined {
  if (conversion.strategy !== 'Webhook') return undefined;
  const webhook = obj(conversion.webhook);
  const reviewVersion = strings(webhook.conversionReviewVersions).find((v): v is 'v1' | 'v1beta1' => (CONVERSION_REVIEW_VERSIONS as readonly string[]).includes(v));
  if (!reviewVersion) return undefined;
  const cc = obj(webhook.clientConfig);
  const svc = cc.service !== undefined ? obj(cc.service) : undefined;
  return {
    reviewVersion,
    clientConfig: {
      ...(typeof cc.url === 'string' ? { url: cc.url } : {}),
      ...(svc
        ? {
            service: {
              namespace: str(svc.namespace),
              name: str(svc.name),
              ...(typeof svc.path === 'string' ? { path: svc.path } : {}),
              ...(typeof svc.port === 'number' ? { port: svc.port } : {}),
            },
          }
        : {}),
      ...(typeof cc.caBundle === 'string' ? { caBundle: cc.caBundle } : {}),
    },
  };
}

/**
 * A deprecated version's Warning: its deprecationWarning, else upstream's default text, which
 * names the most preferred served version that is not deprecated and ranks above this one.
 */
function deprecationWarning(v: Obj, versions: Obj[], group: string, kind: string): string {
  if (typeof v.deprecationWarning === 'string') return v.deprecationWarning;
  const name = str(v.name);
  const text = `${group}/${name} ${kind} is deprecated`;
  const better = versions
    .filter((o) => o.served === true && o.deprecated !== true && compareVersionPriority(str(o.name), name) < 0)
    .map((o) => str(o.name))
    .sort(compareVersionPriority);
  return better.length ? `${text}; use ${group}/${better[0]} ${kind}` : text;
}

export class CrdController {
  private watcher: CacheWatcher | undefined;
  /** The definition object each name is served from (the identity sync parsed). */
  private readonly served = new Map<string, Obj>();
  private stopped = false;
  private readonly crds: ResourceInfo;
  private readonly pending = new Map<string, Obj | null>();
  private running = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly registries: RegistrySet,
    private readonly catalog: ApiCatalog,
    private readonly cache: WatchCache,
    private readonly naming: Naming,
    private readonly log: Logger,
    private readonly retryMs = 500,
    /** Whether this replica writes (status, cleanup): only the leader does; every replica serves. */
    private readonly isLeader: () => boolean = () => true,
  ) {
    this.crds = catalog.resource(naming.group('apiextensions.k8s.io'), 'v1', 'customresourcedefinitions')!;
  }

  /**
   * Starts following definitions. Resolves once the ones already stored are served, so the
   * server is ready only when its custom resources are.
   */
  async start(): Promise<void> {
    const registry = this.registries.for(this.crds)!;
    const { entries } = await registry.list({ mode: { kind: 'consistent' }, namespace: '', filter: undefined, hasSelector: false, limit: 0 });
    for (const e of entries) if (!e.corrupt) this.serve(JSON.parse(e.bytes.toString('utf8')) as Obj);
    const w = this.cache.watch({ prefix: resourcePrefix(this.crds), filter: () => true, fromRevision: this.cache.revision });
    this.watcher = w;
    w.consume(() => {
      this.sync();
      if (w.closed && w.pending === 0 && this.watcher === w && !this.stopped) {
        this.watcher = undefined;
        void this.start();
      }
    });
    for (const e of entries) if (!e.corrupt) this.enqueue(e.name, JSON.parse(e.bytes.toString('utf8')) as Obj);
  }

  /**
   * Takes now every definition change the cache has handed the watch: what is served changes
   * at once (a replica serves a definition as soon as its cache holds it, so a catch-up — see
   * registry/catch-up — that reached a revision serves the definitions as of it), and the
   * status and cleanup work is queued.
   */
  sync(): void {
    const w = this.watcher;
    if (!w) return;
    for (const out of w.drain()) {
      if (!('entry' in out)) continue;
      if (out.type === 'DELETED') {
        this.served.delete(out.entry.name);
        this.catalog.setCustomResources(out.entry.name, []);
        this.enqueue(out.entry.name, null);
        continue;
      }
      const crd = JSON.parse(out.entry.bytes.toString('utf8')) as Obj;
      this.serve(crd);
      this.enqueue(out.entry.name, crd);
    }
  }

  /** Reconciles every definition again (this replica just became the leader). */
  resync(): void {
    const registry = this.registries.for(this.crds)!;
    void registry
      .list({ mode: { kind: 'any' }, namespace: '', filter: undefined, hasSelector: false, limit: 0 })
      .then(({ entries }) => {
        for (const e of entries) if (!e.corrupt) this.enqueue(e.name, JSON.parse(e.bytes.toString('utf8')) as Obj);
      })
      .catch((e: unknown) => this.log.warn('custom resource definition resync failed', { error: e instanceof Error ? e.message : String(e) }));
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.watcher?.close();
  }

  private enqueue(name: string, crd: Obj | null): void {
    this.pending.set(name, crd);
    if (!this.running) void this.drain();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.pending.size > 0 && !this.stopped) {
        const [name, crd] = this.pending.entries().next().value as [string, Obj | null];
        this.pending.delete(name);
        if (!crd) continue;
        const done = await this.reconcile(crd).catch((e: unknown) => {
          this.log.warn('custom resource definition reconcile failed; retrying', { crd: name, error: e instanceof Error ? e.message : String(e) });
          return false;
        });
        if (!done && !this.stopped) {
          clearTimeout(this.retry);
          this.retry = setTimeout(() => {
            void this.refetch(name);
          }, this.retryMs);
          this.retry.unref();
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async refetch(name: string): Promise<void> {
    const entry = await this.registries.for(this.crds)!.getEntry('', name).catch(() => undefined);
    if (entry && !entry.corrupt) this.enqueue(name, JSON.parse(entry.bytes.toString('utf8')) as Obj);
  }

  /** Serves a definition's resources unless its names clash with another definition's. */
  private serve(crd: Obj): boolean {
    const name = str(obj(crd.metadata).name);
    if (obj(crd.metadata).deletionTimestamp !== undefined) return true;
    // The same object again (sync served it, now its reconcile asks): nothing to change.
    if (this.served.get(name) === crd) return true;
    const infos = customResourceInfos(crd);
    const clash = infos.some((info) => {
      const served = this.catalog.resource(info.group, info.version, info.resource);
      return served !== undefined && served.custom?.crdName !== name;
    });
    if (clash) return false;
    this.catalog.setCustomResources(name, infos);
    this.served.set(name, crd);
    return true;
  }

  /** Brings serving and status in line with the definition; false asks for a retry. */
  private async reconcile(crd: Obj): Promise<boolean> {
    const meta = obj(crd.metadata);
    const leader = this.isLeader();
    if (meta.deletionTimestamp !== undefined) return leader ? this.cleanUp(crd) : true;
    const accepted = this.serve(crd);
    return leader ? this.updateStatus(crd, accepted) : true;
  }

  private async updateStatus(crd: Obj, accepted: boolean): Promise<boolean> {
    const spec = obj(crd.spec);
    const names = obj(spec.names);
    const status = obj(crd.status);
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const condition = (type: string, ok: boolean, reason: string, message: string, prior: Obj[]) => {
      const before = prior.find((c) => c.type === type);
      const value = ok ? 'True' : 'False';
      return { type, status: value, lastTransitionTime: before && before.status === value ? before.lastTransitionTime : now, reason, message };
    };
    const prior = Array.isArray(status.conditions) ? (status.conditions as Obj[]) : [];
    const versions = Array.isArray(spec.versions) ? (spec.versions as Obj[]) : [];
    const storage = str(versions.find((v) => v.storage === true)?.name);
    const stored = strings(status.storedVersions);
    const nextStatus: Obj = {
      conditions: [
        condition('NamesAccepted', accepted, accepted ? 'NoConflicts' : 'NameConflict', accepted ? 'no conflicts found' : 'the names are already in use by another definition', prior),
        condition('Established', accepted, accepted ? 'InitialNamesAccepted' : 'NotAccepted', accepted ? 'the initial names have been accepted' : 'not all names are accepted', prior),
      ],
      acceptedNames: accepted
        ? {
            plural: str(names.plural),
            singular: str(names.singular) || str(names.kind).toLowerCase(),
            kind: str(names.kind),
            listKind: str(names.listKind) || `${str(names.kind)}List`,
            ...(strings(names.shortNames).length ? { shortNames: strings(names.shortNames) } : {}),
            ...(strings(names.categories).length ? { categories: strings(names.categories) } : {}),
          }
        : obj(status.acceptedNames),
      storedVersions: storage && !stored.includes(storage) ? [...stored, storage] : stored,
    };
    if (JSON.stringify(nextStatus) === JSON.stringify({ conditions: status.conditions, acceptedNames: status.acceptedNames, storedVersions: status.storedVersions })) return accepted;
    const registry = this.registries.for(this.crds)!;
    try {
      await registry.update(
        this.crds,
        { user: CONTROLLER_USER, manager: 'crd-controller', namespace: '', dryRun: false, warnings: [] },
        str(obj(crd.metadata).name),
        { ...crd, status: nextStatus },
        'status',
      );
    } catch (e) {
      if (isNotFound(e)) return true;
      throw e;
    }
    return accepted;
  }

  /**
   * Deletes every custom resource of a deleted definition (they stay served meanwhile, so
   * their own finalizers can be released), then releases the definition's finalizer.
   */
  private async cleanUp(crd: Obj): Promise<boolean> {
    const meta = obj(crd.metadata);
    const name = str(meta.name);
    const storage = this.catalog.customResources(name).find((r) => r.version === r.storageVersion) ?? customResourceInfos(crd).find((r) => r.version === r.storageVersion);
    if (storage) {
      const registry = this.registries.for(storage) ?? this.registries.detached(storage);
      const ctx = { user: CONTROLLER_USER, manager: 'crd-controller', namespace: '', dryRun: false, warnings: [] };
      const everything = { mode: { kind: 'consistent' as const }, namespace: '', filter: undefined, hasSelector: false, limit: 0 };
      const { items } = await registry.deleteCollection(storage, ctx, everything, { dryRun: false });
      if (items.length) this.log.info('deleted custom resources of a deleted definition', { crd: name, count: items.length });
      const left = await registry.list({ ...everything, limit: 1 });
      if (left.entries.length > 0) return false;
    }
    const finalizer = crdCleanupFinalizer(this.naming);
    if (!strings(meta.finalizers).includes(finalizer)) return true;
    await this.registries
      .for(this.crds)!
      .patch(this.crds, { user: CONTROLLER_USER, manager: 'crd-controller', namespace: '', dryRun: false, warnings: [] }, name, '', {
        build: (current) => ({ ...current, metadata: { ...obj(current.metadata), finalizers: strings(obj(current.metadata).finalizers).filter((f) => f !== finalizer) } }),
      })
      .catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
    return true;
  }

  /** Prefix of a custom resource's objects (for tests and cleanup). */
  static prefixOf(info: ResourceInfo): string {
    return resourcePrefix(info);
  }
}
