// internal/patch/type-node owns the read-only schema view the merge engines share: a `TypeNode`
// walks an OpenAPI schema (following `$ref`/`allOf` wrappers) and exposes what strategic merge
// patch and server-side apply need — child nodes, list/map topology markers and patch
// strategies. One implementation serves the built-in kinds (component schemas in
// `builtinSchemas`) and, later, custom resources (an inline `openAPIV3Schema`, whose markers
// carry the configured extension prefix).
// Imports: schema/openapi-index.

import { builtinSchemas, SchemaIndex, type SchemaNode } from '../schema/openapi-index.js';

/**
 * A node of a type schema. Nodes are immutable and memoized: asking for the same child twice
 * returns the same object, so consumers may cache derived data per node (WeakMap).
 */
export interface TypeNode {
  /** JSON schema `type` (`object`, `array`, `string`, `integer`, `number`, `boolean`), undefined = any. */
  readonly type: string | undefined;
  readonly format: string | undefined;
  /** Component name when this node was reached through a `$ref` (for example `…meta.v1.Time`). */
  readonly name: string | undefined;
  /** The schema's `default`, used for list-map keys that an item omits. */
  readonly defaultValue: unknown;
  /** Names declared under `properties`, in schema order. */
  propertyNames(): readonly string[];
  /** The node of a declared property. */
  property(name: string): TypeNode | undefined;
  /** Names listed under `required`. */
  requiredNames(): readonly string[];
  /** `additionalProperties`: a node, `true` (anything), `false`, or undefined when absent. */
  additionalProperties(): TypeNode | boolean | undefined;
  /** Node of a map key: the declared property, else the `additionalProperties` schema. */
  field(name: string): TypeNode | undefined;
  /** Node of array items. */
  items(): TypeNode | undefined;
  /** `x-…-list-type` as written (`atomic`, `set`, `map`; other values are the consumer's problem). */
  readonly listType: string | undefined;
  readonly listMapKeys: readonly string[] | undefined;
  /** `x-…-map-type` as written (`atomic`, `granular`). */
  readonly mapType: string | undefined;
  /** `x-…-patch-strategy` as written, possibly comma separated (`merge,retainKeys`). */
  readonly patchStrategy: string | undefined;
  readonly patchMergeKey: string | undefined;
  readonly preserveUnknownFields: boolean;
  readonly intOrString: boolean;
  readonly embeddedResource: boolean;
}

/** How to read a schema tree: reference resolution and the extension prefix of its markers. */
export interface OpenApiTypeNodeOptions {
  /** `x-kubernetes-` (default, the built-in data) or the configured `x-cluster-` for CRDs. */
  extensionPrefix?: string;
  /** Resolves `$ref` / single `allOf` wrappers; defaults to the built-in index. */
  index?: SchemaIndex;
}

const UPSTREAM_PREFIX = 'x-kubernetes-';

interface NodeContext {
  readonly index: SchemaIndex;
  readonly prefix: string;
  /** Memo per wrapper node: each property object of the parsed documents is unique. */
  readonly nodes: WeakMap<SchemaNode, OpenApiTypeNode>;
}

class OpenApiTypeNode implements TypeNode {
  readonly type: string | undefined;
  readonly format: string | undefined;
  readonly name: string | undefined;
  readonly defaultValue: unknown;
  readonly listType: string | undefined;
  readonly listMapKeys: readonly string[] | undefined;
  readonly mapType: string | undefined;
  readonly patchStrategy: string | undefined;
  readonly patchMergeKey: string | undefined;
  readonly preserveUnknownFields: boolean;
  readonly intOrString: boolean;
  readonly embeddedResource: boolean;
  private readonly resolved: SchemaNode;
  private props: Map<string, TypeNode | undefined> | undefined;
  private names: readonly string[] | undefined;
  private additional: TypeNode | boolean | undefined | null = null;
  private itemNode: TypeNode | undefined | null = null;

  constructor(
    private readonly wrapper: SchemaNode,
    private readonly ctx: NodeContext,
  ) {
    this.resolved = ctx.index.resolve(wrapper);
    this.name = SchemaIndex.refName(wrapper);
    this.type = typeof this.resolved.type === 'string' ? this.resolved.type : undefined;
    this.format = typeof this.resolved.format === 'string' ? this.resolved.format : undefined;
    // A default written next to the reference describes this use of the type.
    this.defaultValue = 'default' in wrapper ? wrapper.default : this.resolved.default;
    this.listType = this.stringExt('list-type');
    const keys = this.ext('list-map-keys');
    this.listMapKeys = Array.isArray(keys) && keys.every((k) => typeof k === 'string') ? (keys as string[]) : undefined;
    this.mapType = this.stringExt('map-type');
    this.patchStrategy = this.stringExt('patch-strategy');
    this.patchMergeKey = this.stringExt('patch-merge-key');
    this.preserveUnknownFields = this.ext('preserve-unknown-fields') === true;
    this.intOrString = this.ext('int-or-string') === true || this.format === 'int-or-string';
    this.embeddedResource = this.ext('embedded-resource') === true;
  }

  /** Markers on the referencing node win over the referenced type's (kube-openapi does the same). */
  private ext(key: string): unknown {
    const name = this.ctx.prefix + key;
    return this.wrapper[name] ?? this.resolved[name];
  }

  private stringExt(key: string): string | undefined {
    const v = this.ext(key);
    return typeof v === 'string' ? v : undefined;
  }

  propertyNames(): readonly string[] {
    this.names ??= Object.keys(this.resolved.properties ?? {});
    return this.names;
  }

  requiredNames(): readonly string[] {
    const r = this.resolved.required;
    return Array.isArray(r) ? r : [];
  }

  property(name: string): TypeNode | undefined {
    const props = this.resolved.properties;
    if (!props || !Object.hasOwn(props, name)) return undefined;
    this.props ??= new Map();
    let node = this.props.get(name);
    if (node === undefined && !this.props.has(name)) {
      node = nodeFor(props[name]!, this.ctx);
      this.props.set(name, node);
    }
    return node;
  }

  additionalProperties(): TypeNode | boolean | undefined {
    if (this.additional === null) {
      const ap = this.resolved.additionalProperties;
      this.additional = typeof ap === 'boolean' || ap === undefined ? ap : nodeFor(ap, this.ctx);
    }
    return this.additional;
  }

  field(name: string): TypeNode | undefined {
    const p = this.property(name);
    if (p) return p;
    const ap = this.additionalProperties();
    return typeof ap === 'object' ? ap : undefined;
  }

  items(): TypeNode | undefined {
    if (this.itemNode === null) {
      const items = this.resolved.items;
      this.itemNode = items && typeof items === 'object' ? nodeFor(items, this.ctx) : undefined;
    }
    return this.itemNode;
  }
}

function nodeFor(wrapper: SchemaNode, ctx: NodeContext): TypeNode | undefined {
  if (!wrapper || typeof wrapper !== 'object') return undefined;
  let node = ctx.nodes.get(wrapper);
  if (!node) {
    try {
      node = new OpenApiTypeNode(wrapper, ctx);
    } catch {
      // An unresolvable reference is a data problem; the consumer sees "no schema" there.
      return undefined;
    }
    ctx.nodes.set(wrapper, node);
  }
  return node;
}

const contexts = new WeakMap<SchemaIndex, Map<string, NodeContext>>();

function contextFor(index: SchemaIndex, prefix: string): NodeContext {
  let byPrefix = contexts.get(index);
  if (!byPrefix) {
    byPrefix = new Map();
    contexts.set(index, byPrefix);
  }
  let ctx = byPrefix.get(prefix);
  if (!ctx) {
    ctx = { index, prefix, nodes: new WeakMap() };
    byPrefix.set(prefix, ctx);
  }
  return ctx;
}

const REF_PREFIX = '#/components/schemas/';

/**
 * The node of a component schema of the built-in data, for example
 * `builtinTypeNode('io.k8s.api.apps.v1.Deployment')`. Undefined when the name is unknown.
 * Nodes are cached for the life of the process.
 */
export function builtinTypeNode(schemaName: string, index: SchemaIndex = builtinSchemas): TypeNode | undefined {
  const ctx = contextFor(index, UPSTREAM_PREFIX);
  const byName = namedRoots(index);
  let wrapper = byName.get(schemaName);
  if (!wrapper) {
    if (!index.get(schemaName)) return undefined;
    wrapper = { $ref: REF_PREFIX + schemaName };
    byName.set(schemaName, wrapper);
  }
  return nodeFor(wrapper, ctx);
}

const rootsByIndex = new WeakMap<SchemaIndex, Map<string, SchemaNode>>();
function namedRoots(index: SchemaIndex): Map<string, SchemaNode> {
  let m = rootsByIndex.get(index);
  if (!m) {
    m = new Map();
    rootsByIndex.set(index, m);
  }
  return m;
}

/**
 * A node over an arbitrary (usually inline) OpenAPI schema, for example a CRD version's
 * `openAPIV3Schema`. Nodes are memoized per schema object, so keep the schema object alive and
 * unchanged for as long as the nodes are used.
 */
export function openApiTypeNode(schema: SchemaNode, options: OpenApiTypeNodeOptions = {}): TypeNode | undefined {
  return nodeFor(schema, contextFor(options.index ?? builtinSchemas, options.extensionPrefix ?? UPSTREAM_PREFIX));
}

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** Delegates to a node but answers some properties with other nodes. */
class OverriddenTypeNode implements TypeNode {
  constructor(
    private readonly base: TypeNode,
    private readonly overrides: ReadonlyMap<string, TypeNode>,
  ) {}
  get type() {
    return this.base.type ?? 'object';
  }
  get format() {
    return this.base.format;
  }
  get name() {
    return this.base.name;
  }
  get defaultValue() {
    return this.base.defaultValue;
  }
  get listType() {
    return this.base.listType;
  }
  get listMapKeys() {
    return this.base.listMapKeys;
  }
  get mapType() {
    return this.base.mapType;
  }
  get patchStrategy() {
    return this.base.patchStrategy;
  }
  get patchMergeKey() {
    return this.base.patchMergeKey;
  }
  get preserveUnknownFields() {
    return this.base.preserveUnknownFields;
  }
  get intOrString() {
    return this.base.intOrString;
  }
  get embeddedResource() {
    return this.base.embeddedResource;
  }
  private namesCache: readonly string[] | undefined;
  propertyNames(): readonly string[] {
    this.namesCache ??= [...new Set([...this.base.propertyNames(), ...this.overrides.keys()])];
    return this.namesCache;
  }
  property(name: string): TypeNode | undefined {
    return this.overrides.get(name) ?? this.base.property(name);
  }
  requiredNames(): readonly string[] {
    return this.base.requiredNames();
  }
  additionalProperties() {
    return this.base.additionalProperties();
  }
  field(name: string): TypeNode | undefined {
    return this.overrides.get(name) ?? this.base.field(name);
  }
  items() {
    return this.base.items();
  }
}

const stringNode = (): TypeNode => openApiTypeNode(STRING_SCHEMA)!;
const STRING_SCHEMA: SchemaNode = { type: 'string' };

/**
 * The root node of a custom resource version: its `openAPIV3Schema` with `metadata` read as the
 * built-in ObjectMeta and `apiVersion`/`kind` as strings, the way upstream builds the schema it
 * uses for field management. Without a schema the object is free-form (all keys fields, all
 * lists atomic).
 */
export function customResourceTypeNode(
  openAPIV3Schema: SchemaNode | undefined,
  options: OpenApiTypeNodeOptions = {},
): TypeNode {
  const base = openApiTypeNode(openAPIV3Schema ?? { type: 'object' }, options) ?? openApiTypeNode({ type: 'object' })!;
  const meta = builtinTypeNode(OBJECT_META, options.index ?? builtinSchemas);
  const overrides = new Map<string, TypeNode>([
    ['apiVersion', stringNode()],
    ['kind', stringNode()],
  ]);
  if (meta) overrides.set('metadata', meta);
  return new OverriddenTypeNode(base, overrides);
}
