// internal/validation/schema-compile owns turning OpenAPI component schemas into compact trees
// the validators and defaulters walk quickly: `$ref`s resolved once, property tables as Maps,
// special upstream types (Quantity, IntOrString, Time, RawExtension, …) recognised by name,
// schema markers read once, and the values upstream materializes for absent fields precomputed.
// Trees are cached per schema index and naming, and cycles (JSONSchemaProps) are shared nodes.
// Imports: naming (Naming type), schema (SchemaIndex).

import type { Naming } from '../naming/naming.js';
import { builtinSchemas, SchemaIndex, type SchemaNode } from '../schema/openapi-index.js';
import { compileValueRules, type ValueRules } from './value-rules.js';

export type StringFormat = 'date-time' | 'byte' | undefined;

export type CompiledNode =
  | { readonly kind: 'any'; readonly rules?: ValueRules }
  | {
      readonly kind: 'string';
      readonly format: StringFormat;
      readonly enumValues?: ReadonlySet<unknown>;
      /** The Go type decodes itself from a JSON string (metav1.Duration): its type errors end the decode. */
      readonly custom?: true;
      readonly rules?: ValueRules;
    }
  | { readonly kind: 'integer'; readonly bits: 32 | 64; readonly enumValues?: ReadonlySet<unknown>; readonly rules?: ValueRules }
  | { readonly kind: 'number'; readonly enumValues?: ReadonlySet<unknown>; readonly rules?: ValueRules }
  | { readonly kind: 'boolean'; readonly rules?: ValueRules }
  | { readonly kind: 'int-or-string'; readonly rules?: ValueRules }
  | { readonly kind: 'quantity'; readonly rules?: ValueRules }
  | CompiledObject
  | CompiledArray;

/**
 * How a JSON null is treated: 'absent' for built-in kinds (Go decodes null to the zero value),
 * 'value' for custom schemas marked nullable, 'invalid' for other custom schema values.
 */
export type NullHandling = 'absent' | 'value' | 'invalid';

export interface CompiledProperty {
  readonly node: CompiledNode;
  /**
   * How a JSON null here is treated: 'absent' for built-in kinds (Go decodes null to the zero
   * value), 'value' for custom schemas marked nullable, 'invalid' for other custom schema fields.
   */
  readonly nullValue: NullHandling;
  /**
   * The value upstream's serialization shows when the field is absent (Go non-pointer structs
   * as `{}`, non-omitempty scalars as their zero value, `+default` markers), or undefined when
   * the field is simply omitted.
   */
  readonly fill: unknown;
}

export interface CompiledObject {
  readonly kind: 'object';
  /** Schema component name, when the node came from one (diagnostics, tolerance tables). */
  readonly name: string | undefined;
  readonly properties: ReadonlyMap<string, CompiledProperty>;
  readonly required: readonly string[];
  /** Value schema of a map (`additionalProperties`). */
  readonly additional: CompiledNode | undefined;
  /** How a JSON null map value is treated, as CompiledProperty.nullValue. */
  readonly additionalNull: NullHandling;
  /** Any key is acceptable: free-form objects and `x-…-preserve-unknown-fields`. */
  readonly preserveUnknown: boolean;
  /** `x-…-embedded-resource`: apiVersion, kind and metadata are implicitly allowed. */
  readonly embedded: boolean;
  /** Properties with a fill value, for the defaulting walk. */
  readonly fills: ReadonlyArray<readonly [string, unknown]>;
  /** Value validations (custom-resource schemas only; undefined when there are none). */
  readonly rules?: ValueRules;
}

export interface CompiledArray {
  readonly kind: 'array';
  readonly items: CompiledNode;
  readonly listType: 'atomic' | 'set' | 'map' | undefined;
  readonly mapKeys: readonly string[];
  /** Upstream accepts duplicates here on create/update (or reports them itself with its own wording). */
  readonly skipUniqueness: boolean;
  /** How a JSON null item is treated, as CompiledProperty.nullValue. */
  readonly itemNull: NullHandling;
  readonly rules?: ValueRules;
}

const ANY: CompiledNode = { kind: 'any' };

/** Schemas whose JSON shape the OpenAPI document does not spell out. */
const SPECIAL: Record<string, CompiledNode> = {
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { kind: 'quantity' },
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { kind: 'int-or-string' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': { kind: 'string', format: 'date-time' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': { kind: 'string', format: 'date-time' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.Duration': { kind: 'string', format: undefined, custom: true },
  'io.k8s.apimachinery.pkg.runtime.RawExtension': ANY,
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1': ANY,
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON': ANY,
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray': ANY,
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool': ANY,
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray': ANY,
};

/**
 * Zero-valued defaults of optional fields that Go still serializes (no `omitempty`), so upstream
 * shows them although the schema does not mark them required.
 */
const NON_OMITEMPTY_OPTIONAL = new Set([
  'io.k8s.api.apps.v1.StatefulSetStatus.availableReplicas',
  'io.k8s.api.core.v1.Event.reportingComponent',
  'io.k8s.api.core.v1.Event.reportingInstance',
]);

/**
 * Lists whose map/set uniqueness the schema layer leaves alone for built-in kinds: upstream
 * accepts duplicates there on create and update (env, ports, pull secrets, addresses, finalizers,
 * status conditions, …), or the per-kind rules report them with upstream's wording (containers,
 * volumes, volume mounts).
 */
const BUILTIN_UNIQUENESS_SKIPPED = new Set([
  'io.k8s.api.core.v1.Container.env',
  'io.k8s.api.core.v1.Container.ports',
  'io.k8s.api.core.v1.Container.volumeMounts',
  'io.k8s.api.core.v1.Container.volumeDevices',
  'io.k8s.api.core.v1.EphemeralContainer.env',
  'io.k8s.api.core.v1.EphemeralContainer.ports',
  'io.k8s.api.core.v1.EphemeralContainer.volumeMounts',
  'io.k8s.api.core.v1.EphemeralContainer.volumeDevices',
  'io.k8s.api.core.v1.PodSpec.containers',
  'io.k8s.api.core.v1.PodSpec.initContainers',
  'io.k8s.api.core.v1.PodSpec.ephemeralContainers',
  'io.k8s.api.core.v1.PodSpec.volumes',
  'io.k8s.api.core.v1.PodSpec.imagePullSecrets',
  'io.k8s.api.core.v1.PodSpec.hostAliases',
  'io.k8s.api.core.v1.ServiceSpec.ports',
  'io.k8s.api.core.v1.NodeStatus.addresses',
  'io.k8s.api.core.v1.ServiceAccount.secrets',
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta.finalizers',
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta.ownerReferences',
]);

const isZeroScalar = (v: unknown): boolean => v === '' || v === 0 || v === false;
const isEmptyObject = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;

export interface CompileOptions {
  /**
   * Built-in schemas follow Go's serialization: zero-valued fills and the uniqueness tolerance
   * table apply. Custom-resource schemas set this false.
   */
  readonly builtin: boolean;
  /**
   * The naming's extension prefix: built-in JSONSchemaProps properties are renamed to it, and
   * markers in custom schemas are read in either spelling.
   */
  readonly naming?: Naming;
  /** The schema named rootName describes a whole resource: apiVersion, kind, metadata are implicit. */
  readonly rootIsResource?: boolean;
  readonly rootName?: string;
}

/** Compiles and caches the trees of one schema index. */
export class SchemaCompiler {
  private readonly byName = new Map<string, CompiledNode>();
  private readonly extPrefix: string;

  constructor(
    private readonly index: SchemaIndex,
    private readonly options: CompileOptions,
  ) {
    this.extPrefix = options.naming?.extensionPrefix ?? 'x-kubernetes-';
  }

  /** The tree of a component schema; undefined when the index has no such schema. */
  named(name: string): CompiledNode | undefined {
    const cached = this.byName.get(name);
    if (cached) return cached;
    const special = SPECIAL[name];
    if (special) return special;
    const schema = this.index.get(name);
    if (!schema) return undefined;
    return this.compileNamed(name, schema);
  }

  /** The tree of an inline schema node (resolving references through the index). */
  node(schema: SchemaNode): CompiledNode {
    const ref = SchemaIndex.refName(schema);
    if (ref) return this.named(ref) ?? ANY;
    return this.compileInline(schema, undefined);
  }

  private compileNamed(name: string, schema: SchemaNode): CompiledNode {
    if (schema.type === 'object' || schema.properties) {
      // Registered before its children compile so recursive schemas share one node.
      const obj = this.newObject(name, schema);
      this.byName.set(name, obj);
      this.fillObject(obj, schema, name);
      return obj;
    }
    const node = this.compileInline(schema, name);
    this.byName.set(name, node);
    return node;
  }

  /** A schema marker in upstream spelling or in the naming's (custom-resource schemas use the latter). */
  private marker(schema: SchemaNode, name: string): unknown {
    return schema[`x-kubernetes-${name}`] ?? schema[`${this.extPrefix}${name}`];
  }

  private newObject(name: string | undefined, schema: SchemaNode): MutableObject {
    // Built-in objects without a declared shape are Go free-form values (RawExtension and the
    // like); in custom-resource schemas such an object keeps no fields unless it opts out.
    const noShape = this.options.builtin && !schema.properties && schema.additionalProperties === undefined;
    return {
      kind: 'object',
      name,
      properties: new Map(),
      required: schema.required ?? [],
      additional: undefined,
      additionalNull: 'absent',
      preserveUnknown: noShape || this.marker(schema, 'preserve-unknown-fields') === true,
      embedded: this.marker(schema, 'embedded-resource') === true || (this.options.rootIsResource === true && name === this.options.rootName),
      fills: [],
      rules: this.rulesOf(schema),
    };
  }

  /** Value validations apply to custom-resource schemas only: built-in kinds validate in code. */
  private rulesOf(schema: SchemaNode): ValueRules | undefined {
    return this.options.builtin ? undefined : compileValueRules(schema);
  }

  private nullHandling(schema: SchemaNode): NullHandling {
    return this.options.builtin ? 'absent' : schema.nullable === true ? 'value' : 'invalid';
  }

  /**
   * Null array items and map values: kube-openapi's type check refuses them only where the schema
   * names a type (int-or-string is checked as integer or string); untyped schemas accept null.
   */
  private itemNullHandling(schema: SchemaNode): NullHandling {
    const typed = (schema.type !== undefined && schema.type !== '') || this.marker(schema, 'int-or-string') === true;
    return typed ? this.nullHandling(schema) : this.options.builtin ? 'absent' : 'value';
  }

  private fillObject(obj: MutableObject, schema: SchemaNode, name: string | undefined): void {
    const required = new Set(schema.required ?? []);
    for (const [rawKey, propSchema] of Object.entries(schema.properties ?? {})) {
      // JSONSchemaProps (inside CRD objects) spells its x-… properties with the naming's prefix.
      const key =
        this.options.builtin && rawKey.startsWith('x-kubernetes-') ? `${this.extPrefix}${rawKey.slice('x-kubernetes-'.length)}` : rawKey;
      const node = this.node(propSchema);
      const fill = this.fillFor(propSchema, node, required.has(rawKey) || NON_OMITEMPTY_OPTIONAL.has(`${name}.${rawKey}`));
      const finalNode =
        node.kind === 'array' && this.options.builtin && name && BUILTIN_UNIQUENESS_SKIPPED.has(`${name}.${rawKey}`)
          ? { ...node, skipUniqueness: true }
          : node;
      const nullValue = this.nullHandling(propSchema);
      obj.properties.set(key, { node: finalNode, fill, nullValue });
      if (fill !== undefined) obj.fills.push([key, fill]);
    }
    if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
      obj.additional = this.node(schema.additionalProperties);
      obj.additionalNull = this.itemNullHandling(schema.additionalProperties);
    } else if (schema.additionalProperties === true) {
      obj.additional = ANY;
    }
  }

  private fillFor(propSchema: SchemaNode, node: CompiledNode, requiredOrSerialized: boolean): unknown {
    if (!('default' in propSchema) || !this.options.builtin) return this.options.builtin ? undefined : propSchema.default;
    const d = propSchema.default;
    // `default: {}` marks a Go non-pointer struct: serialized even when empty.
    if (isEmptyObject(d)) return node.kind === 'object' && !node.preserveUnknown ? {} : undefined;
    if (isZeroScalar(d)) return requiredOrSerialized ? d : undefined;
    return d;
  }

  private compileInline(schema: SchemaNode, name: string | undefined): CompiledNode {
    const ref = SchemaIndex.refName(schema);
    if (ref) return this.named(ref) ?? ANY;
    const enumValues = Array.isArray(schema.enum) ? new Set(schema.enum) : undefined;
    // Objects take theirs in newObject; `rules` stays absent (not undefined) elsewhere when there
    // are none, so built-in nodes keep their shape.
    const rules = schema.type === 'object' || (schema.type === undefined && schema.properties) ? undefined : this.rulesOf(schema);
    const withRules = <T extends CompiledNode>(node: T): T => (rules ? { ...node, rules } : node);
    if (this.marker(schema, 'int-or-string') === true || schema.format === 'int-or-string') return withRules({ kind: 'int-or-string' });
    switch (schema.type) {
      case 'string':
        return withRules({
          kind: 'string',
          format: schema.format === 'date-time' || schema.format === 'byte' ? schema.format : undefined,
          enumValues,
        });
      case 'integer':
        return withRules({ kind: 'integer', bits: schema.format === 'int32' ? 32 : 64, enumValues });
      case 'number':
        return withRules({ kind: 'number', enumValues });
      case 'boolean':
        return withRules({ kind: 'boolean' });
      case 'array': {
        const items = schema.items ? this.node(schema.items) : ANY;
        return withRules({
          kind: 'array',
          items,
          listType: this.marker(schema, 'list-type') as CompiledArray['listType'],
          mapKeys: (this.marker(schema, 'list-map-keys') as string[] | undefined) ?? [],
          skipUniqueness: false,
          itemNull: schema.items ? this.itemNullHandling(schema.items) : 'absent',
        });
      }
      case 'object': {
        const obj = this.newObject(name, schema);
        this.fillObject(obj, schema, name);
        return obj;
      }
      default:
        if (schema.properties) {
          const obj = this.newObject(name, schema);
          this.fillObject(obj, schema, name);
          return obj;
        }
        return rules ? { kind: 'any', rules } : ANY;
    }
  }
}

type MutableObject = {
  -readonly [K in keyof CompiledObject]: K extends 'properties'
    ? Map<string, CompiledProperty>
    : K extends 'fills'
      ? Array<readonly [string, unknown]>
      : CompiledObject[K];
};

/** The name under which customSchemaCompiler registers a custom resource's root schema. */
export const CUSTOM_ROOT_SCHEMA = 'custom.Root';

/**
 * A compiler for one custom resource version's `openAPIV3Schema` (JSONSchemaProps form). Use
 * with the schema functions as `{ compiler }` and schema name CUSTOM_ROOT_SCHEMA. The root is
 * treated as a resource (apiVersion, kind, metadata allowed); `default`s fill absent fields.
 */
export function customSchemaCompiler(openAPIV3Schema: SchemaNode, naming?: Naming): SchemaCompiler {
  const index = new SchemaIndex(() => ({ [CUSTOM_ROOT_SCHEMA]: openAPIV3Schema }));
  return new SchemaCompiler(index, { builtin: false, naming, rootIsResource: true, rootName: CUSTOM_ROOT_SCHEMA });
}

const builtinCompilers = new Map<string, SchemaCompiler>();

/**
 * The process-wide compiler of the built-in schemas for a naming (the naming only changes the
 * spelling of `x-…` property names inside CustomResourceDefinition schemas).
 */
export function builtinCompiler(naming?: Naming): SchemaCompiler {
  const key = naming?.extensionPrefix ?? 'x-kubernetes-';
  let c = builtinCompilers.get(key);
  if (!c) {
    c = new SchemaCompiler(builtinSchemas, { builtin: true, naming });
    builtinCompilers.set(key, c);
  }
  return c;
}
