// internal/fieldmanager/path-element owns one step of a field path as structured-merge-diff
// defines it: a struct field or map key (`f:name`), a list-map item by its key fields
// (`k:{"name":"web"}`), a set item by value (`v:"a"`), or a position (`i:0`). It owns their
// total order (field < key < value < index; values ordered number < string < bool < list < map
// < null), their fieldsV1 key spelling (canonical: key fields and object members sorted, compact
// JSON) and the `.spec.containers[name="web"].image` spelling conflict messages use.
// Imports: patch/json-value, patch/go-format.

import { goNumber } from '../patch/go-format.js';
import { isJsonObject, type JsonValue } from '../patch/json-value.js';

export const FIELD = 0;
export const KEY = 1;
export const VALUE = 2;
export const INDEX = 3;

export interface FieldElement {
  readonly kind: typeof FIELD;
  readonly name: string;
  /** The fieldsV1 key (`f:name`), also the identity used for equality. */
  readonly id: string;
}
export interface KeyElement {
  readonly kind: typeof KEY;
  /** Key fields sorted by name. */
  readonly fields: ReadonlyArray<readonly [string, JsonValue]>;
  readonly id: string;
}
export interface ValueElement {
  readonly kind: typeof VALUE;
  readonly value: JsonValue;
  readonly id: string;
}
export interface IndexElement {
  readonly kind: typeof INDEX;
  readonly index: number;
  readonly id: string;
}
export type PathElement = FieldElement | KeyElement | ValueElement | IndexElement;
export type Path = readonly PathElement[];

/** Strings in UTF-8 byte order (Go's `strings.Compare`), which is code point order. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      if ((x >= 0xd800 && x <= 0xdfff) || (y >= 0xd800 && y <= 0xdfff)) {
        return a.codePointAt(i)! < b.codePointAt(i)! ? -1 : 1;
      }
      return x < y ? -1 : 1;
    }
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

const rank = (v: JsonValue): number => {
  if (v === null) return 5;
  switch (typeof v) {
    case 'number':
      return 0;
    case 'string':
      return 1;
    case 'boolean':
      return 2;
    default:
      return Array.isArray(v) ? 3 : 4;
  }
};

/** structured-merge-diff's total order of values. */
export function compareValues(a: JsonValue, b: JsonValue): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 1:
      return compareStrings(a as string, b as string);
    case 2:
      return a === b ? 0 : a ? 1 : -1;
    case 3: {
      const la = a as JsonValue[];
      const lb = b as JsonValue[];
      for (let i = 0; i < la.length && i < lb.length; i++) {
        const c = compareValues(la[i]!, lb[i]!);
        if (c !== 0) return c;
      }
      return la.length < lb.length ? -1 : la.length > lb.length ? 1 : 0;
    }
    case 4: {
      const ma = a as Record<string, JsonValue>;
      const mb = b as Record<string, JsonValue>;
      const ka = Object.keys(ma).sort(compareStrings);
      const kb = Object.keys(mb).sort(compareStrings);
      for (let i = 0; i < ka.length && i < kb.length; i++) {
        const c = compareStrings(ka[i]!, kb[i]!) || compareValues(ma[ka[i]!]!, mb[kb[i]!]!);
        if (c !== 0) return c;
      }
      return ka.length < kb.length ? -1 : ka.length > kb.length ? 1 : 0;
    }
    default:
      return 0;
  }
}

/** structured-merge-diff's value equality (numbers by value, objects by members). */
export function valuesEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !valuesEqual(a[k], b[k])) return false;
  }
  return true;
}

/** Compact JSON with object members sorted, the form fieldsV1 keys carry values in. */
export function canonicalJson(v: JsonValue): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(v).sort(compareStrings);
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k]!)}`).join(',')}}`;
}

// Field elements are interned: the same few names recur in every object, and sharing them makes
// equality a pointer comparison. The table is bounded because map keys come from user data.
const FIELD_TABLE_LIMIT = 20000;
const fieldTable = new Map<string, FieldElement>();

export function fieldElement(name: string): FieldElement {
  let pe = fieldTable.get(name);
  if (!pe) {
    pe = { kind: FIELD, name, id: `f:${name}` };
    if (fieldTable.size < FIELD_TABLE_LIMIT) fieldTable.set(name, pe);
  }
  return pe;
}

// Key elements are interned by their scalar key values, as field elements are by name: every
// walk of an object (merge, diff, field sets, validation) names each list item again, and
// building the canonical id is most of that cost. A node per key field and value; bounded like
// the field table, since values come from user data.
interface KeyNode {
  element?: KeyElement;
  next?: Map<string, Map<JsonValue, KeyNode>>;
}
const KEY_TABLE_LIMIT = 20000;
const keyRoot: KeyNode = {};
let keyNodes = 0;

function keyStep(node: KeyNode, name: string, value: JsonValue): KeyNode | undefined {
  const byValue = node.next?.get(name);
  const found = byValue?.get(value);
  if (found || keyNodes >= KEY_TABLE_LIMIT) return found;
  const created: KeyNode = {};
  keyNodes++;
  if (byValue) byValue.set(value, created);
  else (node.next ??= new Map()).set(name, new Map([[value, created]]));
  return created;
}

/** A list-map item element; `fields` need not be sorted. */
export function keyElement(fields: ReadonlyArray<readonly [string, JsonValue]>): KeyElement {
  let node: KeyNode | undefined = keyRoot;
  for (let i = 0; i < fields.length && node; i++) {
    const [name, value] = fields[i]!;
    node = value !== null && typeof value === 'object' ? undefined : keyStep(node, name, value);
  }
  if (node === keyRoot) node = undefined;
  if (node?.element) return node.element;
  const pe = buildKeyElement(fields);
  if (node) node.element = pe;
  return pe;
}

function buildKeyElement(fields: ReadonlyArray<readonly [string, JsonValue]>): KeyElement {
  const sorted = fields.length > 1 ? [...fields].sort((a, b) => compareStrings(a[0], b[0])) : fields;
  const id = `k:{${sorted.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  return { kind: KEY, fields: sorted, id };
}

export function valueElement(value: JsonValue): ValueElement {
  return { kind: VALUE, value, id: `v:${canonicalJson(value)}` };
}

export function indexElement(index: number): IndexElement {
  return { kind: INDEX, index, id: `i:${index}` };
}

export function compareElements(a: PathElement, b: PathElement): number {
  if (a === b) return 0;
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  switch (a.kind) {
    case FIELD:
      return compareStrings(a.name, (b as FieldElement).name);
    case KEY: {
      const fb = (b as KeyElement).fields;
      const fa = a.fields;
      for (let i = 0; i < fa.length && i < fb.length; i++) {
        const c = compareStrings(fa[i]![0], fb[i]![0]) || compareValues(fa[i]![1], fb[i]![1]);
        if (c !== 0) return c;
      }
      return fa.length < fb.length ? -1 : fa.length > fb.length ? 1 : 0;
    }
    case VALUE:
      return compareValues(a.value, (b as ValueElement).value);
    default: {
      const ib = (b as IndexElement).index;
      return a.index < ib ? -1 : a.index > ib ? 1 : 0;
    }
  }
}

export const elementsEqual = (a: PathElement, b: PathElement): boolean => a === b || (a.kind === b.kind && a.id === b.id);

/** Parses a fieldsV1 key. Unknown element types (a future version's) yield undefined. */
export function parseElement(s: string): PathElement | undefined {
  if (s.length < 2) throw new Error(`key must be 2 characters long: ${JSON.stringify(s)}`);
  if (s[1] !== ':') throw new Error(`missing colon: ${s}`);
  const body = s.slice(2);
  switch (s[0]) {
    case 'f':
      return fieldElement(body);
    case 'v':
      return valueElement(JSON.parse(body) as JsonValue);
    case 'k': {
      const parsed = JSON.parse(body) as unknown;
      if (!isJsonObject(parsed)) throw new Error(`invalid key element: ${s}`);
      return keyElement(Object.entries(parsed));
    }
    case 'i': {
      if (!/^[+-]?\d+$/.test(body)) throw new Error(`invalid index element: ${s}`);
      return indexElement(Number(body));
    }
    default:
      return undefined;
  }
}

/** Go `value.ToString` (`"web"`, `80`, `true`, `null`). */
export function valueString(v: JsonValue): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return goNumber(v);
    case 'boolean':
      return String(v);
    default:
      if (Array.isArray(v)) return `[${v.map(valueString).join(',')}]`;
      return Object.keys(v)
        .map((k) => `${k}=${valueString(v[k]!)}`)
        .join('');
  }
}

/** The spelling of one element in a path string (`.image`, `[name="web"]`, `[="a"]`, `[0]`). */
export function elementString(pe: PathElement): string {
  switch (pe.kind) {
    case FIELD:
      return `.${pe.name}`;
    case KEY:
      return `[${pe.fields.map(([k, v]) => `${k}=${valueString(v)}`).join(',')}]`;
    case VALUE:
      return `[=${valueString(pe.value)}]`;
    default:
      return `[${pe.index}]`;
  }
}

export const pathString = (path: Path): string => path.map(elementString).join('');
