// internal/defaults/group-kinds owns upstream's defaults for the kinds of named groups other
// than apps and batch: RBAC bindings, HorizontalPodAutoscaler (v1 and v2), NetworkPolicy,
// StorageClass, CSIDriver, PriorityClass, EndpointSlice, admission webhook configurations and
// ValidatingAdmissionPolicy, CustomResourceDefinition. Mutates in place; idempotent.
// Imports: naming (Naming type), validation (plain-json).

import type { Naming } from '../naming/naming.js';
import { arrayAt, isAbsent, isBlank, isObject, objectAt, objectsIn, type JsonObject } from '../validation/plain-json.js';


export const rbacGroup = (naming: Naming): string => naming.group('rbac.authorization.k8s.io');

/** RoleBinding and ClusterRoleBinding: roleRef.apiGroup and subjects' apiGroup by kind. */
export function defaultRoleBinding(obj: JsonObject, naming: Naming): void {
  const group = rbacGroup(naming);
  const roleRef = objectAt(obj, 'roleRef');
  if (roleRef && isBlank(roleRef.apiGroup)) roleRef.apiGroup = group;
  for (const s of objectsIn(arrayAt(obj, 'subjects'))) {
    if (!isBlank(s.apiGroup)) continue;
    if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = group;
    else if (s.kind === 'ServiceAccount') s.apiGroup = '';
  }
}

const scaleUpRules = (): JsonObject => ({
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
});
// The scale-down stabilization window stays unset: the controller's flag decides it.
const scaleDownRules = (): JsonObject => ({ selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });

function mergeRules(user: unknown, defaults: JsonObject): JsonObject {
  if (!isObject(user)) return defaults;
  for (const key of ['stabilizationWindowSeconds', 'selectPolicy', 'policies']) {
    if (isAbsent(user[key]) && defaults[key] !== undefined) user[key] = defaults[key];
  }
  return user;
}

/** HorizontalPodAutoscaler: minReplicas 1; in v2 also the 80% CPU metric and behavior rules. */
export function defaultHorizontalPodAutoscaler(obj: JsonObject, version: string): void {
  const spec = objectAt(obj, 'spec');
  if (!spec) return;
  if (isAbsent(spec.minReplicas)) spec.minReplicas = 1;
  if (version === 'v1') return;
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
  }
  const behavior = objectAt(spec, 'behavior');
  if (behavior) {
    behavior.scaleUp = mergeRules(behavior.scaleUp, scaleUpRules());
    behavior.scaleDown = mergeRules(behavior.scaleDown, scaleDownRules());
  }
}

export function defaultNetworkPolicy(obj: JsonObject): void {
  const spec = objectAt(obj, 'spec');
  if (!spec) return;
  for (const dir of ['ingress', 'egress']) {
    for (const rule of objectsIn(arrayAt(spec, dir))) {
      for (const port of objectsIn(arrayAt(rule, 'ports'))) if (isBlank(port.protocol)) port.protocol = 'TCP';
    }
  }
  if (!Array.isArray(spec.policyTypes) || spec.policyTypes.length === 0) {
    spec.policyTypes = (arrayAt(spec, 'egress')?.length ?? 0) > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}

export function defaultStorageClass(obj: JsonObject): void {
  if (isBlank(obj.reclaimPolicy)) obj.reclaimPolicy = 'Delete';
  if (isBlank(obj.volumeBindingMode)) obj.volumeBindingMode = 'Immediate';
}

export function defaultCSIDriver(obj: JsonObject): void {
  const spec = objectAt(obj, 'spec');
  if (!spec) return;
  for (const [key, value] of [
    ['attachRequired', true],
    ['podInfoOnMount', false],
    ['requiresRepublish', false],
    ['storageCapacity', false],
    ['seLinuxMount', false],
    ['fsGroupPolicy', 'ReadWriteOnceWithFSType'],
  ] as const) {
    if (isAbsent(spec[key])) spec[key] = value;
  }
  if (!Array.isArray(spec.volumeLifecycleModes) || spec.volumeLifecycleModes.length === 0) spec.volumeLifecycleModes = ['Persistent'];
}

export function defaultPriorityClass(obj: JsonObject): void {
  if (isBlank(obj.preemptionPolicy)) obj.preemptionPolicy = 'PreemptLowerPriority';
}

export function defaultEndpointSlice(obj: JsonObject): void {
  for (const port of objectsIn(arrayAt(obj, 'ports'))) {
    if (isAbsent(port.name)) port.name = '';
    if (isAbsent(port.protocol)) port.protocol = 'TCP';
  }
}

function defaultServiceReference(clientConfig: unknown): void {
  const service = objectAt(clientConfig, 'service');
  if (service && isAbsent(service.port)) service.port = 443;
}

function defaultRules(rules: unknown[] | undefined): void {
  for (const rule of objectsIn(rules)) if (isBlank(rule.scope)) rule.scope = '*';
}

/** Validating and mutating webhook configurations. */
export function defaultWebhookConfiguration(obj: JsonObject, mutating: boolean): void {
  for (const hook of objectsIn(arrayAt(obj, 'webhooks'))) {
    if (isBlank(hook.failurePolicy)) hook.failurePolicy = 'Fail';
    if (isBlank(hook.matchPolicy)) hook.matchPolicy = 'Equivalent';
    if (!isObject(hook.namespaceSelector)) hook.namespaceSelector = {};
    if (!isObject(hook.objectSelector)) hook.objectSelector = {};
    if (isAbsent(hook.timeoutSeconds)) hook.timeoutSeconds = 10;
    if (mutating && isBlank(hook.reinvocationPolicy)) hook.reinvocationPolicy = 'Never';
    defaultRules(arrayAt(hook, 'rules'));
    defaultServiceReference(hook.clientConfig);
  }
}

export function defaultValidatingAdmissionPolicy(obj: JsonObject): void {
  const spec = objectAt(obj, 'spec');
  if (!spec) return;
  if (isBlank(spec.failurePolicy)) spec.failurePolicy = 'Fail';
  const match = objectAt(spec, 'matchConstraints');
  if (match) {
    if (isBlank(match.matchPolicy)) match.matchPolicy = 'Equivalent';
    if (!isObject(match.namespaceSelector)) match.namespaceSelector = {};
    if (!isObject(match.objectSelector)) match.objectSelector = {};
    defaultRules(arrayAt(match, 'resourceRules'));
    defaultRules(arrayAt(match, 'excludeResourceRules'));
  }
}

export function defaultCustomResourceDefinition(obj: JsonObject): void {
  const spec = objectAt(obj, 'spec');
  if (!spec) return;
  const names = objectAt(spec, 'names');
  if (names && typeof names.kind === 'string' && names.kind !== '') {
    if (isBlank(names.singular)) names.singular = names.kind.toLowerCase();
    if (isBlank(names.listKind)) names.listKind = `${names.kind}List`;
  }
  if (!isObject(spec.conversion)) spec.conversion = { strategy: 'None' };
  const conversion = spec.conversion as JsonObject;
  if (isBlank(conversion.strategy)) conversion.strategy = 'None';
  defaultServiceReference(objectAt(objectAt(conversion, 'webhook'), 'clientConfig'));
}
