// internal/validation/go-decode owns the type check a built-in object's JSON body gets before
// anything else looks at it: upstream decodes POST/PUT bodies into the kind's Go struct
// (sigs.k8s.io/json, a fork of encoding/json), and a value of the wrong JSON type fails that
// decode, which the endpoint answers with 400 BadRequest
// (`Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string
// into Go struct field DeploymentSpec.spec.replicas of type int32`). Schema validation would
// report the same value later as a 422 with other wording, so this runs first.
//
// What the Go decoder does, and this check mirrors:
//  - a plain type mismatch is *saved* and decoding goes on; the first one in document order is
//    reported, as `json: cannot unmarshal <string|number|number 1.5|bool|object|array> into Go
//    struct field <Struct>.<json path> of type <go type>`, where Struct is the innermost struct
//    holding the field and the path is the JSON names of the struct fields from the root: array
//    indices and map keys are not part of it;
//  - types with their own UnmarshalJSON (IntOrString, Quantity, Time, MicroTime, Duration) fail
//    by *returning* an error: decoding stops there and that error wins over any saved one. The
//    IntOrString/Time ones are encoding/json type errors of their inner value (int32, string),
//    which the outer decoder then labels with the field's context; a Quantity's is its parse
//    error, without context;
//  - a base64 field ([]byte) with bad base64 saves encoding/base64's CorruptInputError;
//  - null is accepted everywhere (pointers, slices and maps become nil; other values stay zero).
// Trees come from schema-compile (shared with schema validation), so the per-request cost is
// one walk of the body; messages are only built for the error.
// Imports: naming (Naming type), schema-compile, quantity, plain-json.

import { builtinCompiler, type CompiledNode, type CompiledObject } from './schema-compile.js';
import type { Naming } from '../naming/naming.js';
import { parseQuantity, QUANTITY_FORMAT_MESSAGE } from './quantity.js';
import { isObject } from './plain-json.js';

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const INT64_LIMIT = 2 ** 63;

/**
 * Go types of fields whose declared type is a named type the OpenAPI document does not name
 * (it describes `v1.PullPolicy` as a plain string, `v1.ResourceList` as a map of quantities).
 * Keyed by schema name and JSON field name; the value is the Go type of the field with any
 * pointer removed, as encoding/json prints it. Only fields a hand-written manifest commonly gets
 * wrong are listed; other fields get the type the schema implies (`string`, `[]string`, …).
 */
const NAMED_FIELD_TYPES: ReadonlyMap<string, string> = new Map([
  ['io.k8s.api.core.v1.ResourceRequirements.limits', 'v1.ResourceList'],
  ['io.k8s.api.core.v1.ResourceRequirements.requests', 'v1.ResourceList'],
  ['io.k8s.api.core.v1.VolumeResourceRequirements.limits', 'v1.ResourceList'],
  ['io.k8s.api.core.v1.VolumeResourceRequirements.requests', 'v1.ResourceList'],
  ['io.k8s.api.core.v1.Container.imagePullPolicy', 'v1.PullPolicy'],
  ['io.k8s.api.core.v1.Container.terminationMessagePolicy', 'v1.TerminationMessagePolicy'],
  ['io.k8s.api.core.v1.PodSpec.restartPolicy', 'v1.RestartPolicy'],
  ['io.k8s.api.core.v1.PodSpec.dnsPolicy', 'v1.DNSPolicy'],
  ['io.k8s.api.core.v1.ContainerPort.protocol', 'v1.Protocol'],
  ['io.k8s.api.core.v1.ServicePort.protocol', 'v1.Protocol'],
  ['io.k8s.api.core.v1.ServiceSpec.type', 'v1.ServiceType'],
  ['io.k8s.api.core.v1.ServiceSpec.sessionAffinity', 'v1.ServiceAffinity'],
  ['io.k8s.api.core.v1.Secret.type', 'v1.SecretType'],
  ['io.k8s.api.core.v1.Capabilities.add', '[]v1.Capability'],
  ['io.k8s.api.core.v1.Capabilities.drop', '[]v1.Capability'],
  ['io.k8s.api.core.v1.PersistentVolumeClaimSpec.accessModes', '[]v1.PersistentVolumeAccessMode'],
  ['io.k8s.api.core.v1.Toleration.operator', 'v1.TolerationOperator'],
  ['io.k8s.api.core.v1.Toleration.effect', 'v1.TaintEffect'],
  ['io.k8s.api.core.v1.HTTPGetAction.scheme', 'v1.URIScheme'],
  ['io.k8s.api.apps.v1.DeploymentStrategy.type', 'v1.DeploymentStrategyType'],
  ['io.k8s.api.networking.v1.HTTPIngressPath.pathType', 'v1.PathType'],
]);

/** Go's name for the type of a compiled node (encoding/json prints reflect.Type.String()). */
function goTypeOf(node: CompiledNode): string {
  switch (node.kind) {
    case 'string':
      return node.format === 'byte' ? '[]uint8' : 'string';
    case 'integer':
      return node.bits === 32 ? 'int32' : 'int64';
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    case 'int-or-string':
      return 'int32';
    case 'quantity':
      return 'resource.Quantity';
    case 'any':
      return 'interface {}';
    case 'array':
      return `[]${goTypeOf(node.items)}`;
    case 'object':
      if (node.name) return goStructName(node.name, true);
      return `map[string]${node.additional ? goTypeOf(node.additional) : 'interface {}'}`;
  }
}

/** `io.k8s.api.apps.v1.DeploymentSpec` → `v1.DeploymentSpec` (qualified) or `DeploymentSpec`. */
function goStructName(schemaName: string, qualified: boolean): string {
  const last = schemaName.lastIndexOf('.');
  if (!qualified) return schemaName.slice(last + 1);
  const pkgStart = schemaName.lastIndexOf('.', last - 1);
  return schemaName.slice(pkgStart + 1);
}

/** encoding/json's word for a JSON value in "cannot unmarshal <word>". */
function jsonWord(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  return Array.isArray(v) ? 'array' : 'object';
}

/** Go's number literal as the decoder saw it (JSON text is gone; JS's shortest form is close). */
const numberText = (n: number): string => String(n);

/** A struct (a schema component with declared fields), as opposed to a map or a free-form value. */
const isStruct = (node: CompiledObject): boolean => node.properties.size > 0 || (node.name !== undefined && node.additional === undefined);

class Abort {
  constructor(readonly message: string) {}
}

class Checker {
  /** JSON names of the struct fields from the root to the current value. */
  private readonly fields: string[] = [];
  /** Schema name of the innermost struct whose field is being decoded. */
  private struct: string | undefined;
  saved: string | undefined;

  /**
   * The Go type of a value at `node`; `owner` and `key` name the struct field the value belongs
   * to (for the named-type table) and `depth` how many array levels below that field it is.
   */
  private goType(node: CompiledNode, owner: CompiledObject | undefined, key: string, depth: number): string {
    if (owner?.name) {
      const named = NAMED_FIELD_TYPES.get(`${owner.name}.${key}`);
      if (named) {
        let t = named;
        for (let i = 0; i < depth && t.startsWith('[]'); i++) t = t.slice(2);
        return t;
      }
    }
    return goTypeOf(node);
  }

  private typeError(word: string, goType: string): string {
    if (this.struct === undefined && this.fields.length === 0) return `json: cannot unmarshal ${word} into Go value of type ${goType}`;
    const struct = this.struct === undefined ? '' : goStructName(this.struct, false);
    return `json: cannot unmarshal ${word} into Go struct field ${struct}.${this.fields.join('.')} of type ${goType}`;
  }

  private save(message: string): void {
    if (this.saved === undefined) this.saved = message;
  }

  // The field context travels as separate arguments rather than an object: this runs for every
  // value of every create and update, and allocating per field would show.
  value(v: unknown, node: CompiledNode, owner: CompiledObject | undefined, key: string, depth: number): void {
    if (v === null || v === undefined) return;
    switch (node.kind) {
      case 'any':
        return;
      case 'string':
        if (node.format === 'byte') return this.bytes(v, node, owner, key, depth);
        if (typeof v === 'string') return;
        // Time, MicroTime and Duration unmarshal through an inner string: the failure returns.
        if (node.format === 'date-time' || node.custom) throw new Abort(this.typeError(jsonWord(v), 'string'));
        return this.save(this.typeError(jsonWord(v), this.goType(node, owner, key, depth)));
      case 'integer':
        if (typeof v === 'number') {
          const bad = !Number.isInteger(v) || (node.bits === 32 ? v < INT32_MIN || v > INT32_MAX : Math.abs(v) >= INT64_LIMIT);
          if (bad) this.save(this.typeError(`number ${numberText(v)}`, this.goType(node, owner, key, depth)));
          return;
        }
        return this.save(this.typeError(jsonWord(v), this.goType(node, owner, key, depth)));
      case 'number':
        if (typeof v !== 'number') this.save(this.typeError(jsonWord(v), this.goType(node, owner, key, depth)));
        return;
      case 'boolean':
        if (typeof v !== 'boolean') this.save(this.typeError(jsonWord(v), this.goType(node, owner, key, depth)));
        return;
      case 'int-or-string':
        // IntOrString.UnmarshalJSON: a JSON string is the string form, anything else is
        // decoded into its int32.
        if (typeof v === 'string') return;
        if (typeof v === 'number') {
          if (Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX) return;
          throw new Abort(this.typeError(`number ${numberText(v)}`, 'int32'));
        }
        throw new Abort(this.typeError(jsonWord(v), 'int32'));
      case 'quantity':
        // Quantity.UnmarshalJSON parses the JSON text (quotes stripped, spaces trimmed); a
        // bool, object or array is no quantity either.
        if ((typeof v === 'string' && parseQuantity(v.trim())) || (typeof v === 'number' && parseQuantity(v))) return;
        throw new Abort(QUANTITY_FORMAT_MESSAGE);
      case 'array':
        if (!Array.isArray(v)) return this.save(this.typeError(jsonWord(v), this.goType(node, owner, key, depth)));
        if (node.items.kind === 'any') return;
        for (const item of v) this.value(item, node.items, owner, key, depth + 1);
        return;
      case 'object':
        return this.object(v, node, owner, key, depth);
    }
  }

  private object(v: unknown, node: CompiledObject, owner: CompiledObject | undefined, key: string, depth: number): void {
    if (node.preserveUnknown && node.properties.size === 0) return;
    if (!isObject(v)) return this.save(this.typeError(jsonWord(v), this.goType(node, owner, key, depth)));
    if (!isStruct(node)) {
      // A map: its values are decoded in the map field's context (keys add nothing to the path).
      const elem = node.additional;
      if (!elem || elem.kind === 'any') return;
      for (const k in v) this.value(v[k], elem, undefined, '', 0);
      return;
    }
    const outer = this.struct;
    for (const k in v) {
      const prop = node.properties.get(k);
      // Unknown fields are fieldValidation's business; the decoder skips them.
      if (!prop) continue;
      const child = v[k];
      if (child === null || child === undefined) continue;
      this.fields.push(k);
      this.struct = node.name;
      this.value(child, prop.node, node, k, 0);
      this.fields.pop();
      this.struct = outer;
    }
  }

  /** A `[]byte` field: a base64 string, or (as Go also accepts) an array of bytes. */
  private bytes(v: unknown, node: CompiledNode, owner: CompiledObject | undefined, key: string, depth: number): void {
    if (typeof v === 'string') {
      const bad = base64ErrorOffset(v);
      if (bad !== undefined) this.save(`illegal base64 data at input byte ${bad}`);
      return;
    }
    if (Array.isArray(v)) {
      for (const b of v) {
        if (b === null) continue;
        if (typeof b !== 'number') this.save(this.typeError(jsonWord(b), 'uint8'));
        else if (!Number.isInteger(b) || b < 0 || b > 255) this.save(this.typeError(`number ${numberText(b)}`, 'uint8'));
      }
      return;
    }
    this.save(this.typeError(jsonWord(v), this.goType(node, owner, key, depth)));
  }
}

const BASE64_ALPHABET = new Uint8Array(256).fill(0);
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') BASE64_ALPHABET[ch.charCodeAt(0)] = 1;
const CR = 13;
const LF = 10;
const PAD = 61;

/**
 * Where Go's base64.StdEncoding.Decode reports a CorruptInputError for this string (the byte
 * offset in its UTF-8 form), or undefined when it decodes. Padding is required, CR and LF are
 * skipped anywhere, nothing may follow the padding.
 */
export function base64ErrorOffset(text: string): number | undefined {
  // Valid input is the common case: check it without allocating.
  if (text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  const src = Buffer.from(text, 'utf8');
  let si = 0;
  for (;;) {
    // One quantum of four symbols.
    for (let j = 0; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return undefined;
        return si - j;
      }
      const c = src[si]!;
      si++;
      if (BASE64_ALPHABET[c]) continue;
      if (c === LF || c === CR) {
        j--;
        continue;
      }
      if (c !== PAD || j < 2) return si - 1;
      if (j === 2) {
        // "==" expected; the first "=" is consumed.
        while (si < src.length && (src[si] === LF || src[si] === CR)) si++;
        if (si === src.length) return src.length;
        if (src[si] !== PAD) return si - 1;
        si++;
      }
      while (si < src.length && (src[si] === LF || src[si] === CR)) si++;
      return si < src.length ? si : undefined;
    }
  }
}

/**
 * The error upstream's JSON decoder reports for a body of the given built-in schema, or
 * undefined when every value has a type the Go struct accepts. Unknown fields are not looked at.
 */
export function goDecodeError(schemaName: string, body: unknown, naming?: Naming): string | undefined {
  const root = builtinCompiler(naming).named(schemaName);
  if (!root) return undefined;
  const c = new Checker();
  try {
    c.value(body, root, undefined, '', 0);
  } catch (e) {
    if (e instanceof Abort) return e.message;
    throw e;
  }
  return c.saved;
}
