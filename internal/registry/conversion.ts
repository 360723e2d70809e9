// internal/registry/conversion owns moving objects between the versions of one resource: the
// registry stores each resource in its storage version and serves it in the requested one.
// Most versions of a kind share their schema, so the default conversion only rewrites
// apiVersion; kinds whose versions differ register a converter here.
// Imports: schema/catalog (types).

import type { ResourceInfo } from '../schema/catalog.js';

export type JsonObject = Record<string, unknown>;

export type Converter = (obj: JsonObject, fromVersion: string, toVersion: string) => JsonObject;

const converters = new Map<string, Converter>();

/** Registers a converter for `<upstream group>/<resource>`. */
export function registerConverter(storageResource: string, c: Converter): void {
  converters.set(storageResource, c);
}

/** Converts `obj` (any served version of `resource`) to `toVersion`. Returns obj itself when nothing changes. */
export function convertObject(resource: ResourceInfo, obj: JsonObject, toVersion: string): JsonObject {
  const apiVersion = resource.group ? `${resource.group}/${toVersion}` : toVersion;
  if (obj.apiVersion === apiVersion) return obj;
  const from = String(obj.apiVersion ?? '').split('/').pop() ?? '';
  const c = converters.get(resource.storageResource);
  const converted = c ? c(obj, from, toVersion) : { ...obj };
  converted.apiVersion = apiVersion;
  return converted;
}
