// internal/codec/protobuf/message-plans owns the mapping between upstream protobuf messages
// (proto/k8s-protos.json) and the JSON form of objects: for each message, its fields in
// field-number order with the JSON property each one carries (renamed fields, structs that JSON
// flattens, custom-JSON types from proto/json-proto-name-map.json), and what decoding keeps when Go
// wrote a zero value. Imports: schema (data files, OpenAPI index).
//
// The descriptors (protobufjs's JSON form) are read directly, each message's field types
// resolved when its plan is first asked for: building a protobufjs Root of all ~1,200 messages
// cost the first protobuf request of a process a few hundred milliseconds.
//
// Which fields are Go pointers is not in the descriptors (every field is proto2 `optional`). The
// encoder does not need to know: it writes exactly the fields present in the JSON form, which is
// what Go writes for pointers, and leaves out absent non-pointer fields, which decode to the same
// zero value. The decoder does need it, because Go writes every non-pointer field, empty or not,
// and upstream's JSON then omits the empty ones (omitempty). The rule used (see keepEmptyString):
//  - numbers and booleans are kept: an explicit 0/false may be a pointer that was set
//    (`replicas: 0`, `automountServiceAccountToken: false`), and dropping a pointer zero would
//    change meaning. The exception is a list of fields known to be non-pointer `omitempty` in Go
//    (OMITTED_ZERO_SCALARS: `paused`, `hostNetwork`, `stdin`, `generation`, ...). Keeping their zero
//    is not harmless: every typed kubectl command sends them, and the field manager then
//    records the sender as owning `paused: false` and the like, so a later server-side apply
//    that sets one conflicts where upstream's does not;
//  - empty strings are dropped unless the OpenAPI schema marks the property required or gives it a
//    default (openapi-gen emits a zero default exactly for non-pointer, non-omitempty fields), or
//    the field is a known pointer whose empty string means something (storageClassName);
//  - messages are kept when present (Go writes non-pointer structs always, and prints them as {}),
//    except an empty Time, which Go prints as null;
//  - a repeated field the schema marks required is given [] when absent (`items` of lists).

import { readDataFile } from '../../schema/data-files.js';
import { builtinSchemas, SchemaIndex, type SchemaNode } from '../../schema/openapi-index.js';

export type ScalarType = 'string' | 'bool' | 'int32' | 'int64' | 'double' | 'bytes';

/** Messages whose JSON form is not an object of their proto fields. */
export type SpecialKind =
  | 'time'
  | 'microtime'
  | 'duration'
  | 'quantity'
  | 'intorstring'
  | 'rawjson'
  | 'rawextension'
  | 'stringlist'
  | 'orbool'
  | 'orarray'
  | 'orstringarray';

export interface FieldPlan {
  readonly protoName: string;
  readonly number: number;
  /** The JSON property (unused for inline fields). */
  readonly jsonKey: string;
  readonly scalar: ScalarType | undefined;
  /** Full name (no leading dot) of the message type, for message fields and map values. */
  readonly message: string | undefined;
  readonly repeated: boolean;
  /** map<string, V>; scalar/message describe V. */
  readonly map: boolean;
  /** An embedded Go struct whose fields JSON flattens into this object. */
  readonly inline: boolean;
  /** Decoding keeps an empty string or empty bytes value. */
  readonly keepEmpty: boolean;
  /** Decoding drops a 0 or false value (a Go non-pointer omitempty number or boolean). */
  readonly dropZero: boolean;
  /** Decoding writes [] for an absent repeated field. */
  readonly emptyListWhenAbsent: boolean;
}

export interface MessagePlan {
  readonly fullName: string;
  readonly special: SpecialKind | undefined;
  /** Sorted by field number: the order Go writes. */
  readonly fields: readonly FieldPlan[];
  /** Declaration order (Go struct order): the order decoded JSON properties are produced in. */
  readonly declared: readonly FieldPlan[];
  /** The OpenAPI component name, when the message has one. */
  readonly schemaName: string | undefined;
}

interface NameMap {
  openapiSchemaPrefixToProtoPackage: Record<string, string>;
  schemas: Record<string, { protoType: string; renamed?: Record<string, string>; inlined?: string[] }>;
}

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const SPECIAL_BY_NAME: Record<string, SpecialKind> = {
  [`${META}.Time`]: 'time',
  [`${META}.MicroTime`]: 'microtime',
  [`${META}.Duration`]: 'duration',
  [`${META}.FieldsV1`]: 'rawjson',
  [`${META}.Verbs`]: 'stringlist',
  'k8s.io.apimachinery.pkg.api.resource.Quantity': 'quantity',
  'k8s.io.apimachinery.pkg.api.resource.QuantityValue': 'quantity',
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': 'intorstring',
  'k8s.io.apimachinery.pkg.runtime.RawExtension': 'rawextension',
};

/** A message in the descriptors' JSON form. */
interface DescriptorType {
  readonly fields: Readonly<Record<string, DescriptorField>>;
}

interface DescriptorField {
  readonly type: string;
  readonly id: number;
  readonly rule?: string;
  readonly keyType?: string;
}

interface DescriptorNamespace {
  readonly nested?: Readonly<Record<string, DescriptorNamespace & Partial<DescriptorType>>>;
}

/** Every message of the descriptors by full name (no leading dot). */
function indexMessages(root: DescriptorNamespace): Map<string, DescriptorType> {
  const out = new Map<string, DescriptorType>();
  const walk = (ns: DescriptorNamespace, prefix: string): void => {
    for (const [name, node] of Object.entries(ns.nested ?? {})) {
      const full = prefix ? `${prefix}.${name}` : name;
      if (node.fields) out.set(full, node as DescriptorType);
      walk(node, full);
    }
  };
  walk(root, '');
  return out;
}

function specialKind(fullName: string, type: DescriptorType): SpecialKind | undefined {
  const known = SPECIAL_BY_NAME[fullName];
  if (known) return known;
  const name = fullName.slice(fullName.lastIndexOf('.') + 1);
  if (fullName.startsWith('k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.')) {
    switch (name) {
      case 'JSON':
        return 'rawjson';
      case 'JSONSchemaPropsOrBool':
        return 'orbool';
      case 'JSONSchemaPropsOrArray':
        return 'orarray';
      case 'JSONSchemaPropsOrStringArray':
        return 'orstringarray';
    }
  }
  // ExtraValue (authentication, authorization, certificates) is a Go []string named type.
  const fields = Object.keys(type.fields);
  if (name === 'ExtraValue' && fields.length === 1 && fields[0] === 'items') return 'stringlist';
  return undefined;
}

/**
 * Pointer strings whose empty value differs from absence (`storageClassName: ""` disables dynamic
 * provisioning), so decoding keeps "" even though the schema has no default. `schema.property`.
 */
const KEEP_EMPTY_POINTER_STRINGS = new Set([
  'io.k8s.api.core.v1.PersistentVolumeClaimSpec.storageClassName',
  'io.k8s.api.core.v1.PersistentVolumeClaimSpec.volumeAttributesClassName',
  'io.k8s.api.core.v1.PersistentVolumeClaimStatus.currentVolumeAttributesClassName',
  'io.k8s.api.discovery.v1.EndpointPort.name',
]);

/**
 * Number and boolean fields that are non-pointer and `omitempty` in upstream's Go types, so Go
 * writes their zero on the wire and upstream's JSON (and field manager) never sees it: decoding
 * drops 0/false for them. Only fields whose Go type is known belong here: a pointer listed by
 * mistake would lose an explicit zero. `schema.property`.
 */
export const OMITTED_ZERO_SCALARS: ReadonlySet<string> = new Set([
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta.generation',
  ...['hostNetwork', 'hostPID', 'hostIPC'].map((f) => `io.k8s.api.core.v1.PodSpec.${f}`),
  ...['Container', 'EphemeralContainer'].flatMap((t) => ['stdin', 'stdinOnce', 'tty'].map((f) => `io.k8s.api.core.v1.${t}.${f}`)),
  'io.k8s.api.core.v1.ContainerPort.hostPort',
  'io.k8s.api.core.v1.VolumeMount.readOnly',
  ...['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'].map((f) => `io.k8s.api.core.v1.Probe.${f}`),
  'io.k8s.api.core.v1.ServicePort.nodePort',
  'io.k8s.api.core.v1.ServiceSpec.publishNotReadyAddresses',
  'io.k8s.api.core.v1.ServiceSpec.healthCheckNodePort',
  'io.k8s.api.core.v1.NodeSpec.unschedulable',
  'io.k8s.api.core.v1.ReplicationControllerSpec.minReadySeconds',
  'io.k8s.api.apps.v1.DeploymentSpec.minReadySeconds',
  'io.k8s.api.apps.v1.DeploymentSpec.paused',
  ...['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas'].map((f) => `io.k8s.api.apps.v1.DeploymentStatus.${f}`),
  'io.k8s.api.apps.v1.ReplicaSetSpec.minReadySeconds',
  ...['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration'].map((f) => `io.k8s.api.apps.v1.ReplicaSetStatus.${f}`),
  'io.k8s.api.apps.v1.StatefulSetSpec.minReadySeconds',
  'io.k8s.api.apps.v1.DaemonSetSpec.minReadySeconds',
  ...['active', 'succeeded', 'failed'].map((f) => `io.k8s.api.batch.v1.JobStatus.${f}`),
  'io.k8s.api.scheduling.v1.PriorityClass.globalDefault',
]);

const SCALARS = new Set<string>(['string', 'bool', 'int32', 'int64', 'double', 'bytes']);

export class ProtoSchema {
  private readonly messages: Map<string, DescriptorType>;
  private readonly nameMap: NameMap;
  private readonly plans = new Map<string, MessagePlan>();
  private readonly messageCache = new Map<string, string | undefined>();
  private readonly protoToSchema = new Map<string, string>();
  /** Inline-only message → the schema of the struct it is embedded in (whose properties it fills). */
  private readonly inlineParent = new Map<string, string>();

  constructor(
    private readonly schemas: SchemaIndex = builtinSchemas,
    descriptors: () => unknown = () => JSON.parse(readDataFile('k8s-protos.json')),
    nameMap: () => unknown = () => JSON.parse(readDataFile('json-proto-name-map.json')),
  ) {
    this.messages = indexMessages(descriptors() as DescriptorNamespace);
    this.nameMap = nameMap() as NameMap;
    for (const name of Object.keys(schemas.all())) {
      const proto = this.mapSchemaName(name);
      if (proto) this.protoToSchema.set(proto, name);
    }
  }

  private mapSchemaName(schemaName: string): string | undefined {
    const listed = this.nameMap.schemas[schemaName];
    if (listed) return listed.protoType;
    for (const [prefix, pkg] of Object.entries(this.nameMap.openapiSchemaPrefixToProtoPackage)) {
      if (schemaName.startsWith(prefix)) return pkg + schemaName.slice(prefix.length);
    }
    return undefined;
  }

  private lookup(fullName: string): DescriptorType | undefined {
    // Names come from request bodies (envelope kinds) too; an odd one is simply not a message.
    return this.messages.get(fullName.startsWith('.') ? fullName.slice(1) : fullName);
  }

  /**
   * The full name of a field's type as protobuf resolves it: an absolute `.a.b.T`, or a name
   * looked up in the message's scope, then each enclosing one outwards.
   */
  private resolveType(ref: string, scope: string): string | undefined {
    if (ref.startsWith('.')) return this.messages.has(ref.slice(1)) ? ref.slice(1) : undefined;
    for (let s = scope; ; ) {
      const candidate = s ? `${s}.${ref}` : ref;
      if (this.messages.has(candidate)) return candidate;
      if (!s) return undefined;
      const dot = s.lastIndexOf('.');
      s = dot < 0 ? '' : s.slice(0, dot);
    }
  }

  /**
   * The proto message for an OpenAPI schema name (`io.k8s.api.core.v1.Pod`) or a proto full name
   * (`k8s.io.api.core.v1.Pod`), or undefined when there is none (Table, custom resources).
   */
  messageFor(name: string): string | undefined {
    if (this.messageCache.has(name)) return this.messageCache.get(name);
    let found: string | undefined;
    const mapped = this.mapSchemaName(name);
    if (mapped && this.lookup(mapped)) found = mapped;
    else if (this.lookup(name)) found = name.startsWith('.') ? name.slice(1) : name;
    this.messageCache.set(name, found);
    return found;
  }

  plan(fullName: string): MessagePlan {
    const cached = this.plans.get(fullName);
    if (cached) return cached;
    const type = this.lookup(fullName);
    if (!type) throw new Error(`no protobuf message ${fullName}`);
    const schemaName = this.protoToSchema.get(fullName);
    const entry = schemaName ? this.nameMap.schemas[schemaName] : undefined;
    const policySchemaName = schemaName ?? this.inlineParent.get(fullName);
    const policy = policySchemaName ? this.schemas.get(policySchemaName) : undefined;
    const required = new Set(policy?.required ?? []);
    const declared: FieldPlan[] = [];
    for (const [fieldName, f] of Object.entries(type.fields)) {
      const inline = entry?.inlined?.includes(fieldName) ?? false;
      const jsonKey = entry?.renamed?.[fieldName] ?? fieldName;
      const isScalar = SCALARS.has(f.type);
      const repeated = f.rule === 'repeated';
      const map = f.keyType !== undefined;
      let message: string | undefined;
      if (!isScalar) {
        message = this.resolveType(f.type, fullName);
        if (message === undefined) throw new Error(`unsupported field type ${f.type} in ${fullName}.${fieldName}`);
        if (inline && schemaName && !this.protoToSchema.has(message)) this.inlineParent.set(message, schemaName);
      }
      const prop: SchemaNode | undefined = policy?.properties?.[jsonKey];
      declared.push({
        protoName: fieldName,
        number: f.id,
        jsonKey,
        scalar: isScalar ? (f.type as ScalarType) : undefined,
        message,
        repeated: repeated && !map,
        map,
        inline,
        keepEmpty:
          required.has(jsonKey) ||
          (prop !== undefined && prop.default !== undefined) ||
          KEEP_EMPTY_POINTER_STRINGS.has(`${policySchemaName}.${jsonKey}`),
        emptyListWhenAbsent: repeated && !map && required.has(jsonKey),
        dropZero: isScalar && !repeated && OMITTED_ZERO_SCALARS.has(`${policySchemaName}.${jsonKey}`),
      });
      if (map && f.keyType !== 'string') {
        throw new Error(`unsupported map key type in ${fullName}.${fieldName}`);
      }
    }
    const plan: MessagePlan = {
      fullName,
      special: specialKind(fullName, type),
      fields: [...declared].sort((a, b) => a.number - b.number),
      declared,
      schemaName,
    };
    this.plans.set(fullName, plan);
    return plan;
  }
}
