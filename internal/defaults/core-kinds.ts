// internal/defaults/core-kinds owns upstream's defaults for the core-group kinds other than pods
// and workloads: Service, Namespace, Secret (including folding `stringData` into `data`),
// PersistentVolume, PersistentVolumeClaim, Endpoints, Node, LimitRange. Mutates in place;
// idempotent.
// Imports: naming (Naming type), validation (plain-json, name-rules), pod-spec.

import type { Naming } from '../naming/naming.js';
import { ipFamilyOf } from '../validation/name-rules.js';
import { arrayAt, isAbsent, isBlank, isObject, objectAt, type JsonObject } from '../validation/plain-json.js';
import { defaultPvcSpec } from './pod-spec.js';


const DEFAULT_CLIENT_IP_AFFINITY_SECONDS = 10800;

/**
 * Service defaults of upstream's defaulting and of its REST layer's IP-family initialisation
 * (single-stack IPv4 clusters): session affinity, type, port protocol and target port, traffic
 * policies, load-balancer node ports, IP family policy and families. ClusterIP allocation is the
 * registry's.
 */
export function defaultService(obj: JsonObject): void {
  const spec = objectAt(obj, 'spec');
  if (!spec) return;
  if (isBlank(spec.sessionAffinity)) spec.sessionAffinity = 'None';
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP') {
    const timeout = objectAt(objectAt(spec, 'sessionAffinityConfig'), 'clientIP')?.timeoutSeconds;
    if (isAbsent(timeout)) spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: DEFAULT_CLIENT_IP_AFFINITY_SECONDS } };
  }
  if (isBlank(spec.type)) spec.type = 'ClusterIP';
  for (const port of arrayAt(spec, 'ports') ?? []) {
    if (!isObject(port)) continue;
    if (isBlank(port.protocol)) port.protocol = 'TCP';
    if (isAbsent(port.targetPort) || port.targetPort === 0 || port.targetPort === '') port.targetPort = port.port;
  }
  const type = spec.type;
  const externallyAccessible =
    type === 'LoadBalancer' || type === 'NodePort' || (type === 'ClusterIP' && (arrayAt(spec, 'externalIPs')?.length ?? 0) > 0);
  if (externallyAccessible && isBlank(spec.externalTrafficPolicy)) spec.externalTrafficPolicy = 'Cluster';
  if (isAbsent(spec.internalTrafficPolicy) && (type === 'NodePort' || type === 'LoadBalancer' || type === 'ClusterIP')) {
    spec.internalTrafficPolicy = 'Cluster';
  }
  if (type === 'LoadBalancer' && isAbsent(spec.allocateLoadBalancerNodePorts)) spec.allocateLoadBalancerNodePorts = true;
  if (type === 'LoadBalancer') {
    for (const ing of arrayAt(objectAt(objectAt(obj, 'status'), 'loadBalancer'), 'ingress') ?? []) {
      if (isObject(ing) && !isBlank(ing.ip) && isAbsent(ing.ipMode)) ing.ipMode = 'VIP';
    }
  }
  defaultServiceIPFamilies(spec);
}

function defaultServiceIPFamilies(spec: JsonObject): void {
  if (spec.type === 'ExternalName') return;
  const headless = spec.clusterIP === 'None';
  const hasSelector = isObject(spec.selector) && Object.keys(spec.selector).length > 0;
  if (isBlank(spec.ipFamilyPolicy)) spec.ipFamilyPolicy = headless && !hasSelector ? 'RequireDualStack' : 'SingleStack';
  if (!Array.isArray(spec.ipFamilies) || spec.ipFamilies.length === 0) {
    const fromIPs = (Array.isArray(spec.clusterIPs) ? spec.clusterIPs : typeof spec.clusterIP === 'string' ? [spec.clusterIP] : [])
      .map((ip) => (typeof ip === 'string' ? ipFamilyOf(ip) : undefined))
      .filter((f): f is 'IPv4' | 'IPv6' => !!f);
    spec.ipFamilies = fromIPs.length > 0 ? [...new Set(fromIPs)] : ['IPv4'];
  }
  if (typeof spec.clusterIP === 'string' && spec.clusterIP !== '' && (!Array.isArray(spec.clusterIPs) || spec.clusterIPs.length === 0)) {
    spec.clusterIPs = [spec.clusterIP];
  }
}

/** The finalizer the namespace controller owns: `kubernetes` upstream, the naming's product word otherwise. */
export const namespaceFinalizer = (naming: Naming): string => naming.mode;

/** Namespace defaults: the `<labelDomain>/metadata.name` label and phase Active. */
export function defaultNamespace(obj: JsonObject, naming: Naming): void {
  const meta = objectAt(obj, 'metadata');
  if (meta && typeof meta.name === 'string' && meta.name !== '') {
    if (!isObject(meta.labels)) meta.labels = {};
    (meta.labels as JsonObject)[naming.label('metadata.name')] = meta.name;
  }
  if (!isObject(obj.status)) obj.status = {};
  const status = obj.status as JsonObject;
  if (isBlank(status.phase)) status.phase = 'Active';
}

/**
 * What upstream's namespace strategy does on create only (never on update: the namespace
 * controller removes the finalizer over the object's life): status reset to phase Active and
 * the namespace finalizer added to spec.finalizers.
 */
export function prepareNamespaceForCreate(obj: JsonObject, naming: Naming): void {
  obj.status = { phase: 'Active' };
  if (!isObject(obj.spec)) obj.spec = {};
  const spec = obj.spec as JsonObject;
  const finalizers = Array.isArray(spec.finalizers) ? spec.finalizers : [];
  const finalizer = namespaceFinalizer(naming);
  spec.finalizers = finalizers.includes(finalizer) ? finalizers : [...finalizers, finalizer];
}

/**
 * Secret: type Opaque; `stringData` entries (write-only convenience) are base64-encoded into
 * `data`, overriding keys present in both, and `stringData` is dropped, as upstream's conversion
 * does.
 */
export function defaultSecret(obj: JsonObject): void {
  if (isBlank(obj.type)) obj.type = 'Opaque';
  const stringData = obj.stringData;
  if (isObject(stringData)) {
    if (!isObject(obj.data)) obj.data = {};
    const data = obj.data as JsonObject;
    for (const [k, v] of Object.entries(stringData)) if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
  }
  if ('stringData' in obj) delete obj.stringData;
}

export function defaultPersistentVolume(obj: JsonObject): void {
  const spec = objectAt(obj, 'spec');
  if (spec) {
    if (isBlank(spec.persistentVolumeReclaimPolicy)) spec.persistentVolumeReclaimPolicy = 'Retain';
    if (isBlank(spec.volumeMode)) spec.volumeMode = 'Filesystem';
  }
  if (!isObject(obj.status)) obj.status = {};
  if (isBlank((obj.status as JsonObject).phase)) (obj.status as JsonObject).phase = 'Pending';
}

export function defaultPersistentVolumeClaim(obj: JsonObject): void {
  defaultPvcSpec(obj.spec);
  if (!isObject(obj.status)) obj.status = {};
  if (isBlank((obj.status as JsonObject).phase)) (obj.status as JsonObject).phase = 'Pending';
}

export function defaultEndpoints(obj: JsonObject): void {
  for (const subset of arrayAt(obj, 'subsets') ?? []) {
    for (const port of arrayAt(subset, 'ports') ?? []) if (isObject(port) && isBlank(port.protocol)) port.protocol = 'TCP';
  }
}

export function defaultNode(obj: JsonObject): void {
  const status = objectAt(obj, 'status');
  if (status && isObject(status.capacity) && isAbsent(status.allocatable)) status.allocatable = { ...status.capacity };
}

export function defaultLimitRange(obj: JsonObject): void {
  for (const item of arrayAt(objectAt(obj, 'spec'), 'limits') ?? []) {
    if (!isObject(item) || item.type !== 'Container') continue;
    const def: JsonObject = isObject(item.default) ? item.default : (item.default = {});
    const defReq: JsonObject = isObject(item.defaultRequest) ? item.defaultRequest : (item.defaultRequest = {});
    for (const [k, v] of Object.entries(objectAt(item, 'max') ?? {})) if (def[k] === undefined) def[k] = v;
    for (const [k, v] of Object.entries(def)) if (defReq[k] === undefined) defReq[k] = v;
    for (const [k, v] of Object.entries(objectAt(item, 'min') ?? {})) if (defReq[k] === undefined) defReq[k] = v;
  }
}
