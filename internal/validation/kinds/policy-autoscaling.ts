// internal/validation/kinds/policy-autoscaling owns the PodDisruptionBudget rules (minAvailable
// xor maxUnavailable, int-or-percent values, selector, eviction policy) and the
// HorizontalPodAutoscaler basics (target reference, replica bounds, metric sources, v1 CPU
// target).
// Imports: apierrors (FieldError), validation helpers, kinds/common.

import { fieldErrors, fieldPath, type FieldError } from '../../apierrors/field-errors.js';
import { isPathSegmentName } from '../name-rules.js';
import { isObject } from '../plain-json.js';
import { has, list, notMoreThan100Percent, obj, str, validateIntOrPercent, validateLabelSelector, type KindValidator } from './common.js';

export const validatePodDisruptionBudget: KindValidator = (pdb) => {
  const spec = obj(pdb, 'spec');
  if (!spec) return [];
  const errs: FieldError[] = [];
  if (has(spec, 'minAvailable') && has(spec, 'maxUnavailable')) {
    errs.push(fieldErrors.invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  }
  for (const key of ['minAvailable', 'maxUnavailable']) {
    if (!has(spec, key)) continue;
    errs.push(...validateIntOrPercent(spec[key], `spec.${key}`));
    errs.push(...notMoreThan100Percent(spec[key], `spec.${key}`));
  }
  errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  const policy = str(spec, 'unhealthyPodEvictionPolicy');
  if (policy && policy !== 'IfHealthyBudget' && policy !== 'AlwaysAllow') {
    errs.push(fieldErrors.notSupported('spec.unhealthyPodEvictionPolicy', policy, ['AlwaysAllow', 'IfHealthyBudget']));
  }
  return errs;
};

const METRIC_SOURCES: Record<string, string> = {
  Object: 'object',
  Pods: 'pods',
  Resource: 'resource',
  ContainerResource: 'containerResource',
  External: 'external',
};

function validateMetricTarget(target: unknown, path: string): FieldError[] {
  if (!isObject(target)) return [fieldErrors.required(path, 'must specify a metric target')];
  const errs: FieldError[] = [];
  const type = str(target, 'type');
  if (!['Utilization', 'Value', 'AverageValue'].includes(type)) {
    errs.push(fieldErrors.notSupported(`${path}.type`, type, ['AverageValue', 'Utilization', 'Value']));
  }
  if (typeof target.averageUtilization === 'number' && target.averageUtilization <= 0) {
    errs.push(fieldErrors.invalid(`${path}.averageUtilization`, target.averageUtilization, 'must be greater than 0'));
  }
  return errs;
}

export const validateHorizontalPodAutoscaler: KindValidator = (hpa, _old, ctx) => {
  const spec = obj(hpa, 'spec');
  if (!spec) return [fieldErrors.required('spec', '')];
  const errs: FieldError[] = [];
  const ref = obj(spec, 'scaleTargetRef');
  for (const key of ['kind', 'name']) {
    const v = str(ref, key);
    if (!v) errs.push(fieldErrors.required(`spec.scaleTargetRef.${key}`, ''));
    else for (const m of isPathSegmentName(v)) errs.push(fieldErrors.invalid(`spec.scaleTargetRef.${key}`, v, m));
  }
  const min = spec.minReplicas;
  const max = spec.maxReplicas;
  if (typeof min === 'number' && min < 1) errs.push(fieldErrors.invalid('spec.minReplicas', min, 'must be greater than or equal to 1'));
  if (typeof max === 'number') {
    if (max < 1) errs.push(fieldErrors.invalid('spec.maxReplicas', max, 'must be greater than 0'));
    if (typeof min === 'number' && max < min) errs.push(fieldErrors.invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  }
  if (ctx.resource.version === 'v1') {
    const cpu = spec.targetCPUUtilizationPercentage;
    if (typeof cpu === 'number' && cpu < 1) errs.push(fieldErrors.invalid('spec.targetCPUUtilizationPercentage', cpu, 'must be greater than or equal to 1'));
    return errs;
  }
  list(spec, 'metrics').forEach((m, i) => {
    if (!isObject(m)) return;
    const p = fieldPath.index('spec.metrics', i);
    const type = str(m, 'type');
    const sourceKey = METRIC_SOURCES[type];
    if (!sourceKey) {
      errs.push(fieldErrors.notSupported(`${p}.type`, type, Object.keys(METRIC_SOURCES)));
      return;
    }
    const source = obj(m, sourceKey);
    if (!source) {
      errs.push(fieldErrors.required(`${p}.${sourceKey}`, 'must populate information for the given metric source'));
      return;
    }
    const others = Object.values(METRIC_SOURCES).filter((k) => k !== sourceKey && isObject(m[k]));
    for (const k of others) errs.push(fieldErrors.forbidden(`${p}.${k}`, 'must populate the given metric source only'));
    if (sourceKey === 'resource' || sourceKey === 'containerResource') {
      if (!str(source, 'name')) errs.push(fieldErrors.required(`${p}.${sourceKey}.name`, 'must specify a resource name'));
    }
    errs.push(...validateMetricTarget(source.target, `${p}.${sourceKey}.target`));
  });
  const behavior = obj(spec, 'behavior');
  for (const dir of ['scaleUp', 'scaleDown']) {
    const rules = obj(behavior, dir);
    if (!rules) continue;
    const window = rules.stabilizationWindowSeconds;
    if (typeof window === 'number' && (window < 0 || window > 3600)) {
      errs.push(fieldErrors.invalid(`spec.behavior.${dir}.stabilizationWindowSeconds`, window, 'must be less than or equal to 3600 and greater than or equal to 0'));
    }
    const select = str(rules, 'selectPolicy');
    if (select && !['Max', 'Min', 'Disabled'].includes(select)) {
      errs.push(fieldErrors.notSupported(`spec.behavior.${dir}.selectPolicy`, select, ['Disabled', 'Max', 'Min']));
    }
    list(rules, 'policies').forEach((pol, j) => {
      if (!isObject(pol)) return;
      const pp = fieldPath.index(`spec.behavior.${dir}.policies`, j);
      const ptype = str(pol, 'type');
      if (ptype !== 'Pods' && ptype !== 'Percent') errs.push(fieldErrors.notSupported(`${pp}.type`, ptype, ['Percent', 'Pods']));
      const value = pol.value;
      if (typeof value === 'number' && value <= 0) errs.push(fieldErrors.invalid(`${pp}.value`, value, 'must be greater than zero'));
      const period = pol.periodSeconds;
      if (typeof period === 'number' && (period <= 0 || period > 1800)) {
        errs.push(fieldErrors.invalid(`${pp}.periodSeconds`, period, 'must be greater than zero and less than or equal to 1800'));
      }
    });
  }
  return errs;
};
