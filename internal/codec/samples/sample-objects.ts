// internal/codec/samples/sample-objects owns generated sample objects for codec tests: from an
// OpenAPI component schema it builds a JSON-form object in which every property is set with a
// plausible value of its type and format (RFC 3339 times, quantities, int-or-string, base64 bytes,
// embedded JSON), so a round trip through a codec exercises every field. Values are canonical
// (what the server itself would produce), so decode(encode(x)) must equal x.
// Imports: naming, schema (OpenAPI index).

import type { Naming } from '../../naming/naming.js';
import { builtinSchemas, SchemaIndex, type SchemaNode } from '../../schema/openapi-index.js';

export interface SampleOptions {
  /**
   * `full`: non-zero numbers, `true`, two items per list and map. `zeros`: numbers 0 and booleans
   * false (strings stay non-empty), to check that explicit zeros survive.
   */
  variant?: 'full' | 'zeros';
  /** Varies choices between equivalent forms (int vs string IntOrString, bool vs schema, …). */
  seed?: number;
  /** Served group names for the top-level apiVersion (default: upstream names). */
  naming?: Naming;
  schemas?: SchemaIndex;
  /** Nesting at which recursion through the same schema stops (default 1: no self-nesting). */
  maxRepeats?: number;
}

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const APIEXT = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.';

const TYPE_META_DESCRIPTIONS = ['APIVersion defines the versioned schema', 'Kind is a string value representing the REST resource'];

function isTypeMetaProperty(name: string, node: SchemaNode): boolean {
  return (name === 'apiVersion' || name === 'kind') && TYPE_META_DESCRIPTIONS.some((d) => node.description?.startsWith(d));
}

/** The served apiVersion of a group/version (core group → `v1`). */
function apiVersionOf(group: string, version: string, naming: Naming | undefined): string {
  if (group === '') return version;
  return `${naming ? naming.group(group) : group}/${version}`;
}

/**
 * A sample object of a schema, with `apiVersion`/`kind` set at the top level when the schema has
 * a group-version-kind (TypeMeta of nested objects is left out, as protobuf cannot carry it).
 */
export function sampleObject(schemaName: string, options: SampleOptions = {}): Record<string, unknown> {
  // Custom-JSON schemas (Time, Quantity, …) yield their string/number/array form; callers that
  // cover every schema must allow for that.
  const schemas = options.schemas ?? builtinSchemas;
  const node = schemas.get(schemaName);
  if (!node) throw new Error(`unknown schema ${schemaName}`);
  const gen = new Generator(schemas, options);
  const value = gen.object(schemaName, node, [], 0) as Record<string, unknown>;
  const gvk = node['x-kubernetes-group-version-kind']?.[0];
  if (gvk) {
    const rest = { ...value };
    delete rest.apiVersion;
    delete rest.kind;
    return { apiVersion: apiVersionOf(gvk.group, gvk.version, options.naming), kind: gvk.kind, ...rest };
  }
  return value;
}

class Generator {
  private seed: number;
  private readonly zeros: boolean;
  private readonly maxRepeats: number;

  constructor(
    private readonly schemas: SchemaIndex,
    options: SampleOptions,
  ) {
    this.seed = (options.seed ?? 1) >>> 0 || 1;
    this.zeros = options.variant === 'zeros';
    this.maxRepeats = options.maxRepeats ?? 1;
  }

  private next(): number {
    // xorshift32: deterministic and cheap.
    let x = this.seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.seed = x >>> 0;
    return this.seed;
  }

  object(name: string | undefined, node: SchemaNode, path: string[], depth: number): unknown {
    const special = name ? this.special(name, path, depth) : undefined;
    if (special !== undefined) return special;
    const out: Record<string, unknown> = {};
    for (const [prop, propNode] of Object.entries(node.properties ?? {})) {
      if (isTypeMetaProperty(prop, propNode)) continue;
      const v = this.value(prop, propNode, path, depth + 1);
      if (v !== undefined) out[prop] = v;
    }
    if (!node.properties) {
      if (node.additionalProperties && typeof node.additionalProperties === 'object') {
        return this.map('entry', node.additionalProperties, path, depth);
      }
      // A named schema without properties is an empty Go struct; an inline one is free-form JSON.
      return name ? {} : { sample: 'value', n: 1, nested: { list: [1, 'two'] } };
    }
    return out;
  }

  private map(prop: string, itemNode: SchemaNode, path: string[], depth: number): Record<string, unknown> | undefined {
    const out: Record<string, unknown> = {};
    for (const key of ['example.com/key-a', 'key-b']) {
      const v = this.value(prop, itemNode, path, depth + 1);
      if (v === undefined) return undefined;
      out[key] = v;
    }
    return out;
  }

  private value(prop: string, raw: SchemaNode, path: string[], depth: number): unknown {
    const refName = SchemaIndex.refName(raw);
    if (refName) {
      const repeats = path.filter((p) => p === refName).length;
      if (repeats >= this.maxRepeats) return undefined;
      const target = this.schemas.get(refName);
      if (!target) return undefined;
      return this.object(refName, target, [...path, refName], depth);
    }
    const node = raw;
    if (node.enum && node.enum.length > 0) return node.enum[0];
    if (node['x-kubernetes-int-or-string']) return this.next() % 2 ? 3 : '30%';
    switch (node.type) {
      case 'string':
        return this.string(prop, node.format);
      case 'integer':
        if (this.zeros) return 0;
        return node.format === 'int64' ? 1_234_567_890_123 : this.next() % 3 === 0 ? -7 : 42;
      case 'number':
        return this.zeros ? 0 : 2.5;
      case 'boolean':
        return !this.zeros;
      case 'array': {
        if (!node.items) return undefined;
        const items: unknown[] = [];
        for (let i = 0; i < 2; i++) {
          const v = this.value(prop, node.items, path, depth + 1);
          if (v === undefined) return undefined;
          items.push(v);
        }
        return items;
      }
      case 'object':
        if (node.additionalProperties && typeof node.additionalProperties === 'object') {
          return this.map(prop, node.additionalProperties, path, depth);
        }
        return this.object(undefined, node, path, depth);
      default:
        return undefined;
    }
  }

  private string(prop: string, format: string | undefined): string {
    if (format === 'byte') return Buffer.from(`bytes of ${prop}`).toString('base64');
    if (format === 'date-time') return '2024-05-06T07:08:09Z';
    // Some non-ASCII text so UTF-8 lengths differ from character counts.
    return this.next() % 4 === 0 ? `${prop}-ünïcødé-✓` : `${prop}-value`;
  }

  /** Custom-JSON types, whose JSON form is not an object of their properties. */
  private special(name: string, path: string[], depth: number): unknown {
    switch (name) {
      case `${META}Time`:
        return '2024-05-06T07:08:09Z';
      case `${META}MicroTime`:
        return '2024-05-06T07:08:09.123456Z';
      case `${META}Duration`:
        return '1h2m3.5s';
      case 'io.k8s.apimachinery.pkg.api.resource.Quantity':
        return this.next() % 2 ? '250m' : '1Gi';
      case 'io.k8s.apimachinery.pkg.util.intstr.IntOrString':
        return this.next() % 2 ? 8080 : 'http';
      case 'io.k8s.apimachinery.pkg.runtime.RawExtension':
        return { apiVersion: 'v1', kind: 'ConfigMap', data: { key: 'value' } };
      case `${META}FieldsV1`:
        return { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } };
      case `${APIEXT}JSON`:
        return this.next() % 2 ? { default: ['a', 1, true, null] } : 'a string default';
      case `${APIEXT}JSONSchemaPropsOrBool`:
        if (this.next() % 2 || path.includes(`${APIEXT}JSONSchemaProps#nested`)) return !this.zeros;
        return this.nestedProps(path, depth);
      case `${APIEXT}JSONSchemaPropsOrArray`: {
        const inner = this.nestedProps(path, depth);
        if (inner === undefined) return undefined;
        return this.next() % 2 ? inner : [inner, inner];
      }
      case `${APIEXT}JSONSchemaPropsOrStringArray`: {
        if (this.next() % 2) return ['dependency-a', 'dependency-b'];
        return this.nestedProps(path, depth);
      }
      default:
        return undefined;
    }
  }

  private nestedProps(path: string[], depth: number): unknown {
    const name = `${APIEXT}JSONSchemaProps`;
    if (path.filter((p) => p === name).length > this.maxRepeats) return undefined;
    const node = this.schemas.get(name)!;
    return this.object(name, node, [...path, name], depth + 1);
  }
}

/** Every OpenAPI component name, for tests that cover all schemas. */
export function allSchemaNames(schemas: SchemaIndex = builtinSchemas): string[] {
  return Object.keys(schemas.all()).sort();
}

/** Schema names that carry a group-version-kind (top-level kinds, their lists, options, Status…). */
export function kindSchemaNames(schemas: SchemaIndex = builtinSchemas): string[] {
  return allSchemaNames(schemas).filter((n) => (schemas.get(n)?.['x-kubernetes-group-version-kind']?.length ?? 0) > 0);
}
