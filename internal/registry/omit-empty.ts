// internal/registry/omit-empty owns dropping, from a built-in object about to be written, the
// empty lists and maps that upstream's Go encoder leaves out. Upstream decodes every built-in
// object into its Go struct, and a list or map field there is `omitempty` unless the schema
// requires it. So `labels: {}`, `finalizers: []` or a container's `args: []` is neither stored
// nor returned, and a write that only adds one changes nothing. `kubectl diff` depends on this:
// its dry-run patch carries `annotations: {}`, and if that is kept, an unchanged object reads as
// changed (exit code 1).
//
// What it leaves alone:
// - structs, since omitempty never omits a struct (`resources: {}` stays, as upstream shows it);
// - scalars, since the schema does not say which fields are pointers (upstream keeps
//   `priority: 0` but drops `hostNetwork: false`);
// - the few list fields Go writes although the schema does not require them (KEEP_EMPTY);
// - untyped or raw JSON (a CRD schema's `default: {}` is data);
// - map values;
// - `metadata.managedFields`, which the field manager owns;
// - custom resources, whose JSON upstream stores as sent.
//
// Imports: patch (TypeNode, JSON value types).

import { isJsonObject, type JsonObject, type JsonValue, type TypeNode } from '../patch/index.js';

/**
 * Deletes, in place and at every depth, the members of `obj` that hold an empty list or map (or
 * null) where the schema `t` declares a list or map field it does not require.
 */
export function dropOmittedEmpty(obj: Record<string, unknown>, t: TypeNode): void {
  // A decoded JSON body: its members are JSON values (the registry's type is looser).
  visit(obj as JsonObject, t);
}

/**
 * The list fields Go writes although the schema does not require them: their struct tags lack
 * `omitempty` (kubernetes/api and apiextensions-apiserver types of 1.35, against this project's
 * schema data). An empty one is kept, as upstream returns `rules: []`.
 */
const KEEP_EMPTY: ReadonlySet<string> = new Set(
  [
    ['io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus', 'currentMetrics'],
    ['io.k8s.api.certificates.v1beta1.PodCertificateRequestSpec', 'stubPKCS10Request'],
    ['io.k8s.api.core.v1.ContainerImage', 'names'],
    ['io.k8s.api.core.v1.ProjectedVolumeSource', 'sources'],
    ['io.k8s.api.discovery.v1.EndpointSlice', 'ports'],
    ['io.k8s.api.flowcontrol.v1.ResourcePolicyRule', 'namespaces'],
    ['io.k8s.api.rbac.v1.ClusterRole', 'rules'],
    ['io.k8s.api.rbac.v1.Role', 'rules'],
    ['io.k8s.api.resource.v1.AllocatedDeviceStatus', 'conditions'],
    ['io.k8s.api.resource.v1.DeviceClaim', 'requests'],
    ['io.k8s.api.resource.v1beta1.AllocatedDeviceStatus', 'conditions'],
    ['io.k8s.api.resource.v1beta1.DeviceClaim', 'requests'],
    ['io.k8s.api.resource.v1beta2.AllocatedDeviceStatus', 'conditions'],
    ['io.k8s.api.resource.v1beta2.DeviceClaim', 'requests'],
    ['io.k8s.api.storage.v1.CSINodeDriver', 'topologyKeys'],
    ['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus', 'conditions'],
    ['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus', 'storedVersions'],
  ].map(([schema, field]) => `${schema}.${field}`),
);

/** Per struct node: its declared list and map fields that are not required (omitempty in Go). */
const omittable = new WeakMap<TypeNode, ReadonlySet<string>>();

function omittableOf(t: TypeNode): ReadonlySet<string> {
  let set = omittable.get(t);
  if (set === undefined) {
    const required = new Set(t.requiredNames());
    const names = new Set<string>();
    for (const name of t.propertyNames()) {
      const ft = t.property(name);
      if (ft && !required.has(name) && (ft.type === 'array' || isGoMap(ft)) && !KEEP_EMPTY.has(`${t.name}.${name}`)) names.add(name);
    }
    set = names;
    omittable.set(t, set);
  }
  return set;
}

/** A Go map: an object schema with no declared fields, only `additionalProperties`. */
function isGoMap(t: TypeNode): boolean {
  return t.type === 'object' && t.propertyNames().length === 0 && t.additionalProperties() !== undefined && t.additionalProperties() !== false;
}

/** Whether values of `t` are walked: typed JSON the Go struct decodes, not raw JSON it keeps. */
function typed(t: TypeNode): boolean {
  return (t.type === 'object' || t.type === 'array') && !t.preserveUnknownFields && !t.embeddedResource && !t.intOrString;
}

function visit(v: JsonValue, t: TypeNode): void {
  if (!typed(t)) return;
  if (Array.isArray(v)) {
    const items = t.items();
    if (items && typed(items)) for (const item of v) visit(item, items);
    return;
  }
  if (!isJsonObject(v)) return;
  if (t.propertyNames().length === 0) {
    // A Go map: its values are kept as they are, but walked when they are typed structs.
    const ap = t.additionalProperties();
    if (typeof ap === 'object' && typed(ap)) for (const key of Object.keys(v)) visit(v[key]!, ap);
    return;
  }
  const drop = omittableOf(t);
  // ObjectMeta's managedFields: the field manager decides what an empty list there means.
  const meta = t.name === OBJECT_META;
  for (const key of Object.keys(v)) {
    if (meta && key === 'managedFields') continue;
    const ft = t.property(key);
    if (!ft) continue;
    const value = v[key]!;
    if (drop.has(key) && isEmpty(value, ft)) delete v[key];
    else visit(value, ft);
  }
}

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** Null, or an empty value of the field's own kind (a mistyped value is validation's to refuse). */
function isEmpty(v: JsonValue, t: TypeNode): boolean {
  if (v === null) return true;
  if (t.type === 'array') return Array.isArray(v) && v.length === 0;
  return isJsonObject(v) && isEmptyObject(v);
}

function isEmptyObject(o: JsonObject): boolean {
  for (const _ in o) return false;
  return true;
}
