// internal/registry/keys owns where objects live in the store: one prefix per stored resource
// (`/registry/<group or core>/<resource>/`), then `<namespace>/<name>` or `<name>`. The group
// is the upstream (data) spelling, so keys do not depend on --naming.
// Imports: schema/catalog (types only).

import type { ResourceInfo } from '../schema/catalog.js';

export const REGISTRY_ROOT = '/registry/';

// Prefixes are looked up in the watch cache's per-resource map several times per write
// (admission reads limit ranges, priority classes, webhook configurations, …): one string per
// resource, made once, carries its hash, where a fresh concatenation is flattened and hashed
// again on every lookup. Bounded (cleared when full): custom resources come and go.
const PREFIXES_LIMIT = 4096;
const prefixes = new Map<string, Map<string, string>>();
let prefixCount = 0;

export function resourcePrefix(r: Pick<ResourceInfo, 'upstreamGroup' | 'resource'>): string {
  const group = r.upstreamGroup || 'core';
  let byResource = prefixes.get(group);
  let prefix = byResource?.get(r.resource);
  if (prefix === undefined) {
    if (prefixCount >= PREFIXES_LIMIT) {
      prefixes.clear();
      prefixCount = 0;
      byResource = undefined;
    }
    if (!byResource) prefixes.set(group, (byResource = new Map()));
    prefix = `${REGISTRY_ROOT}${group}/${r.resource}/`;
    byResource.set(r.resource, prefix);
    prefixCount++;
  }
  return prefix;
}

export function objectKey(r: Pick<ResourceInfo, 'upstreamGroup' | 'resource' | 'namespaced'>, namespace: string, name: string): string {
  return r.namespaced ? `${resourcePrefix(r)}${namespace}/${name}` : `${resourcePrefix(r)}${name}`;
}

/** Prefix of one namespace's objects of a namespaced resource. */
export function namespacePrefix(r: Pick<ResourceInfo, 'upstreamGroup' | 'resource'>, namespace: string): string {
  return `${resourcePrefix(r)}${namespace}/`;
}
