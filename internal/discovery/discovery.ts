// internal/discovery owns the discovery documents clients read before anything else: /api,
// /apis, /apis/<group>, /api/v1 and /apis/<group>/<version> (legacy), and the aggregated
// APIGroupDiscoveryList (v2) that kubectl asks for first. They are built once from the
// catalog, with the group names of the configured naming.
// Imports: schema/catalog, naming.

import { createHash } from 'node:crypto';
import type { Naming } from '../naming/naming.js';
import { apiVersionOf, type ApiCatalog, type ResourceInfo } from '../schema/catalog.js';

type Json = Record<string, unknown>;

/**
 * Upstream's discovery.StorageVersionHash: base64 of the first 8 bytes of the SHA-256 of
 * `<group>/<version>/<kind>` of the version objects are stored in. Legacy discovery carries it
 * for every stored resource (storage-version migrators compare it to spot a changed encoding).
 */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

/** Resources kept in storage (not reviews, bindings or other create-only or read-only ones). */
const isStored = (r: ResourceInfo): boolean => r.verbs.includes('create') && r.verbs.includes('delete');

export class Discovery {
  constructor(
    private readonly catalog: ApiCatalog,
    private readonly naming: Naming,
  ) {}

  /** `apidiscovery.<domain>`: the group of the aggregated discovery kinds. */
  get aggregatedGroup(): string {
    return `apidiscovery.${this.naming.groupDomain}`;
  }

  apiVersions(serverAddress: string): Json {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }

  private groupEntry(name: string): Json | undefined {
    const g = this.catalog.group(name);
    if (!g) return undefined;
    return {
      name: g.name,
      versions: g.versions.map((v) => ({ groupVersion: apiVersionOf(g.name, v), version: v })),
      preferredVersion: { groupVersion: apiVersionOf(g.name, g.preferredVersion), version: g.preferredVersion },
    };
  }

  apiGroupList(): Json {
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: this.catalog.groups().filter((g) => g.name !== '').map((g) => this.groupEntry(g.name)),
    };
  }

  apiGroup(name: string): Json | undefined {
    const entry = this.groupEntry(name);
    return entry && name !== '' ? { kind: 'APIGroup', apiVersion: 'v1', ...entry } : undefined;
  }

  apiResourceList(group: string, version: string): Json | undefined {
    const resources = this.catalog.resources(group, version);
    if (resources.length === 0) return undefined;
    const out: Json[] = [];
    for (const r of resources) {
      const main: Json = { name: r.resource, singularName: r.singularName, namespaced: r.namespaced, kind: r.kind, verbs: r.verbs };
      if (r.shortNames.length) main.shortNames = r.shortNames;
      if (r.categories.length) main.categories = r.categories;
      if (isStored(r)) main.storageVersionHash = storageVersionHash(r.group, r.storageVersion, r.kind);
      out.push(main);
      for (const s of r.subresources.values()) {
        const sub: Json = { name: `${r.resource}/${s.name}`, singularName: '', namespaced: r.namespaced, kind: s.kind, verbs: s.verbs };
        if (s.group !== r.group || s.version !== r.version) {
          sub.group = s.group;
          sub.version = s.version;
        }
        out.push(sub);
      }
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(group, version), resources: out };
  }

  private discoveryResource(r: ResourceInfo): Json {
    const d: Json = {
      resource: r.resource,
      responseKind: { group: r.group, version: r.version, kind: r.kind },
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: r.singularName,
      verbs: r.verbs,
    };
    if (r.shortNames.length) d.shortNames = r.shortNames;
    if (r.categories.length) d.categories = r.categories;
    if (r.subresources.size) {
      d.subresources = [...r.subresources.values()].map((s) => ({
        subresource: s.name,
        responseKind: { group: s.group, version: s.version, kind: s.kind },
        verbs: s.verbs,
      }));
    }
    return d;
  }

  /** APIGroupDiscoveryList for `/api` (core only) or `/apis` (named groups). */
  aggregated(prefix: 'api' | 'apis', version: 'v2' | 'v2beta1'): Json {
    const groups = this.catalog.groups().filter((g) => (prefix === 'api' ? g.name === '' : g.name !== ''));
    return {
      kind: 'APIGroupDiscoveryList',
      apiVersion: `${this.aggregatedGroup}/${version}`,
      metadata: {},
      items: groups.map((g) => ({
        metadata: { name: g.name, creationTimestamp: null },
        versions: g.versions.map((v) => ({
          version: v,
          resources: this.catalog.resources(g.name, v).map((r) => this.discoveryResource(r)),
          freshness: 'Current',
        })),
      })),
    };
  }
}
