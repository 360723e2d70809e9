// internal/defaults/group-kinds owns upstream's defaults for the kinds of named groups other
// than apps and batch: RBAC bindings, HorizontalPodAutoscaler (v1 and v2), NetworkPolicy,
// StorageClass, CSIDriver, PriorityClass, EndpointSlice, admission webhook configurations and
// ValidatingAdmissionPolicy, CustomResourceDefinition. Mutates in place; idempotent.
// Imports: naming (Naming type), validation (plain-json).

import type { Naming } from '../naming/naming.js';
import { arrayAt, isObject, objectAt, type JsonObject } from '../validation/plain-json.js';

const absent = (v: unknown): boolean => v === undefined || v === null;
const blank = (v: unknown): boolean => absent(v) || v === '';
const objects = (list: unknown[] | undefined): JsonObject[] => (list ?? []).filter(isObject);

export const rbacGroup = (naming: Naming): string => naming.group('rbac.authorization.k8s.io');

/** RoleBinding and ClusterRoleBinding: roleRef.apiGroup and subjects' apiGroup by kind. */
export function defaultRoleBinding(obj: JsonObject, naming: Naming): void {
  const group = rbacGroup(naming);
  const roleRef = objectAt(obj, 'roleRef');
  if (roleRef && blank(roleRef.apiGroup)) roleRef.apiGroup = group;
  for (const s of objects(arrayAt(obj, 'subjects'))) {
    if (!blank(s.apiGroup)) continue;
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
    if (absent(user[key]) && defaults[key] !== undefined) user[key] = defaults[key];
  }
  return user;
}

/** HorizontalPodAutoscaler: minReplicas 1; in v2 also the 80% CPU metric and behavior rules. */
export function defaultHorizontalPodAutoscaler(obj: JsonObject, version: string): void {
  const spec = objectAt(obj, 'spec');
  if (!spec) return;
  if (absent(spec.minReplicas)) spec.minReplicas = 1;
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
    for (const rule of objects(arrayAt(spec, dir))) {
      for (const port of objects(arrayAt(rule, 'ports'))) if (blank(port.protocol)) port.protocol = 'TCP';
    }
  }
  if (!Array.isArray(spec.policyTypes) || spec.policyTypes.length === 0) {
    spec.policyTypes = (arrayAt(spec, 'egress')?.length ?? 0) > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}

export function defaultStorageClass(obj: JsonObject): void {
  if (blank(obj.reclaimPolicy)) obj.reclaimPolicy = 'Delete';
  if (blank(obj.volumeBindingMode)) obj.volumeBindingMode = 'Immediate';
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
    if (absent(spec[key])) spec[key] = value;
  }
  if (!Array.isArray(spec.volumeLifecycleModes) || spec.volumeLifecycleModes.length === 0) spec.volumeLifecycleModes = ['Persistent'];
}

export function defaultPriorityClass(obj: JsonObject): void {
  if (blank(obj.preemptionPolicy)) obj.preemptionPolicy = 'PreemptLowerPriority';
}

export function defaultEndpointSlice(obj: JsonObject): void {
  for (const port of objects(arrayAt(obj, 'ports'))) {
    if (absent(port.name)) port.name = '';
    if (absent(port.protocol)) port.protocol = 'TCP';
  }
}

function defaultServiceReference(clientConfig: unknown): void {
  const service = objectAt(clientConfig, 'service');
  if (service && absent(service.port)) service.port = 443;
}

function defaultRules(rules: unknown[] | undefined): void {
  for (const rule of objects(rules)) if (blank(rule.scope)) rule.scope = '*';
}

/** Validating and mutating webhook configurations. */
export function defaultWebhookConfiguration(obj: JsonObject, mutating: boolean): void {
  for (const hook of objects(arrayAt(obj, 'webhooks'))) {
    if (blank(hook.failurePolicy)) hook.failurePolicy = 'Fail';
    if (blank(hook.matchPolicy)) hook.matchPolicy = 'Equivalent';
    if (!isObject(hook.namespaceSelector)) hook.namespaceSelector = {};
    if (!isObject(hook.objectSelector)) hook.objectSelector = {};
    if (absent(hook.timeoutSeconds)) hook.timeoutSeconds = 10;
    if (mutating && blank(hook.reinvocationPolicy)) hook.reinvocationPolicy = 'Never';
    defaultRules(arrayAt(hook, 'rules'));
    defaultServiceReference(hook.clientConfig);
  }
}

export function defaultValidatingAdmissionPolicy(obj: JsonObject): void {
  const spec = objectAt(obj, 'spec');
  if (!spec) return;
  if (blank(spec.failurePolicy)) spec.failurePolicy = 'Fail';
  const match = objectAt(spec, 'matchConstraints');
  if (match) {
    if (blank(match.matchPolicy)) match.matchPolicy = 'Equivalent';
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
    if (blank(names.singular)) names.singular = names.kind.toLowerCase();
    if (blank(names.listKind)) names.listKind = `${names.kind}List`;
  }
  if (!isObject(spec.conversion)) spec.conversion = { strategy: 'None' };
  const conversion = spec.conversion as JsonObject;
  if (blank(conversion.strategy)) conversion.strategy = 'None';
  defaultServiceReference(objectAt(objectAt(conversion, 'webhook'), 'clientConfig'));
}
