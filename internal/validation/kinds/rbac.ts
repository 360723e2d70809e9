// internal/validation/kinds/rbac owns the RBAC rules: policy rules (verbs; resource rules need
// groups and resources; non-resource URLs only in cluster roles and never mixed), aggregation
// selectors, bindings' roleRef (the served RBAC group, kind, name; immutable) and subjects.
// Imports: apierrors (FieldError), validation helpers, kinds/common.

import { fieldErrors, fieldPath, type FieldError } from '../../apierrors/field-errors.js';
import { isDNS1123Subdomain, isPathSegmentName } from '../name-rules.js';
import { isObject, jsonEqual } from '../plain-json.js';
import { list, obj, str, validateLabelSelector, type KindContext, type KindValidator } from './common.js';

export const rbacGroupName = (ctx: KindContext): string => ctx.naming.group('rbac.authorization.k8s.io');

function validatePolicyRule(rule: unknown, namespaced: boolean, path: string): FieldError[] {
  if (!isObject(rule)) return [];
  const errs: FieldError[] = [];
  if (list(rule, 'verbs').length === 0) errs.push(fieldErrors.required(`${path}.verbs`, 'verbs must contain at least one value'));
  const urls = list(rule, 'nonResourceURLs');
  if (urls.length > 0) {
    if (namespaced) errs.push(fieldErrors.invalid(`${path}.nonResourceURLs`, urls, 'namespaced rules cannot apply to non-resource URLs'));
    if (list(rule, 'apiGroups').length > 0 || list(rule, 'resources').length > 0 || list(rule, 'resourceNames').length > 0) {
      errs.push(fieldErrors.invalid(`${path}.nonResourceURLs`, urls, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
    return errs;
  }
  if (list(rule, 'apiGroups').length === 0) errs.push(fieldErrors.required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  if (list(rule, 'resources').length === 0) errs.push(fieldErrors.required(`${path}.resources`, 'resource rules must supply at least one resource'));
  return errs;
}

export const validateRole: KindValidator = (role) =>
  list(role, 'rules').flatMap((r, i) => validatePolicyRule(r, true, fieldPath.index('rules', i)));

export const validateClusterRole: KindValidator = (role) => {
  const errs = list(role, 'rules').flatMap((r, i) => validatePolicyRule(r, false, fieldPath.index('rules', i)));
  const aggregation = obj(role, 'aggregationRule');
  if (aggregation) {
    const selectors = list(aggregation, 'clusterRoleSelectors');
    if (selectors.length === 0) {
      errs.push(fieldErrors.required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
    }
    selectors.forEach((s, i) => errs.push(...validateLabelSelector(s, fieldPath.index('aggregationRule.clusterRoleSelectors', i))));
  }
  return errs;
};

function validateBinding(binding: Record<string, unknown>, old: Record<string, unknown> | undefined, ctx: KindContext, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const group = rbacGroupName(ctx);
  const roleRef = obj(binding, 'roleRef');
  const apiGroup = str(roleRef, 'apiGroup');
  if (apiGroup !== group) errs.push(fieldErrors.notSupported('roleRef.apiGroup', apiGroup, [group]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  const kind = str(roleRef, 'kind');
  if (!kinds.includes(kind)) errs.push(fieldErrors.notSupported('roleRef.kind', kind, kinds));
  const name = str(roleRef, 'name');
  if (!name) errs.push(fieldErrors.required('roleRef.name', ''));
  else for (const m of isPathSegmentName(name)) errs.push(fieldErrors.invalid('roleRef.name', name, m));

  list(binding, 'subjects').forEach((s, i) => {
    if (!isObject(s)) return;
    const p = fieldPath.index('subjects', i);
    const sname = str(s, 'name');
    if (!sname) errs.push(fieldErrors.required(`${p}.name`, ''));
    const sgroup = str(s, 'apiGroup');
    switch (s.kind) {
      case 'ServiceAccount':
        if (sname) for (const m of isDNS1123Subdomain(sname)) errs.push(fieldErrors.invalid(`${p}.name`, sname, m));
        if (sgroup) errs.push(fieldErrors.notSupported(`${p}.apiGroup`, sgroup, ['']));
        if (!namespaced && !str(s, 'namespace')) errs.push(fieldErrors.required(`${p}.namespace`, ''));
        break;
      case 'User':
      case 'Group':
        if (sgroup !== group) errs.push(fieldErrors.notSupported(`${p}.apiGroup`, sgroup, [group]));
        break;
      default:
        errs.push(fieldErrors.notSupported(`${p}.kind`, s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
    }
  });
  if (old && !jsonEqual(binding.roleRef, old.roleRef)) errs.push(fieldErrors.invalid('roleRef', binding.roleRef ?? null, 'cannot change roleRef'));
  return errs;
}

export const validateRoleBinding: KindValidator = (b, old, ctx) => validateBinding(b, old, ctx, true);
export const validateClusterRoleBinding: KindValidator = (b, old, ctx) => validateBinding(b, old, ctx, false);
