// internal/fieldmanager/smd-type owns the server-side-apply view of a schema: which values are
// scalars, lists (atomic, sets, or maps keyed by fields) and maps/structs (atomic or granular),
// derived from a TypeNode with kube-openapi's rules (§2.9): `x-kubernetes-list-type` wins, else a
// `patch-strategy: merge` list is keyed by its `patch-merge-key` (a set without one), else lists
// are atomic; `map-type: atomic` makes maps and structs atomic; objects without properties and
// anything under `preserve-unknown-fields` are "deduced" (maps granular, lists atomic, all
// the way down); Quantity is a scalar and RawExtension an atomic value of any shape. Types are compiled lazily and
// cached per node, so no schema work repeats across requests.
// Imports: patch/type-node (type only), patch/json-value (type only).

import type { JsonValue } from '../patch/json-value.js';
import type { TypeNode } from '../patch/type-node.js';

export type ScalarKind = 'numeric' | 'string' | 'boolean' | 'untyped';

export interface SmdList {
  readonly atomic: boolean;
  /** Associative (set or map) lists identify items by key fields or by value. */
  readonly associative: boolean;
  /** Key fields of a list-map; empty for sets and atomic lists. */
  readonly keys: readonly string[];
  element(): SmdType;
  /** Schema default of a key field, used when an item omits it. */
  keyDefault(name: string): JsonValue | undefined;
}

export interface SmdMap {
  readonly atomic: boolean;
  /** The type of a declared struct field. */
  field(name: string): SmdType | undefined;
  /** Declared struct fields, in schema order. */
  fieldNames(): readonly string[];
  /** The type of keys that are not declared fields (undefined: such keys are not allowed). */
  element(): SmdType | undefined;
  /** Default of a declared field. */
  fieldDefault(name: string): JsonValue | undefined;
  /** Whether a declared field is required (Go: serialized even when empty). */
  fieldRequired(name: string): boolean;
}

export interface SmdType {
  readonly scalar: ScalarKind | undefined;
  readonly list: SmdList | undefined;
  readonly map: SmdMap | undefined;
  /** True for the deduced type of schemaless data (never reconciled against schema changes). */
  readonly deduced: boolean;
}

class StaticList implements SmdList {
  readonly associative = false;
  readonly atomic = true;
  readonly keys: readonly string[] = [];
  constructor(private readonly elem: () => SmdType) {}
  element(): SmdType {
    return this.elem();
  }
  keyDefault(): undefined {
    return undefined;
  }
}

class StaticMap implements SmdMap {
  constructor(
    readonly atomic: boolean,
    private readonly elem: () => SmdType,
  ) {}
  field(): undefined {
    return undefined;
  }
  fieldNames(): readonly string[] {
    return [];
  }
  element(): SmdType {
    return this.elem();
  }
  fieldDefault(): undefined {
    return undefined;
  }
  fieldRequired(): boolean {
    return false;
  }
}

/** Anything, treated as one value (lists and maps atomic). */
export const UNTYPED_ATOMIC: SmdType = {
  scalar: 'untyped',
  list: new StaticList(() => UNTYPED_ATOMIC),
  map: new StaticMap(true, () => UNTYPED_ATOMIC),
  deduced: false,
};

/** Schemaless data: maps granular with deduced values, lists atomic. */
export const DEDUCED: SmdType = {
  scalar: 'untyped',
  list: new StaticList(() => UNTYPED_ATOMIC),
  map: new StaticMap(false, () => DEDUCED),
  deduced: true,
};

/** Quantity: a plain scalar whatever its format says. */
const QUANTITY: SmdType = { scalar: 'untyped', list: undefined, map: undefined, deduced: false };

/** Types kube-openapi replaces by hand: their OpenAPI description does not describe the JSON. */
const SPECIAL_TYPES = new Map<string, SmdType>([
  ['io.k8s.apimachinery.pkg.api.resource.Quantity', QUANTITY],
  // An embedded object of any shape, owned as a whole.
  ['io.k8s.apimachinery.pkg.runtime.RawExtension', UNTYPED_ATOMIC],
]);

class CompiledList implements SmdList {
  readonly atomic: boolean;
  readonly associative: boolean;
  readonly keys: readonly string[];
  private elem: SmdType | undefined;
  constructor(
    private readonly node: TypeNode,
    private readonly preserveUnknown: boolean,
  ) {
    const [associative, keys] = listRelationship(node);
    this.associative = associative;
    this.atomic = !associative;
    this.keys = keys;
  }
  element(): SmdType {
    if (!this.elem) {
      const items = this.node.items();
      this.elem = items ? compile(items, this.preserveUnknown) : UNTYPED_ATOMIC;
    }
    return this.elem;
  }
  keyDefault(name: string): JsonValue | undefined {
    const items = this.node.items();
    const field = items?.property(name);
    const d = field?.defaultValue;
    return d === undefined ? undefined : (d as JsonValue);
  }
}

class CompiledMap implements SmdMap {
  readonly atomic: boolean;
  private readonly fields = new Map<string, SmdType | undefined>();
  private elem: SmdType | undefined | null = null;
  constructor(
    private readonly node: TypeNode,
    private readonly preserveUnknown: boolean,
  ) {
    this.atomic = node.mapType === 'atomic';
  }
  field(name: string): SmdType | undefined {
    let t = this.fields.get(name);
    if (t === undefined && !this.fields.has(name)) {
      const prop = this.node.property(name);
      t = prop ? compile(prop, this.preserveUnknown) : undefined;
      this.fields.set(name, t);
    }
    return t;
  }
  fieldNames(): readonly string[] {
    return this.node.propertyNames();
  }
  element(): SmdType | undefined {
    if (this.elem === null) {
      const ap = this.node.additionalProperties();
      if (ap === undefined) {
        // An object without properties is free-form; with properties it allows only those,
        // unless unknown fields are preserved.
        this.elem = this.preserveUnknown || this.node.propertyNames().length === 0 ? DEDUCED : undefined;
      } else if (ap === true) this.elem = DEDUCED;
      else if (ap === false) this.elem = undefined;
      else this.elem = compile(ap, this.preserveUnknown);
    }
    return this.elem;
  }
  fieldDefault(name: string): JsonValue | undefined {
    const d = this.node.property(name)?.defaultValue;
    return d === undefined ? undefined : (d as JsonValue);
  }
  fieldRequired(name: string): boolean {
    return this.node.requiredNames().includes(name);
  }
}

/** kube-openapi's getListElementRelationship: [associative, keys]. */
function listRelationship(node: TypeNode): [boolean, readonly string[]] {
  switch (node.listType) {
    case 'atomic':
      return [false, []];
    case 'set':
      return [true, []];
    case 'map':
      return [true, node.listMapKeys ?? []];
    case undefined:
      break;
    default:
      return [false, []];
  }
  switch (node.patchStrategy) {
    case 'merge':
    case 'merge,retainKeys':
      return [true, node.patchMergeKey ? [node.patchMergeKey] : []];
    default:
      return [false, []];
  }
}

function scalarKind(node: TypeNode): ScalarKind {
  switch (node.type) {
    case 'integer':
    case 'number':
      return 'numeric';
    case 'boolean':
      return 'boolean';
    case 'string':
      return node.format === undefined || node.format === '' || node.format === 'byte' ? 'string' : 'untyped';
    default:
      return 'untyped';
  }
}

const cache: [WeakMap<TypeNode, SmdType>, WeakMap<TypeNode, SmdType>] = [new WeakMap(), new WeakMap()];

function compile(node: TypeNode, inheritedPreserveUnknown: boolean): SmdType {
  // Named types are converted on their own, so the flag does not flow through a reference.
  const preserveUnknown = node.preserveUnknownFields || (node.name === undefined && inheritedPreserveUnknown);
  const memo = cache[preserveUnknown ? 1 : 0];
  let t = memo.get(node);
  if (t) return t;
  const special = node.name === undefined ? undefined : SPECIAL_TYPES.get(node.name);
  if (special) {
    t = special;
  } else {
    switch (node.type) {
      case 'object':
        t = { scalar: undefined, list: undefined, map: new CompiledMap(node, preserveUnknown), deduced: false };
        break;
      case 'array':
        t = { scalar: undefined, list: new CompiledList(node, preserveUnknown), map: undefined, deduced: false };
        break;
      case undefined:
        t = {
          scalar: 'untyped',
          list: new CompiledList(node, preserveUnknown),
          map: new CompiledMap(node, preserveUnknown),
          deduced: false,
        };
        break;
      default:
        t = { scalar: scalarKind(node), list: undefined, map: undefined, deduced: false };
    }
  }
  memo.set(node, t);
  return t;
}

/** The apply view of a schema node; `undefined` (no schema) is the deduced type. */
export function smdTypeOf(node: TypeNode | undefined): SmdType {
  return node ? compile(node, false) : DEDUCED;
}
