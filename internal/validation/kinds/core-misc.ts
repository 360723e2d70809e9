// internal/validation/kinds/core-misc owns the smaller core and control-plane kinds' rules:
// Namespace finalizers, Node (pod CIDRs, taints, immutable provider ID), PersistentVolumeClaim
// (access modes, storage request), Lease, core and events.k8s.io Events (upstream's minimal
// rules), ServiceAccount.
// Imports: apierrors (FieldError), validation helpers, kinds/common.

import { fieldErrors, fieldPath, type FieldError } from '../../apierrors/field-errors.js';
import { ipFamilyOf, isDNS1123Subdomain, isLabelValue, isQualifiedName, isValidCIDR } from '../name-rules.js';
import { standardFinalizerNames } from '../object-meta.js';
import { isObject } from '../plain-json.js';
import { parseQuantity } from '../quantity.js';
import { has, immutable, list, nonNegative, obj, positive, str, type KindValidator } from './common.js';

export const validateNamespace: KindValidator = (ns, _old, ctx) => {
  const errs: FieldError[] = [];
  const standard = standardFinalizerNames(ctx.naming);
  list(obj(ns, 'spec'), 'finalizers').forEach((f, i) => {
    if (typeof f !== 'string') return;
    for (const m of isQualifiedName(f)) errs.push(fieldErrors.invalid('spec.finalizers', f, m));
    if (!f.includes('/') && !standard.has(f)) {
      errs.push(fieldErrors.invalid(fieldPath.index('spec.finalizers', i), f, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  const phase = str(obj(ns, 'status'), 'phase');
  if (phase && phase !== 'Active' && phase !== 'Terminating') errs.push(fieldErrors.notSupported('status.phase', phase, ['Active', 'Terminating']));
  return errs;
};

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

export const validateNode: KindValidator = (node, old) => {
  const errs: FieldError[] = [];
  const spec = obj(node, 'spec');
  const cidrs = list(spec, 'podCIDRs').filter((c): c is string => typeof c === 'string');
  cidrs.forEach((c, i) => {
    for (const m of isValidCIDR(c)) errs.push(fieldErrors.invalid(fieldPath.index('spec.podCIDRs', i), c, m));
  });
  if (cidrs.length > 2) errs.push(fieldErrors.invalid('spec.podCIDRs', cidrs, 'may specify no more than one CIDR for each IP family'));
  if (cidrs.length === 2) {
    const [a, b] = cidrs.map((c) => ipFamilyOf(c.split('/')[0]!));
    if (a && a === b) errs.push(fieldErrors.invalid('spec.podCIDRs', cidrs, 'may specify no more than one CIDR for each IP family'));
  }
  const taints = new Set<string>();
  list(spec, 'taints').forEach((t, i) => {
    if (!isObject(t)) return;
    const p = fieldPath.index('spec.taints', i);
    const key = str(t, 'key');
    for (const m of isQualifiedName(key)) errs.push(fieldErrors.invalid(`${p}.key`, key, m));
    const value = str(t, 'value');
    for (const m of isLabelValue(value)) errs.push(fieldErrors.invalid(`${p}.value`, value, m));
    const effect = str(t, 'effect');
    if (!TAINT_EFFECTS.includes(effect)) errs.push(fieldErrors.notSupported(`${p}.effect`, effect, TAINT_EFFECTS));
    const id = `${key}\u0000${effect}`;
    if (taints.has(id)) errs.push(fieldErrors.duplicate(p, t));
    taints.add(id);
  });
  const oldSpec = obj(old, 'spec');
  if (oldSpec) {
    const oldProvider = str(oldSpec, 'providerID');
    if (oldProvider && str(spec, 'providerID') !== oldProvider) {
      errs.push(fieldErrors.forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
    }
    const oldCIDRs = list(oldSpec, 'podCIDRs');
    if (oldCIDRs.length > 0) errs.push(...immutable(spec?.podCIDRs, oldSpec.podCIDRs, 'spec.podCIDRs'));
  }
  return errs;
};

const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];

export const validatePersistentVolumeClaim: KindValidator = (pvc, old) => {
  const errs: FieldError[] = [];
  const spec = obj(pvc, 'spec');
  if (!spec) return [fieldErrors.required('spec', '')];
  const modes = list(spec, 'accessModes');
  if (modes.length === 0) errs.push(fieldErrors.required('spec.accessModes', 'at least 1 access mode is required'));
  modes.forEach((m) => {
    if (!ACCESS_MODES.includes(String(m))) errs.push(fieldErrors.notSupported('spec.accessModes', m, ACCESS_MODES));
  });
  const hasDataSource = has(spec, 'dataSource') || has(spec, 'dataSourceRef');
  const storage = obj(obj(spec, 'resources'), 'requests')?.storage;
  if (storage === undefined) {
    if (!hasDataSource) errs.push(fieldErrors.required('spec.resources[storage]', ''));
  } else if ((typeof storage === 'string' || typeof storage === 'number') && (parseQuantity(storage)?.nanos ?? 1n) <= 0n) {
    errs.push(fieldErrors.invalid('spec.resources[storage]', storage, 'must be greater than zero'));
  }
  const mode = str(spec, 'volumeMode');
  if (mode && mode !== 'Filesystem' && mode !== 'Block') errs.push(fieldErrors.notSupported('spec.volumeMode', mode, ['Block', 'Filesystem']));
  const oldSpec = obj(old, 'spec');
  if (oldSpec && str(obj(old, 'status'), 'phase') === 'Bound') {
    for (const key of ['accessModes', 'volumeName', 'volumeMode', 'storageClassName', 'selector', 'dataSource']) {
      errs.push(...immutable(spec[key], oldSpec[key], `spec.${key}`));
    }
  }
  return errs;
};

export const validateLease: KindValidator = (lease) => {
  const spec = obj(lease, 'spec');
  const errs: FieldError[] = [];
  errs.push(...positive(spec?.leaseDurationSeconds, 'spec.leaseDurationSeconds'));
  errs.push(...nonNegative(spec?.leaseTransitions, 'spec.leaseTransitions'));
  if (has(spec, 'preferredHolder') && !has(spec, 'strategy')) {
    errs.push(fieldErrors.forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
  }
  return errs;
};

/** Core v1 events: upstream keeps its legacy checks only (namespace agreement, reporting fields for new-style events). */
export const validateCoreEvent: KindValidator = (event) => {
  const errs: FieldError[] = [];
  const namespace = str(obj(event, 'metadata'), 'namespace');
  const involvedNamespace = str(obj(event, 'involvedObject'), 'namespace');
  if (!has(event, 'eventTime')) {
    if (!involvedNamespace) {
      if (namespace !== '' && namespace !== 'default') errs.push(fieldErrors.invalid('involvedObject.namespace', involvedNamespace, 'does not match event.namespace'));
    } else if (namespace !== involvedNamespace) {
      errs.push(fieldErrors.invalid('involvedObject.namespace', involvedNamespace, 'does not match event.namespace'));
    }
  } else {
    if (!involvedNamespace && namespace !== 'default' && namespace !== 'kube-system') {
      errs.push(fieldErrors.invalid('involvedObject.namespace', involvedNamespace, 'does not match event.namespace'));
    }
    errs.push(...reportingFields(str(event, 'reportingComponent'), str(event, 'reportingInstance'), 'reportingComponent', 'reportingInstance'));
    errs.push(...actionReason(event));
  }
  for (const m of isDNS1123Subdomain(namespace)) errs.push(fieldErrors.invalid('metadata.namespace', namespace, m));
  return errs;
};

function reportingFields(controller: string, instance: string, controllerPath: string, instancePath: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!controller) errs.push(fieldErrors.required(controllerPath, ''));
  for (const m of isQualifiedName(controller)) if (controller) errs.push(fieldErrors.invalid(controllerPath, controller, m));
  if (!instance) errs.push(fieldErrors.required(instancePath, ''));
  if (instance.length > 128) errs.push(fieldErrors.invalid(instancePath, '', 'can have at most 128 characters'));
  return errs;
}

function actionReason(event: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of ['action', 'reason']) {
    const v = str(event, key);
    if (!v) errs.push(fieldErrors.required(key, ''));
    if (v.length > 128) errs.push(fieldErrors.invalid(key, '', 'can have at most 128 characters'));
  }
  return errs;
}

/** events.k8s.io/v1 Events: upstream's strict rules for the new API. */
export const validateEventsV1Event: KindValidator = (event, old) => {
  if (old) {
    const errs: FieldError[] = [];
    for (const key of ['regarding', 'reason', 'note', 'type', 'eventTime', 'action', 'related', 'reportingController', 'reportingInstance']) {
      errs.push(...immutable(event[key], old[key], key));
    }
    return errs;
  }
  const errs: FieldError[] = [];
  // Upstream validates the core form of the event (both APIs store one), so these two rules
  // name the core fields: the legacy namespace agreement every event passes, and eventTime,
  // which events.k8s.io/v1 requires of a new event.
  const namespace = str(obj(event, 'metadata'), 'namespace');
  const regardingNamespace = str(obj(event, 'regarding'), 'namespace');
  if (!has(event, 'eventTime')) {
    if (regardingNamespace ? namespace !== regardingNamespace : namespace !== '' && namespace !== 'default') {
      errs.push(fieldErrors.invalid('involvedObject.namespace', regardingNamespace, 'does not match event.namespace'));
    }
    errs.push(fieldErrors.required('eventTime', ''));
  } else if (!regardingNamespace && namespace !== 'default' && namespace !== 'kube-system') {
    errs.push(fieldErrors.invalid('involvedObject.namespace', regardingNamespace, 'does not match event.namespace'));
  }
  const type = str(event, 'type');
  if (type !== 'Normal' && type !== 'Warning') errs.push(fieldErrors.invalid('type', '', `has invalid value: ${type}`));
  errs.push(...reportingFields(str(event, 'reportingController'), str(event, 'reportingInstance'), 'reportingController', 'reportingInstance'));
  errs.push(...actionReason(event));
  if (str(event, 'note').length > 1024) errs.push(fieldErrors.invalid('note', '', 'can have at most 1024 characters'));
  for (const key of ['deprecatedFirstTimestamp', 'deprecatedLastTimestamp']) if (has(event, key)) errs.push(fieldErrors.invalid(key, '', 'needs to be unset'));
  if (typeof event.deprecatedCount === 'number' && event.deprecatedCount !== 0) errs.push(fieldErrors.invalid('deprecatedCount', '', 'needs to be unset'));
  const source = obj(event, 'deprecatedSource');
  if (source && (str(source, 'component') || str(source, 'host'))) errs.push(fieldErrors.invalid('deprecatedSource', '', 'needs to be unset'));
  const series = obj(event, 'series');
  if (series) {
    if (typeof series.count !== 'number' || series.count < 2) errs.push(fieldErrors.invalid('series.count', '', 'should be at least 2'));
    if (!has(series, 'lastObservedTime')) errs.push(fieldErrors.required('series.lastObservedTime', ''));
  }
  return errs;
};

export const validateServiceAccount: KindValidator = (sa) => {
  const errs: FieldError[] = [];
  list(sa, 'secrets').forEach((s, i) => {
    const name = str(s, 'name');
    if (name) for (const m of isDNS1123Subdomain(name)) errs.push(fieldErrors.invalid(`${fieldPath.index('secrets', i)}.name`, name, m));
  });
  return errs;
};
