// internal/schema/catalog owns the table of served resources: which group-versions and
// resources exist, their scope, kinds, verbs, sub-resources, short names and categories, and
// which version stores each resource's objects. It is built from proto/api-resources.json,
// filtered by what the runtime configuration enables, with group names of the configured naming.
// Imports: naming, versions, data-files.

import type { Naming } from '../naming/naming.js';
import { readDataFile } from './data-files.js';
import type { GeneratedCatalog, GeneratedResource } from './generated-catalog.js';
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
  /** Identity shared by all versions that serve the same stored objects: `<upstream group>/<resource>`. */
  readonly storageResource: string;
  /** The enabled version objects of this resource are stored in. */
  readonly storageVersion: string;
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

export class ApiCatalog {
  private readonly byPath = new Map<string, ResourceInfo>();
  private readonly byKind = new Map<string, ResourceInfo>();
  private readonly groupList: GroupInfo[] = [];
  private readonly resourcesByGroupVersion = new Map<string, ResourceInfo[]>();

  constructor(
    readonly naming: Naming,
    enabled: EnablementPolicy = defaultEnablement,
    data: GeneratedCatalog = JSON.parse(readDataFile('api-resources.json')) as GeneratedCatalog,
  ) {
    // Pass 1: what is enabled, per storage identity, to pick each resource's storage version.
    const versionsByStorage = new Map<string, string[]>();
    const kept: Array<{ group: string; upstreamGroup: string; version: string; r: GeneratedResource }> = [];
    for (const gv of data.groupVersions) {
      const group = naming.group(gv.group);
      if (!enabled(group, gv.version)) continue;
      for (const r of gv.resources) {
        if (!enabled(group, gv.version, r.name)) continue;
        kept.push({ group, upstreamGroup: gv.group, version: gv.version, r });
        const key = `${gv.group}/${r.name}`;
        versionsByStorage.set(key, [...(versionsByStorage.get(key) ?? []), gv.version]);
      }
    }
    const groupVersions = new Map<string, Set<string>>();
    for (const { group, upstreamGroup, version, r } of kept) {
      const storageResource = `${upstreamGroup}/${r.name}`;
      const storageVersion = [...versionsByStorage.get(storageResource)!].sort(compareVersionPriority)[0]!;
      const info: ResourceInfo = {
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
        subresources: new Map(
          r.subresources.map((s) => [s.name, { ...s, group: naming.group(s.group) }] as const),
        ),
        stability: stabilityOf(version),
        storageResource,
        storageVersion,
      };
      this.byPath.set(`${group}/${version}/${r.name}`, info);
      this.byKind.set(`${group}/${version}/${r.kind}`, info);
      const gvKey = `${group}/${version}`;
      this.resourcesByGroupVersion.set(gvKey, [...(this.resourcesByGroupVersion.get(gvKey) ?? []), info]);
      if (!groupVersions.has(group)) groupVersions.set(group, new Set());
      groupVersions.get(group)!.add(version);
    }
    for (const [name, versions] of groupVersions) {
      const sorted = [...versions].sort(compareVersionPriority);
      this.groupList.push({ name, versions: sorted, preferredVersion: sorted[0]! });
    }
    // The core group first, then named groups in the order of the data (upstream's order is
    // not alphabetical either, but clients only depend on the core group leading).
    this.groupList.sort((a, b) => (a.name === '' ? -1 : b.name === '' ? 1 : 0));
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
    return this.byPath.get(`${group}/${version}/${resource}`);
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
    return [...this.byPath.values()].filter(
      (r) => r.version === r.storageVersion && r.verbs.includes('create') && r.verbs.includes('delete'),
    );
  }
}
