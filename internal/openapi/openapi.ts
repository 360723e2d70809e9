// internal/openapi owns the published API description: /openapi/v3 (an index of one OpenAPI
// 3.0 document per group-version, addressed by content hash) and /openapi/v2 (one Swagger
// 2.0 document), built from the catalog and the committed component schemas, in the
// configured naming (group names and `x-<naming>-*` extension keys). Documents are built on
// first request and kept, since the data cannot change while the server runs.
// Imports: schema, naming.

import { createHash } from 'node:crypto';
import type { Naming } from '../naming/naming.js';
import { apiVersionOf, type ApiCatalog, type ResourceInfo } from '../schema/catalog.js';
import { SchemaIndex, type SchemaNode } from '../schema/openapi-index.js';

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

export class OpenApiDocuments {
  private v3Docs: Map<string, { bytes: Buffer; hash: string }> | undefined;
  private v2Doc: Buffer | undefined;
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
    return json
      .replaceAll('"x-kubernetes-', `"${this.naming.extensionPrefix}`)
      .replace(/"group":"([^"]*)"/g, (_m, g: string) => `"group":${JSON.stringify(this.naming.group(g))}`);
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
        const schemaRef = action === 'list' && r.listKind && !r.custom ? `${schemaName}List` : schemaName;
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
          const own = (r.custom.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as Json;
          schemas[customSchemaName(r)] = { ...own, 'x-kubernetes-group-version-kind': [{ group: r.group, version: r.version, kind: r.kind }] };
          roots.push('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
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
}

export { apiVersionOf };
