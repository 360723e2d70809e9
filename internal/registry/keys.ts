// internal/registry/keys owns where objects live in the store: one prefix per stored resource
// (`/registry/<group or core>/<resource>/`), then `<namespace>/<name>` or `<name>`. The group
// is the upstream (data) spelling, so keys do not depend on --naming.
// Imports: schema/catalog (types only).

import type { ResourceInfo } from '../schema/catalog.js';

export const REGISTRY_ROOT = '/registry/';

export function resourcePrefix(r: Pick<ResourceInfo, 'upstreamGroup' | 'resource'>): string {
  return `${REGISTRY_ROOT}${r.upstreamGroup || 'core'}/${r.resource}/`;
}

export function objectKey(r: Pick<ResourceInfo, 'upstreamGroup' | 'resource' | 'namespaced'>, namespace: string, name: string): string {
  return r.namespaced ? `${resourcePrefix(r)}${namespace}/${name}` : `${resourcePrefix(r)}${name}`;
}

/** Prefix of one namespace's objects of a namespaced resource. */
export function namespacePrefix(r: Pick<ResourceInfo, 'upstreamGroup' | 'resource'>, namespace: string): string {
  return `${resourcePrefix(r)}${namespace}/`;
}
