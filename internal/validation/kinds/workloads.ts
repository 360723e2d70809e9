// internal/validation/kinds/workloads owns the apps/v1 rules (Deployment, ReplicaSet, StatefulSet,
// DaemonSet) and the core ReplicationController: selector required, non-empty, matching the
// template labels and immutable; templates restart Always; strategies and their int-or-percent
// parameters; StatefulSet's short list of mutable spec fields.
// Imports: apierrors (FieldError), validation helpers (plain-json), kinds/common, kinds/pod.

import { fieldErrors, fieldPath, type FieldError } from '../../apierrors/field-errors.js';
import { isObject, jsonEqual, type JsonObject } from '../plain-json.js';
import { validateLabels } from '../object-meta.js';
import {
  has,
  immutable,
  intOrPercentValue,
  isEmptySelector,
  nonNegative,
  notMoreThan100Percent,
  obj,
  selectorMatches,
  str,
  validateIntOrPercent,
  validateLabelSelector,
  type KindValidator,
} from './common.js';
import { validatePodTemplateSpec } from './pod.js';

const child = fieldPath.child;

/** Selector present, non-empty, valid, and selecting the template's labels (apps/v1 rules). */
export function validateSelectorAndTemplate(spec: JsonObject, kindWord: string, restartPolicies: readonly string[], ownerVolumes?: readonly string[]): FieldError[] {
  const errs: FieldError[] = [];
  const selector = spec.selector;
  if (!isObject(selector)) {
    errs.push(fieldErrors.required('spec.selector', ''));
  } else {
    errs.push(...validateLabelSelector(selector, 'spec.selector'));
    if (isEmptySelector(selector)) errs.push(fieldErrors.invalid('spec.selector', selector, `empty selector is invalid for ${kindWord}`));
  }
  const template = obj(spec, 'template');
  const labels = obj(obj(template, 'metadata'), 'labels') ?? {};
  if (isObject(selector) && !isEmptySelector(selector) && !selectorMatches(selector, labels)) {
    errs.push(fieldErrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
  }
  errs.push(...validatePodTemplateSpec(spec.template, 'spec.template', { restartPolicies, ...(ownerVolumes ? { ownerVolumes } : {}) }));
  if (template && has(obj(template, 'spec'), 'activeDeadlineSeconds')) {
    errs.push(fieldErrors.forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in ReplicaSet is not Supported'));
  }
  return errs;
}

function rollingParams(ru: JsonObject, path: string, zeroMessage: string): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...validateIntOrPercent(ru.maxUnavailable, child(path, 'maxUnavailable')));
  errs.push(...validateIntOrPercent(ru.maxSurge, child(path, 'maxSurge')));
  errs.push(...notMoreThan100Percent(ru.maxUnavailable, child(path, 'maxUnavailable')));
  const unavailable = intOrPercentValue(ru.maxUnavailable);
  const surge = intOrPercentValue(ru.maxSurge);
  if (unavailable?.value === 0 && surge?.value === 0) errs.push(fieldErrors.invalid(child(path, 'maxUnavailable'), ru.maxUnavailable, zeroMessage));
  return errs;
}

export const validateDeployment: KindValidator = (d, old) => {
  const spec = obj(d, 'spec');
  if (!spec) return [fieldErrors.required('spec', '')];
  const errs: FieldError[] = [];
  errs.push(...nonNegative(spec.replicas, 'spec.replicas'));
  errs.push(...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  errs.push(...validateSelectorAndTemplate(spec, 'deployment', ['Always']));
  const strategy = obj(spec, 'strategy');
  const type = str(strategy, 'type');
  if (type === 'Recreate') {
    if (has(strategy, 'rollingUpdate')) {
      errs.push(fieldErrors.forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"));
    }
  } else if (type === 'RollingUpdate') {
    const ru = obj(strategy, 'rollingUpdate');
    if (!ru) errs.push(fieldErrors.required('spec.strategy.rollingUpdate', 'this should be defaulted and never be nil'));
    else errs.push(...rollingParams(ru, 'spec.strategy.rollingUpdate', 'may not be 0 when `maxSurge` is 0'));
  } else {
    errs.push(fieldErrors.notSupported('spec.strategy.type', type, ['Recreate', 'RollingUpdate']));
  }
  const deadline = spec.progressDeadlineSeconds;
  if (typeof deadline === 'number') {
    errs.push(...nonNegative(deadline, 'spec.progressDeadlineSeconds'));
    const minReady = typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0;
    if (deadline <= minReady) errs.push(fieldErrors.invalid('spec.progressDeadlineSeconds', deadline, 'must be greater than minReadySeconds'));
  }
  if (old) errs.push(...immutable(spec.selector, obj(old, 'spec')?.selector, 'spec.selector'));
  return errs;
};

export const validateReplicaSet: KindValidator = (rs, old) => {
  const spec = obj(rs, 'spec');
  if (!spec) return [fieldErrors.required('spec', '')];
  const errs: FieldError[] = [];
  errs.push(...nonNegative(spec.replicas, 'spec.replicas'));
  errs.push(...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...validateSelectorAndTemplate(spec, 'deployment', ['Always']));
  if (old) errs.push(...immutable(spec.selector, obj(old, 'spec')?.selector, 'spec.selector'));
  return errs;
};

export const validateDaemonSet: KindValidator = (ds, old) => {
  const spec = obj(ds, 'spec');
  if (!spec) return [fieldErrors.required('spec', '')];
  const errs: FieldError[] = [];
  errs.push(...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  errs.push(...validateSelectorAndTemplate(spec, 'daemonset', ['Always']));
  const strategy = obj(spec, 'updateStrategy');
  const type = str(strategy, 'type');
  if (type === 'RollingUpdate') {
    const ru = obj(strategy, 'rollingUpdate');
    if (!ru) errs.push(fieldErrors.required('spec.updateStrategy.rollingUpdate', ''));
    else errs.push(...rollingParams(ru, 'spec.updateStrategy.rollingUpdate', 'may not be 0 when `maxSurge` is 0'));
  } else if (type !== 'OnDelete') {
    errs.push(fieldErrors.notSupported('spec.updateStrategy.type', type, ['OnDelete', 'RollingUpdate']));
  }
  if (old) errs.push(...immutable(spec.selector, obj(old, 'spec')?.selector, 'spec.selector'));
  return errs;
};

const STATEFULSET_MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

export const validateStatefulSet: KindValidator = (sts, old) => {
  const spec = obj(sts, 'spec');
  if (!spec) return [fieldErrors.required('spec', '')];
  const errs: FieldError[] = [];
  errs.push(...nonNegative(spec.replicas, 'spec.replicas'));
  errs.push(...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...nonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  errs.push(...nonNegative(obj(spec, 'ordinals')?.start, 'spec.ordinals.start'));
  const policy = str(spec, 'podManagementPolicy');
  if (policy !== 'OrderedReady' && policy !== 'Parallel') {
    errs.push(fieldErrors.notSupported('spec.podManagementPolicy', policy, ['OrderedReady', 'Parallel']));
  }
  const strategy = obj(spec, 'updateStrategy');
  const type = str(strategy, 'type');
  if (type === 'RollingUpdate') {
    const ru = obj(strategy, 'rollingUpdate');
    if (ru) {
      errs.push(...nonNegative(ru.partition, 'spec.updateStrategy.rollingUpdate.partition'));
      if (has(ru, 'maxUnavailable')) {
        errs.push(...validateIntOrPercent(ru.maxUnavailable, 'spec.updateStrategy.rollingUpdate.maxUnavailable'));
        errs.push(...notMoreThan100Percent(ru.maxUnavailable, 'spec.updateStrategy.rollingUpdate.maxUnavailable'));
        if (intOrPercentValue(ru.maxUnavailable)?.value === 0) {
          errs.push(fieldErrors.invalid('spec.updateStrategy.rollingUpdate.maxUnavailable', ru.maxUnavailable, 'must be greater than 0'));
        }
      }
    }
  } else if (type === 'OnDelete') {
    if (has(strategy, 'rollingUpdate')) {
      errs.push(fieldErrors.invalid('spec.updateStrategy.rollingUpdate', strategy?.rollingUpdate, "only allowed for updateStrategy 'RollingUpdate'"));
    }
  } else {
    errs.push(fieldErrors.notSupported('spec.updateStrategy.type', type, ['OnDelete', 'RollingUpdate']));
  }
  const retention = obj(spec, 'persistentVolumeClaimRetentionPolicy');
  for (const key of ['whenDeleted', 'whenScaled']) {
    const v = str(retention, key);
    if (retention && v !== 'Retain' && v !== 'Delete') {
      errs.push(fieldErrors.notSupported(`spec.persistentVolumeClaimRetentionPolicy.${key}`, v, ['Retain', 'Delete']));
    }
  }
  const claims = Array.isArray(spec.volumeClaimTemplates) ? spec.volumeClaimTemplates : [];
  // Each pod gets a volume per claim template, named as the template: mounts may name it.
  const claimNames = claims.map((c) => str(obj(c, 'metadata'), 'name')).filter((n): n is string => !!n);
  errs.push(...validateSelectorAndTemplate(spec, 'statefulset', ['Always'], claimNames));
  claims.forEach((claim, i) => {
    const p = `spec.volumeClaimTemplates[${i}]`;
    errs.push(...validateLabels(obj(obj(claim, 'metadata'), 'labels'), `${p}.metadata.labels`));
  });
  const oldSpec = obj(old, 'spec');
  if (old && oldSpec) {
    const strip = (s: JsonObject): JsonObject => Object.fromEntries(Object.entries(s).filter(([k]) => !STATEFULSET_MUTABLE.includes(k)));
    if (!jsonEqual(strip(spec), strip(oldSpec))) {
      errs.push(
        fieldErrors.forbidden(
          'spec',
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ),
      );
    }
  }
  return errs;
};

export const validateReplicationController: KindValidator = (rc) => {
  const spec = obj(rc, 'spec');
  if (!spec) return [fieldErrors.required('spec', '')];
  const errs: FieldError[] = [];
  errs.push(...nonNegative(spec.replicas, 'spec.replicas'));
  errs.push(...nonNegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  const selector = obj(spec, 'selector') ?? {};
  if (Object.keys(selector).length === 0) errs.push(fieldErrors.required('spec.selector', ''));
  else errs.push(...validateLabels(selector, 'spec.selector'));
  const template = obj(spec, 'template');
  if (!template) {
    errs.push(fieldErrors.required('spec.template', ''));
    return errs;
  }
  const labels = obj(obj(template, 'metadata'), 'labels') ?? {};
  if (Object.keys(selector).length > 0 && !Object.entries(selector).every(([k, v]) => labels[k] === v)) {
    errs.push(fieldErrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
  }
  errs.push(...validatePodTemplateSpec(template, 'spec.template', { restartPolicies: ['Always'] }));
  return errs;
};
