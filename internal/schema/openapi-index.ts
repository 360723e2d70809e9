// internal/schema/openapi-index owns read access to the OpenAPI component schemas of the built-in
// kinds (proto/openapi-schemas.json, upstream spelling): lookup by name, `$ref`/`allOf`
// resolution, and the kind → schema map from `x-kubernetes-group-version-kind`. The file is
// parsed on first use, not at start-up, to keep idle memory and start time small.
// Imports: data-files.

import { readDataFile } from './data-files.js';

/** A JSON Schema node as the OpenAPI documents write it. Only the members we read are typed. */
export interface SchemaNode {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  items?: SchemaNode;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  allOf?: SchemaNode[];
  $ref?: string;
  nullable?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-group-version-kind'?: Array<{ group: string; version: string; kind: string }>;
  'x-kubernetes-unions'?: unknown[];
  [extension: string]: unknown;
}

const REF_PREFIX = '#/components/schemas/';

export class SchemaIndex {
  private schemas: Record<string, SchemaNode> | undefined;
  private kinds: Map<string, string> | undefined;

  constructor(private readonly load: () => Record<string, SchemaNode> = defaultLoad) {}

  /** All schemas by upstream name. */
  all(): Readonly<Record<string, SchemaNode>> {
    this.schemas ??= this.load();
    return this.schemas;
  }

  get(name: string): SchemaNode | undefined {
    return this.all()[name];
  }

  /**
   * Follows `$ref` and the single-element `allOf: [{$ref}]` wrapper the documents use to attach a
   * description or default to a reference. Returns the node itself when it is neither.
   */
  resolve(node: SchemaNode): SchemaNode {
    let current = node;
    for (let depth = 0; depth < 32; depth++) {
      const ref = current.$ref ?? (current.allOf?.length === 1 ? current.allOf[0]!.$ref : undefined);
      if (!ref) return current;
      const target = ref.startsWith(REF_PREFIX) ? this.get(ref.slice(REF_PREFIX.length)) : undefined;
      if (!target) throw new Error(`unresolvable schema reference ${ref}`);
      current = target;
    }
    throw new Error('schema reference chain too deep');
  }

  /** The schema name of an upstream group/version/kind (group '' for core). */
  schemaNameForKind(upstreamGroup: string, version: string, kind: string): string | undefined {
    if (!this.kinds) {
      this.kinds = new Map();
      for (const [name, s] of Object.entries(this.all())) {
        for (const gvk of s['x-kubernetes-group-version-kind'] ?? []) {
          this.kinds.set(`${gvk.group}/${gvk.version}/${gvk.kind}`, name);
        }
      }
    }
    return this.kinds.get(`${upstreamGroup}/${version}/${kind}`);
  }

  /** The name a `$ref` points to, or undefined for inline schemas. */
  static refName(node: SchemaNode): string | undefined {
    const ref = node.$ref ?? (node.allOf?.length === 1 ? node.allOf[0]!.$ref : undefined);
    return ref?.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : undefined;
  }
}

function defaultLoad(): Record<string, SchemaNode> {
  const parsed = JSON.parse(readDataFile('openapi-schemas.json')) as Record<string, SchemaNode | string>;
  delete parsed._generated;
  return parsed as Record<string, SchemaNode>;
}

/** One process-wide index: the data is immutable, so sharing it costs nothing and saves memory. */
export const builtinSchemas = new SchemaIndex();
