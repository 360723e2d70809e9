// internal/aggregator/openapi owns merging the extensions' OpenAPI into ours: `/openapi/v2`
// gains each available extension's paths under `/apis/<group>/<version>` and the definitions
// they use; `/openapi/v3` lists `apis/<group>/<version>` of each extension whose v3 document
// was fetched, and serves that document. A wrapper of the built-in OpenApiSource (any other
// member of it passes through unchanged), so internal/openapi stays as it is.
// Imports: http/deps (OpenApiSource type), aggregator/extension-docs.

import { createHash } from 'node:crypto';
import type { OpenApiSource } from '../http/deps.js';
import type { ExtensionDoc, ExtensionDocs } from './extension-docs.js';

type Json = Record<string, unknown>;

/** Merges the extensions' Swagger 2.0 paths and definitions into ours (ours win on a clash). */
export function mergeV2(base: Json, docs: readonly ExtensionDoc[]): Json {
  const paths = { ...((base.paths ?? {}) as Json) };
  const definitions = { ...((base.definitions ?? {}) as Json) };
  for (const d of docs) {
    const spec = d.openapiV2;
    if (!spec) continue;
    const prefix = `/apis/${d.group}/${d.version}`;
    for (const [p, item] of Object.entries((spec.paths ?? {}) as Json)) if ((p === prefix || p.startsWith(`${prefix}/`)) && !(p in paths)) paths[p] = item;
    for (const [name, def] of Object.entries((spec.definitions ?? {}) as Json)) if (!(name in definitions)) definitions[name] = def;
  }
  return { ...base, paths, definitions };
}

export function withExtensionOpenApi<T extends OpenApiSource>(base: T, docs: ExtensionDocs): T {
  let v2Cache: { base: Buffer; generation: number; merged: Buffer } | undefined;
  const v3Docs = new Map<string, { generation: number; bytes: Buffer; hash: string }>();
  const v3Of = (path: string): { bytes: Buffer; hash: string } | undefined => {
    const d = docs.all().find((x) => `apis/${x.group}/${x.version}` === path && x.openapiV3);
    if (!d) return undefined;
    let c = v3Docs.get(path);
    if (!c || c.generation !== docs.generation) {
      const bytes = Buffer.from(JSON.stringify(d.openapiV3));
      c = { generation: docs.generation, bytes, hash: createHash('sha512').update(bytes).digest('hex').toUpperCase() };
      v3Docs.set(path, c);
    }
    return c;
  };
  const overrides: OpenApiSource = {
    v2() {
      const own = base.v2();
      const ext = docs.all().filter((d) => d.openapiV2);
      if (ext.length === 0) return own;
      if (!v2Cache || v2Cache.base !== own || v2Cache.generation !== docs.generation) {
        v2Cache = { base: own, generation: docs.generation, merged: Buffer.from(JSON.stringify(mergeV2(JSON.parse(own.toString('utf8')) as Json, ext))) };
      }
      return v2Cache.merged;
    },
    v3Index() {
      const own = base.v3Index();
      const ext = docs.all().filter((d) => d.openapiV3);
      if (ext.length === 0) return own;
      const index = JSON.parse(own.toString('utf8')) as { paths: Json };
      for (const d of ext) {
        const path = `apis/${d.group}/${d.version}`;
        const doc = v3Of(path);
        if (doc && !(path in index.paths)) index.paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${doc.hash}` };
      }
      return Buffer.from(JSON.stringify(index));
    },
    v3(path) {
      return base.v3(path) ?? v3Of(path)?.bytes;
    },
  };
  return new Proxy(base, {
    get(target, prop, receiver) {
      if (prop in overrides) return overrides[prop as keyof OpenApiSource];
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
