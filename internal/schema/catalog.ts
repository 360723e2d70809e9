// internal/schema/catalog owns the table of served resources: which group-versions and
// resources exist, their scope, kinds, verbs, sub-resources, short names and categories, and
// which version stores each resource's objects (for events.k8s.io Events, the core event
// store, as upstream). It is built from proto/api-resources.json,
// filtered by what the runtime configuration enables, with group names of the configured naming.
// Imports: naming, versions, lifecycle, data-files.

import type { Naming } from '../naming/naming.js';
import { readDataFile } from './data-files.js';
import type { GeneratedCatalog, GeneratedResource } from './generated-catalog.js';
import { builtinDeprecation } from './lifecycle.js';
import { compareVersionPriority, stabilityOf, type Stability } from './versions.js';

export interface SubresourceInfo {
  readonly name: string;
  readonly verbs: readonly string[];
  /** Served group, version and kind of the sub-resource's body (Scale, Eviction, …). */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface ResourceInfo {
  /** Served group name ('' for the core group). */
  readonly group: string;
  /** The group's name in the schema data (upstream). */
  readonly upstreamGroup: string;
  readonly version: string;
  /** `<group>/<version>`, or `v1` for the core group. */
  readonly apiVersion: string;
  /** The plural resource name used in paths. */
  readonly resource: string;
  readonly singularName: string;
  readonly kind: string;
  readonly listKind: string | undefined;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** Component schema name in openapi-schemas.json (upstream spelling). */
  readonly schemaName: string | undefined;
  readonly subresources: ReadonlyMap<string, SubresourceInfo>;
  readonly stability: Stability;
  /**
   * Identity shared by all versions that serve the same stored objects: `<upstream group>/<resource>`
   * of the storage, which for events.k8s.io Events is the core group's (`/events`).
   */
  readonly storageResource: string;
  /** The version (of the storage resource's group) objects of this resource are stored in. */
  readonly storageVersion: string;
  /** Set for resources served from a CustomResourceDefinition. */
  readonly custom?: CustomResourceInfo;
  /**
   * Set when this version is deprecated (spec §9.2 item 6); the one source of truth that
   * handlers/resources turns into the Warning, the audit annotations and
   * apiserver_requested_deprecated_apis. Built-in kinds get it from their lifecycle markers
   * (schema/lifecycle), custom resource versions from `deprecated: true`. removedRelease: `1.x`
   * when removal is planned, '' if unknown (then no removed-release annotation).
   */
  readonly deprecation?: { readonly warning: string; readonly removedRelease: string };
}

/** What a custom resource's version brings beyond the common fields. */
export interface CustomResourceInfo {
  /** metadata.name of the defining CRD. */
  readonly crdName: string;
  /** The version's openAPIV3Schema (JSONSchemaProps), if any. */
  readonly schema: Record<string, unknown> | undefined;
  /** x-preserve-unknown-fields at the root: unknown fields are kept. */
  readonly preserveUnknownFields: boolean;
  readonly printerColumns: ReadonlyArray<{ name: string; type: string; format?: string; description?: string; priority?: number; jsonPath: string }>;
  /** JSON paths of the scale sub-resource, when it has one. */
  readonly scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  /** JSON paths of this version's `selectableFields` (`.spec.color`): the field selectors it accepts. */
  readonly selectableFields?: readonly string[];
  /** The union of every version's selectable fields: what the stored objects' field sets carry. */
  readonly storedSelectableFields?: readonly string[];
  /** Set when the definition converts between versions with a webhook (`strategy: Webhook`). */
  readonly webhookConversion?: CustomResourceWebhookConversion;
  /**
   * The definition lists this one version alone, so every stored object is in it. With more,
   * an object keeps the version that was the storage version when it was written.
   */
  readonly singleVersion?: boolean;
}

/** A definition's conversion webhook: where it is called and which ConversionReview it speaks. */
export interface CustomResourceWebhookConversion {
  /** `spec.conversion.webhook.clientConfig` (url or service reference, caBundle). */
  readonly clientConfig: {
    readonly url?: string;
    readonly service?: { readonly namespace: string; readonly name: string; readonly path?: string; readonly port?: number };
    readonly caBundle?: string;
  };
  /** The first of `conversionReviewVersions` the server speaks. */
  readonly reviewVersion: 'v1' | 'v1beta1';
}

export interface GroupInfo {
  /** Served name. */
  readonly name: string;
  /** Enabled versions, preferred first. */
  readonly versions: readonly string[];
  readonly preferredVersion: string;
}

/** Decides whether a served group-version (and optionally one resource in it) is enabled. */
export type EnablementPolicy = (group: string, version: string, resource?: string) => boolean;

/** GA versions on, beta and alpha off: the upstream default for APIs introduced after 1.22. */
export const defaultEnablement: EnablementPolicy = (_group, version) => stabilityOf(version) === 'ga';

export const apiVersionOf = (group: string, version: string): string => (group ? `${group}/${version}` : version);

/** Where a resource served from another resource's storage is stored. */
interface SharedStorage {
  readonly upstreamGroup: string;
  readonly version: string;
  readonly resource: string;
}

/**
 * Resources (`<upstream group>/<resource>`) whose objects live in another resource's storage, in
 * that resource's shape: upstream's events.k8s.io REST storage is the core event store, so an
 * event written through either API is the same object in both.
 */
const SHARED_STORAGE: Readonly<Record<string, SharedStorage>> = {
  'events.k8s.io/events': { upstreamGroup: '', version: 'v1', resource: 'events' },
};

/**
 * The `--runtime-config` keys that name nothing this server has: a group/version or a resource
 * of one that the built-in data does not hold (in the naming's group spelling). Upstream refuses
 * to start on them; a typo must not silently leave an API on or off.
 */
export function unknownRuntimeConfigKeys(
  naming: Naming,
  keys: readonly string[],
  data: GeneratedCatalog = JSON.parse(readDataFile('api-resources.json')) as GeneratedCatalog,
): string[] {
  const groupVersions = new Set<string>();
  const resources = new Set<string>();
  for (const gv of data.groupVersions) {
    const prefix = `${naming.group(gv.group)}/${gv.version}`;
    groupVersions.add(prefix);
    for (const r of gv.resources) resources.add(`${prefix}/${r.name}`);
  }
  return keys.filter((key) => {
    if (/^api\/(all|ga|beta|alpha)$/.test(key)) return false;
    return key.split('/').length === 3 ? !resources.has(key) : !groupVersions.has(key);
  });
}

function buildInfo(naming: Naming, upstreamGroup: string, version: string, r: GeneratedResource, storageResource: string, storageVersion: string): ResourceInfo {
  const group = naming.group(upstreamGroup);
  const deprecation = builtinDeprecation(naming, upstreamGroup, version, r.kind);
  return {
    group,
    upstreamGroup,
    version,
    apiVersion: apiVersionOf(group, version),
    resource: r.name,
    singularName: r.singularName,
    kind: r.kind,
    listKind: r.listKind,
    namespaced: r.namespaced,
    verbs: r.verbs,
    shortNames: r.shortNames ?? [],
    categories: r.categories ?? [],
    schemaName: r.schema,
    subresources: new Map(r.subresources.map((s) => [s.name, { ...s, group: naming.group(s.group) }] as const)),
    stability: stabilityOf(version),
    storageResource,
    storageVersion,
    ...(deprecation ? { deprecation } : {}),
  };
}

export class ApiCatalog {
  private readonly byPath = new Map<string, ResourceInfo>();
  /**
   * byPath as group → version → resource: resource() runs several times per request (admission
   * plugins, handlers), and building the joined key for every lookup showed in write profiles.
   */
  private readonly byGroupVersion = new Map<string, Map<string, Map<string, ResourceInfo>>>();
  /** The storage version's description per built-in storage identity (possibly not served). */
  private readonly storageInfos = new Map<string, ResourceInfo>();
  private readonly byKind = new Map<string, ResourceInfo>();
  private groupList: GroupInfo[] = [];
  private readonly resourcesByGroupVersion = new Map<string, ResourceInfo[]>();
  private readonly customByCrd = new Map<string, ResourceInfo[]>();
  private readonly listeners = new Set<() => void>();
  /** Order in which groups first appeared (built-in data order, then custom groups). */
  private readonly groupOrder: string[] = [];
  /** Bumped on every change of the served resources (discovery and OpenAPI rebuild on it). */
  generation = 0;

  constructor(
    readonly naming: Naming,
    enabled: EnablementPolicy = defaultEnablement,
    data: GeneratedCatalog = JSON.parse(readDataFile('api-resources.json')) as GeneratedCatalog,
  ) {
    // Where resources served from another resource's storage are stored: only when the data
    // has that resource (in the storage version), enabled or not.
    const targetData = new Map<string, GeneratedResource>();
    for (const gv of data.groupVersions) {
      for (const r of gv.resources) {
        const key = `${gv.group}/${r.name}`;
        if (Object.values(SHARED_STORAGE).some((t) => `${t.upstreamGroup}/${t.resource}` === key && t.version === gv.version)) targetData.set(key, r);
      }
    }
    const sharedTarget = (key: string): SharedStorage | undefined => {
      const t = SHARED_STORAGE[key];
      return t && targetData.has(`${t.upstreamGroup}/${t.resource}`) ? t : undefined;
    };

    // Pass 1: what is enabled, per storage identity, to pick each resource's storage version.
    const versionsByStorage = new Map<string, string[]>();
    const kept: Array<{ upstreamGroup: string; version: string; r: GeneratedResource }> = [];
    for (const gv of data.groupVersions) {
      const group = naming.group(gv.group);
      if (!enabled(group, gv.version)) continue;
      for (const r of gv.resources) {
        if (!enabled(group, gv.version, r.name)) continue;
        kept.push({ upstreamGroup: gv.group, version: gv.version, r });
        const key = `${gv.group}/${r.name}`;
        if (!sharedTarget(key)) versionsByStorage.set(key, [...(versionsByStorage.get(key) ?? []), gv.version]);
      }
    }
    const sharing: SharedStorage[] = [];
    for (const { upstreamGroup, version, r } of kept) {
      const target = sharedTarget(`${upstreamGroup}/${r.name}`);
      if (target) sharing.push(target);
      const storageResource = target ? `${target.upstreamGroup}/${target.resource}` : `${upstreamGroup}/${r.name}`;
      const storageVersion = target ? target.version : [...versionsByStorage.get(storageResource)!].sort(compareVersionPriority)[0]!;
      const info = buildInfo(naming, upstreamGroup, version, r, storageResource, storageVersion);
      this.index(info);
      if (!target && version === storageVersion) this.storageInfos.set(storageResource, info);
    }
    // A storage whose own resource is disabled still holds the objects of those it serves
    // (upstream builds the core event store for events.k8s.io either way): its registry works
    // from an unserved description.
    for (const t of sharing) {
      const key = `${t.upstreamGroup}/${t.resource}`;
      if (!this.storageInfos.has(key)) this.storageInfos.set(key, buildInfo(naming, t.upstreamGroup, t.version, targetData.get(key)!, key, t.version));
    }
    this.rebuildGroups();
  }

  private index(info: ResourceInfo): void {
    this.byPath.set(`${info.group}/${info.version}/${info.resource}`, info);
    let versions = this.byGroupVersion.get(info.group);
    if (!versions) this.byGroupVersion.set(info.group, (versions = new Map()));
    let resources = versions.get(info.version);
    if (!resources) versions.set(info.version, (resources = new Map()));
    resources.set(info.resource, info);
    this.byKind.set(`${info.group}/${info.version}/${info.kind}`, info);
    const gvKey = `${info.group}/${info.version}`;
    this.resourcesByGroupVersion.set(gvKey, [...(this.resourcesByGroupVersion.get(gvKey) ?? []), info]);
    if (!this.groupOrder.includes(info.group)) this.groupOrder.push(info.group);
  }

  private unindex(info: ResourceInfo): void {
    this.byPath.delete(`${info.group}/${info.version}/${info.resource}`);
    this.byGroupVersion.get(info.group)?.get(info.version)?.delete(info.resource);
    this.byKind.delete(`${info.group}/${info.version}/${info.kind}`);
    const gvKey = `${info.group}/${info.version}`;
    const left = (this.resourcesByGroupVersion.get(gvKey) ?? []).filter((r) => r !== info);
    if (left.length) this.resourcesByGroupVersion.set(gvKey, left);
    else this.resourcesByGroupVersion.delete(gvKey);
  }

  /** Groups from the indexed resources: the core group first, then in order of appearance. */
  private rebuildGroups(): void {
    const versions = new Map<string, Set<string>>();
    for (const key of this.resourcesByGroupVersion.keys()) {
      const slash = key.lastIndexOf('/');
      const group = key.slice(0, slash);
      if (!versions.has(group)) versions.set(group, new Set());
      versions.get(group)!.add(key.slice(slash + 1));
    }
    this.groupList = this.groupOrder
      .filter((g) => versions.has(g))
      .map((name) => {
        const sorted = [...versions.get(name)!].sort(compareVersionPriority);
        return { name, versions: sorted, preferredVersion: sorted[0]! };
      });
    this.groupList.sort((a, b) => (a.name === '' ? -1 : b.name === '' ? 1 : 0));
  }

  /**
   * Serves (or, with an empty list, stops serving) the resources one CustomResourceDefinition
   * defines, replacing what it defined before. Listeners hear of every change.
   */
  setCustomResources(crdName: string, infos: readonly ResourceInfo[]): void {
    for (const old of this.customByCrd.get(crdName) ?? []) this.unindex(old);
    if (infos.length) this.customByCrd.set(crdName, [...infos]);
    else this.customByCrd.delete(crdName);
    for (const info of infos) this.index(info);
    this.rebuildGroups();
    this.generation++;
    for (const l of this.listeners) l();
  }

  /** The resources a CRD currently defines. */
  customResources(crdName: string): readonly ResourceInfo[] {
    return this.customByCrd.get(crdName) ?? [];
  }

  /** Calls `listener` after every change of the served resources. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every enabled group, the core group ('') first. */
  groups(): readonly GroupInfo[] {
    return this.groupList;
  }

  group(name: string): GroupInfo | undefined {
    return this.groupList.find((g) => g.name === name);
  }

  resources(group: string, version: string): readonly ResourceInfo[] {
    return this.resourcesByGroupVersion.get(`${group}/${version}`) ?? [];
  }

  resource(group: string, version: string, resource: string): ResourceInfo | undefined {
    return this.byGroupVersion.get(group)?.get(version)?.get(resource);
  }

  resourceForKind(group: string, version: string, kind: string): ResourceInfo | undefined {
    return this.byKind.get(`${group}/${version}/${kind}`);
  }

  /** Every enabled resource in every version. */
  all(): IterableIterator<ResourceInfo> {
    return this.byPath.values();
  }

  /** One entry per stored resource (its storage version): what a namespace cleanup must visit. */
  storedResources(): ResourceInfo[] {
    const out = new Map<string, ResourceInfo>();
    for (const r of this.byPath.values()) {
      const storage = this.storageOf(r);
      if (storage && !out.has(r.storageResource) && storage.verbs.includes('create') && storage.verbs.includes('delete')) out.set(r.storageResource, storage);
    }
    return [...out.values()];
  }

  /**
   * The description of the resource `r`'s objects are stored as: its storage version, or for a
   * resource served from another's storage (events.k8s.io Events) that resource's, which may
   * itself be disabled and then is not served. Undefined when a custom resource's storage
   * version is not served.
   */
  storageOf(r: ResourceInfo): ResourceInfo | undefined {
    if (r.custom) return this.customResources(r.custom.crdName).find((v) => v.version === v.storageVersion);
    return this.storageInfos.get(r.storageResource);
  }
}
