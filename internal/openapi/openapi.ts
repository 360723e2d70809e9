// internal/openapi owns the published API description: /openapi/v3 (an index of one OpenAPI
// 3.0 document per group-version, addressed by content hash) and /openapi/v2 (one Swagger
// 2.0 document, JSON and gnostic protobuf), built from the catalog and the committed component
// schemas, in the configured naming (group names and `x-<naming>-*` extension keys; the kind
// marker `x-kubernetes-group-version-kind` under both namings, as stock clients need it). Documents are built on
// first request and kept, since the data cannot change while the server runs.
// Imports: schema, naming, openapi-v2-proto.

import { createHash } from 'node:crypto';
import type { Naming } from '../naming/naming.js';
import { apiVersionOf, type ApiCatalog, type ResourceInfo } from '../schema/catalog.js';
import { SchemaIndex, type SchemaNode } from '../schema/openapi-index.js';
import { encodeOpenApiV2 } from './openapi-v2-proto.js';

type Json = Record<string, unknown>;

const ACTION_BY_VERB: Record<string, [method: string, action: string, item: boolean]> = {
  get: ['get', 'get', true],
  list: ['get', 'list', false],
  create: ['post', 'post', false],
  update: ['put', 'put', true],
  patch: ['patch', 'patch', true],
  delete: ['delete', 'delete', true],
  deletecollection: ['delete', 'deletecollection', false],
};

const queryParam = (name: string, type = 'string') => ({ name, in: 'query', schema: { type }, uniqueItems: true });
const WRITE_PARAMS = [queryParam('dryRun'), queryParam('fieldManager'), queryParam('fieldValidation')];
const READ_LIST_PARAMS = ['allowWatchBookmarks', 'continue', 'fieldSelector', 'labelSelector', 'limit', 'resourceVersion', 'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds', 'watch'].map((n) => queryParam(n));
const PARAMETERS: Record<string, unknown[]> = {
  get: [queryParam('pretty')],
  list: READ_LIST_PARAMS,
  post: WRITE_PARAMS,
  put: WRITE_PARAMS,
  patch: [...WRITE_PARAMS, queryParam('force', 'boolean')],
  delete: [queryParam('dryRun'), queryParam('gracePeriodSeconds', 'integer'), queryParam('propagationPolicy')],
  deletecollection: [queryParam('dryRun'), queryParam('gracePeriodSeconds', 'integer'), queryParam('propagationPolicy'), ...READ_LIST_PARAMS],
};

/** Component name of a custom resource version's schema: reversed group, version, kind. */
export const customSchemaName = (r: ResourceInfo): string => `${r.group.split('.').reverse().join('.')}.${r.version}.${r.kind}`;

const schemaOf = (r: ResourceInfo): string | undefined => r.schemaName ?? (r.custom ? customSchemaName(r) : undefined);

const META = '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.';
// TypeMeta's and the metadata fields' documentation, as upstream's CRD OpenAPI builder adds them.
const API_VERSION_PROP = {
  description:
    'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
  type: 'string',
};
const KIND_PROP = {
  description:
    'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
  type: 'string',
};
const OBJECT_META_PROP = {
  description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
  allOf: [{ $ref: `${META}ObjectMeta` }],
};

/**
 * Nested `x-kubernetes-embedded-resource` objects get apiVersion, kind and metadata (and the
 * first two become required), as upstream publishes them.
 */
function withEmbeddedProperties(node: unknown): unknown {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return node;
  const s = { ...(node as Json) };
  if (s.properties && typeof s.properties === 'object') {
    s.properties = Object.fromEntries(Object.entries(s.properties as Json).map(([k, v]) => [k, withEmbeddedProperties(v)]));
  }
  if (s.items) s.items = withEmbeddedProperties(s.items);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') s.additionalProperties = withEmbeddedProperties(s.additionalProperties);
  if (s['x-kubernetes-embedded-resource'] === true) {
    s.properties = { ...((s.properties as Json | undefined) ?? {}), apiVersion: API_VERSION_PROP, kind: KIND_PROP, metadata: OBJECT_META_PROP };
    const required = new Set((s.required as string[] | undefined) ?? []);
    s.required = [...required, ...['kind', 'apiVersion'].filter((f) => !required.has(f))];
  }
  return s;
}

/**
 * The published OpenAPI v3 schemas of one custom resource version: the object (its definition's
 * schema plus apiVersion, kind and metadata, which every object has) and its list kind, as
 * upstream's CRD OpenAPI builder publishes them. Without these, `kubectl explain` shows no
 * apiVersion/kind/metadata and cannot explain `<resource>.metadata`.
 */
export function customResourceSchemas(r: ResourceInfo): Record<string, Json> {
  const name = customSchemaName(r);
  const gvk = (kind: string) => [{ group: r.group, version: r.version, kind }];
  // A version without a schema is published as a bare object, as upstream does.
  const own = r.custom?.schema ? (withEmbeddedProperties(r.custom.schema) as Json) : undefined;
  const item: Json = !own ? { type: 'object', 'x-kubernetes-group-version-kind': gvk(r.kind) } : { ...own, properties: { ...((own.properties as Json | undefined) ?? {}), metadata: OBJECT_META_PROP, apiVersion: API_VERSION_PROP, kind: KIND_PROP }, 'x-kubernetes-group-version-kind': gvk(r.kind) };
  const listKind = r.listKind ?? `${r.kind}List`;
  const list: Json = {
    description: `${listKind} is a list of ${r.kind}`,
    required: ['items'],
    properties: {
      items: {
        description: `List of ${r.resource}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        items: { $ref: `#/components/schemas/${name}` },
        type: 'array',
      },
      metadata: {
        description: 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
        allOf: [{ $ref: `${META}ListMeta` }],
      },
      apiVersion: API_VERSION_PROP,
      kind: KIND_PROP,
    },
    'x-kubernetes-group-version-kind': gvk(listKind),
  };
  return { [name]: item, [`${customListSchemaName(r)}`]: list };
}

const customListSchemaName = (r: ResourceInfo): string => `${customSchemaName(r).slice(0, -r.kind.length)}${r.listKind ?? `${r.kind}List`}`;

export class OpenApiDocuments {
  private v3Docs: Map<string, { bytes: Buffer; hash: string }> | undefined;
  private v2Doc: Buffer | undefined;
  private v2Proto: Buffer | undefined;
  /** The catalog generation the cached documents describe. */
  private builtFor = -1;

  constructor(
    private readonly catalog: ApiCatalog,
    private readonly schemas: SchemaIndex,
    private readonly naming: Naming,
    private readonly serverVersion: string,
  ) {}

  /** Rewrites upstream names into the configured naming, on serialized JSON. */
  private rename(json: string): string {
    if (this.naming.mode === 'kubernetes') return json;
    // Keys and GVK group values only: inside JSON strings a quote is always escaped, so an
    // unescaped `"x-kubernetes-` starts a key and `"group":"` starts a group value.
    const gvkKey = `"${this.naming.extensionPrefix}group-version-kind":`;
    return (
      json
        .replaceAll('"x-kubernetes-', `"${this.naming.extensionPrefix}`)
        .replace(/"group":"([^"]*)"/g, (_m, g: string) => `"group":${JSON.stringify(this.naming.group(g))}`)
        // The kind marker also in upstream's spelling (served group names): stock clients
        // (`kubectl explain`, client-go's field validation) find a schema only by it. A GVK
        // value is an array of flat objects, so it ends at the first `]`.
        .replace(new RegExp(`${gvkKey}(\\[[^\\]]*\\])`, 'g'), (_m, v: string) => `${gvkKey}${v},"x-kubernetes-group-version-kind":${v}`)
    );
  }

  /** Names of every schema reachable from `roots`. */
  private closure(roots: Iterable<string>): string[] {
    const seen = new Set<string>();
    const stack = [...roots];
    while (stack.length) {
      const name = stack.pop()!;
      if (seen.has(name)) continue;
      const node = this.schemas.get(name);
      if (!node) continue;
      seen.add(name);
      const visit = (n: unknown): void => {
        if (!n || typeof n !== 'object') return;
        if (Array.isArray(n)) return n.forEach(visit);
        for (const [k, v] of Object.entries(n as Json)) {
          if (k === '$ref' && typeof v === 'string') stack.push(v.replace('#/components/schemas/', ''));
          else visit(v);
        }
      };
      visit(node);
    }
    return [...seen].sort();
  }

  private gvPath(group: string, version: string): string {
    return group === '' ? `api/${version}` : `apis/${group}/${version}`;
  }

  private paths(resources: readonly ResourceInfo[], refPrefix: string): Json {
    const paths: Json = {};
    for (const r of resources) {
      const schemaName = schemaOf(r);
      if (!schemaName) continue;
      const base = `/${this.gvPath(r.group, r.version)}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.resource}`;
      // Operations carry served names and keep the upstream extension spelling: clients (kubectl's
      // field-validation probe) read them as protocol, not as schema markers.
      const gvk = { group: r.group, version: r.version, kind: r.kind };
      for (const verb of r.verbs) {
        const spec = ACTION_BY_VERB[verb];
        if (!spec) continue;
        const [method, action, item] = spec;
        const path = item ? `${base}/{name}` : base;
        const schemaRef = action !== 'list' ? schemaName : r.custom ? customListSchemaName(r) : r.listKind ? `${schemaName}List` : schemaName;
        const entry = (paths[path] ??= {}) as Json;
        entry[method] = {
          operationId: `${action}${r.kind}`,
          parameters: PARAMETERS[action] ?? [],
          'x-kubernetes-action': action,
          'x-kubernetes-group-version-kind': gvk,
          responses: { '200': refPrefix === '#/definitions/' ? { description: 'OK', schema: { $ref: refPrefix + schemaRef } } : { description: 'OK', content: { 'application/json': { schema: { $ref: refPrefix + schemaRef } } } } },
        };
      }
    }
    return paths;
  }

  private buildV3(): Map<string, { bytes: Buffer; hash: string }> {
    const docs = new Map<string, { bytes: Buffer; hash: string }>();
    const common = ['io.k8s.apimachinery.pkg.apis.meta.v1.Status', 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions', 'io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList'];
    for (const g of this.catalog.groups()) {
      for (const v of g.versions) {
        const resources = this.catalog.resources(g.name, v);
        const roots = resources.flatMap((r) => (r.schemaName ? [r.schemaName, `${r.schemaName}List`] : []));
        const schemas: Json = {};
        for (const r of resources) {
          // A custom resource's schema as its definition gives it, marked with its kind.
          if (!r.custom) continue;
          Object.assign(schemas, customResourceSchemas(r));
          roots.push('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta');
        }
        for (const name of this.closure([...roots, ...common])) schemas[name] = this.schemas.get(name);
        const head = { openapi: '3.0.0', info: { title: 'clusterd', version: this.serverVersion }, paths: this.paths(resources, '#/components/schemas/') };
        const text = JSON.stringify(head).slice(0, -1) + `,"components":{"schemas":${this.rename(JSON.stringify(schemas))}}}`;
        const bytes = Buffer.from(text);
        docs.set(this.gvPath(g.name, v), { bytes, hash: createHash('sha512').update(bytes).digest('hex').toUpperCase() });
      }
    }
    return docs;
  }

  /** Drops cached documents once the served resources have changed (custom resources). */
  private fresh(): void {
    if (this.builtFor === this.catalog.generation) return;
    this.builtFor = this.catalog.generation;
    this.v3Docs = undefined;
    this.v2Doc = undefined;
    this.v2Proto = undefined;
  }

  v3Index(): Buffer {
    this.fresh();
    this.v3Docs ??= this.buildV3();
    const paths: Json = {};
    for (const [path, { hash }] of this.v3Docs) paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
    return Buffer.from(JSON.stringify({ paths }));
  }

  v3(path: string): Buffer | undefined {
    this.fresh();
    this.v3Docs ??= this.buildV3();
    return this.v3Docs.get(path.replace(/^\/+|\/+$/g, ''))?.bytes;
  }

  v2(): Buffer {
    this.fresh();
    if (!this.v2Doc) {
      const definitions: Json = {};
      const all = this.schemas.all();
      for (const name of Object.keys(all).sort()) definitions[name] = all[name] as SchemaNode;
      const resources = [...this.catalog.all()];
      const head = { swagger: '2.0', info: { title: 'clusterd', version: this.serverVersion }, paths: this.paths(resources, '#/definitions/') };
      const defs = this.rename(JSON.stringify(definitions).replaceAll('"#/components/schemas/', '"#/definitions/'));
      this.v2Doc = Buffer.from(JSON.stringify(head).slice(0, -1) + `,"definitions":${defs}}`);
    }
    return this.v2Doc;
  }

  /** The v2 document as gnostic's protobuf Document (see openapi-v2-proto), same content. */
  v2Protobuf(): Buffer {
    const json = this.v2();
    this.v2Proto ??= encodeOpenApiV2(JSON.parse(json.toString()) as Json);
    return this.v2Proto;
  }
}

export { apiVersionOf };
