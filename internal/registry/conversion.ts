// internal/registry/conversion owns moving objects between the shapes that serve one stored
// resource: the registry stores each resource in its storage version and serves it in the
// requested one. That is usually another version of the same group, but a group may serve
// another group's storage (events.k8s.io Events are stored as core Events, as upstream).
// Most versions of a kind share their schema, so the default conversion only rewrites
// apiVersion; kinds whose shapes differ register a converter here. These conversions are
// synchronous and cheap (the list and watch paths run them per object); custom resources whose
// definition names a conversion webhook go through webhook-conversion instead, which the
// registry (generic-registry's toVersion/toVersionAll) awaits only for them.
// Imports: schema/catalog (types).

import type { ResourceInfo } from '../schema/catalog.js';

export type JsonObject = Record<string, unknown>;

/** One side of a conversion: the upstream group (schema spelling) and the version. */
export interface VersionRef {
  readonly upstreamGroup: string;
  readonly version: string;
}

export type Converter = (obj: JsonObject, from: VersionRef, to: VersionRef) => JsonObject;

/** What conversion needs of a served resource. */
export type ConversionSide = Pick<ResourceInfo, 'group' | 'upstreamGroup' | 'version' | 'apiVersion' | 'storageResource'>;

const converters = new Map<string, Converter>();

/** Registers a converter for the stored resource `<upstream group>/<resource>` (ResourceInfo.storageResource). */
export function registerConverter(storageResource: string, c: Converter): void {
  converters.set(storageResource, c);
}

/** The version part of `apiVersion` when it belongs to `group` ('' = core), else undefined. */
function versionIn(apiVersion: unknown, group: string): string | undefined {
  if (typeof apiVersion !== 'string') return undefined;
  if (group === '') return apiVersion.includes('/') ? undefined : apiVersion;
  return apiVersion.startsWith(`${group}/`) ? apiVersion.slice(group.length + 1) : undefined;
}

/**
 * Converts `obj`, in the shape of `from`, to the shape of `to` (both serve the same stored
 * resource). Returns obj itself when it already has `to`'s apiVersion; otherwise a new object.
 */
export function convertObject(obj: JsonObject, from: ConversionSide, to: ConversionSide): JsonObject {
  if (obj.apiVersion === to.apiVersion) return obj;
  // An object's own apiVersion wins over `from`'s version when it names one of from's group:
  // objects written before the storage version changed keep the version they were written in.
  const fromVersion = versionIn(obj.apiVersion, from.group) ?? from.version;
  const c = converters.get(to.storageResource);
  const converted = c
    ? c(obj, { upstreamGroup: from.upstreamGroup, version: fromVersion }, { upstreamGroup: to.upstreamGroup, version: to.version })
    : { ...obj };
  converted.apiVersion = to.apiVersion;
  return converted;
}
