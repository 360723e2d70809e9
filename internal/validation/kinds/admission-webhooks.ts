// internal/validation/kinds/admission-webhooks owns the rules of Mutating- and
// ValidatingWebhookConfiguration (admissionregistration v1) beyond the schema, worded as
// upstream words them: webhook names (a domain of at least three segments, unique), rules
// (operations, groups, versions, resources, scope), failurePolicy, matchPolicy, sideEffects
// (None or NoneOnDryRun on create), timeoutSeconds 1–30, admissionReviewVersions (one of
// v1/v1beta1), reinvocationPolicy, clientConfig (url xor service, https), selectors and
// matchConditions (at most 64, unique names, CEL that compiles to a bool).
// Imports: apierrors (FieldError), validation helpers, kinds/common, admission/webhook/hooks.

import { fieldErrors, fieldPath, type FieldError } from '../../apierrors/field-errors.js';
import { compileMatchCondition, MAX_MATCH_CONDITIONS } from '../../admission/webhook/hooks.js';
import { isDNS1123Subdomain, isQualifiedName } from '../name-rules.js';
import { isObject, type JsonObject } from '../plain-json.js';
import { validateLabelSelector, type KindValidator } from './common.js';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

function validateRule(rule: JsonObject, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const ops = strings(rule.operations);
  if (ops.length === 0) errs.push(fieldErrors.required(fieldPath.child(p, 'operations'), ''));
  if (ops.length > 1 && ops.includes('*')) errs.push(fieldErrors.invalid(fieldPath.child(p, 'operations'), ops, "if '*' is present, must not specify other operations"));
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(fieldErrors.notSupported(fieldPath.index(fieldPath.child(p, 'operations'), i), op, OPERATIONS));
  });
  for (const field of ['apiGroups', 'apiVersions']) {
    const values = strings(rule[field]);
    if (values.length === 0) errs.push(fieldErrors.required(fieldPath.child(p, field), ''));
    if (values.length > 1 && values.includes('*')) errs.push(fieldErrors.invalid(fieldPath.child(p, field), values, "if '*' is present, must not specify other " + (field === 'apiGroups' ? 'API groups' : 'API versions')));
  }
  const resources = strings(rule.resources);
  if (resources.length === 0) errs.push(fieldErrors.required(fieldPath.child(p, 'resources'), ''));
  if (resources.length > 1 && resources.includes('*/*')) errs.push(fieldErrors.invalid(fieldPath.child(p, 'resources'), resources, "if '*/*' is present, must not specify other resources"));
  resources.forEach((r, i) => {
    const rp = fieldPath.index(fieldPath.child(p, 'resources'), i);
    if (r === '') errs.push(fieldErrors.required(rp, ''));
    else if (r.split('/').length > 2) errs.push(fieldErrors.invalid(rp, r, 'resource names may not contain more than one /'));
  });
  if (rule.scope !== undefined && !['*', 'Cluster', 'Namespaced'].includes(String(rule.scope))) {
    errs.push(fieldErrors.notSupported(fieldPath.child(p, 'scope'), rule.scope, ['*', 'Cluster', 'Namespaced']));
  }
  return errs;
}

function validateClientConfig(cc: unknown, p: string): FieldError[] {
  if (!isObject(cc)) return [fieldErrors.required(p, 'exactly one of url or service is required')];
  const errs: FieldError[] = [];
  const hasUrl = cc.url !== undefined && cc.url !== null;
  const hasService = isObject(cc.service);
  if (hasUrl === hasService) return [fieldErrors.required(p, 'exactly one of url or service is required')];
  if (hasUrl) {
    const up = fieldPath.child(p, 'url');
    let url: URL | undefined;
    try {
      url = new URL(String(cc.url));
    } catch {
      errs.push(fieldErrors.invalid(up, cc.url, 'host must be specified'));
    }
    if (url) {
      if (url.protocol !== 'https:') errs.push(fieldErrors.invalid(up, cc.url, "'https' is the only allowed URL scheme"));
      if (url.username || url.password) errs.push(fieldErrors.invalid(up, cc.url, 'user information is not permitted in the URL'));
      if (url.hash) errs.push(fieldErrors.invalid(up, cc.url, 'fragments are not permitted in the URL'));
      if (url.search) errs.push(fieldErrors.invalid(up, cc.url, 'query parameters are not permitted in the URL'));
    }
  } else {
    const svc = cc.service as JsonObject;
    const sp = fieldPath.child(p, 'service');
    if (!svc.name) errs.push(fieldErrors.required(fieldPath.child(sp, 'name'), 'service name is required'));
    if (!svc.namespace) errs.push(fieldErrors.required(fieldPath.child(sp, 'namespace'), 'service namespace is required'));
    if (typeof svc.path === 'string' && svc.path !== '' && !svc.path.startsWith('/')) errs.push(fieldErrors.invalid(fieldPath.child(sp, 'path'), svc.path, "must start with a '/'"));
    if (typeof svc.port === 'number' && (svc.port < 1 || svc.port > 65535)) errs.push(fieldErrors.invalid(fieldPath.child(sp, 'port'), svc.port, 'port is not valid: must be between 1 and 65535, inclusive'));
  }
  return errs;
}

function validateWebhookConfiguration(config: JsonObject, old: JsonObject | undefined, mutating: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const webhooks = Array.isArray(config.webhooks) ? config.webhooks : [];
  const oldHooks = old && Array.isArray(old.webhooks) ? (old.webhooks as unknown[]).filter(isObject) : [];
  // Upstream keeps accepting side effects and review versions an object already had on update.
  const oldSideEffects = new Set(oldHooks.map((h) => h.sideEffects));
  const names = new Set<string>();
  webhooks.forEach((raw, i) => {
    if (!isObject(raw)) return;
    const h = raw;
    const p = fieldPath.index('webhooks', i);
    const name = typeof h.name === 'string' ? h.name : '';
    if (!name) errs.push(fieldErrors.required(fieldPath.child(p, 'name'), ''));
    else {
      const problems = isDNS1123Subdomain(name);
      if (problems.length) for (const m of problems) errs.push(fieldErrors.invalid(fieldPath.child(p, 'name'), name, m));
      else if (name.split('.').length < 3) errs.push(fieldErrors.invalid(fieldPath.child(p, 'name'), name, 'should be a domain with at least three segments separated by dots'));
      if (names.has(name)) errs.push(fieldErrors.duplicate(fieldPath.child(p, 'name'), name));
      names.add(name);
    }
    (Array.isArray(h.rules) ? h.rules : []).forEach((r, j) => {
      if (isObject(r)) errs.push(...validateRule(r, fieldPath.index(fieldPath.child(p, 'rules'), j)));
    });
    if (h.failurePolicy !== undefined && !['Fail', 'Ignore'].includes(String(h.failurePolicy))) errs.push(fieldErrors.notSupported(fieldPath.child(p, 'failurePolicy'), h.failurePolicy, ['Fail', 'Ignore']));
    if (h.matchPolicy !== undefined && !['Equivalent', 'Exact'].includes(String(h.matchPolicy))) errs.push(fieldErrors.notSupported(fieldPath.child(p, 'matchPolicy'), h.matchPolicy, ['Equivalent', 'Exact']));
    const allowedSideEffects = ['None', 'NoneOnDryRun'];
    if (h.sideEffects === undefined || h.sideEffects === null || h.sideEffects === '') errs.push(fieldErrors.required(fieldPath.child(p, 'sideEffects'), 'must specify one of None, NoneOnDryRun'));
    else if (!allowedSideEffects.includes(String(h.sideEffects)) && !oldSideEffects.has(h.sideEffects)) errs.push(fieldErrors.notSupported(fieldPath.child(p, 'sideEffects'), h.sideEffects, allowedSideEffects));
    if (typeof h.timeoutSeconds === 'number' && (h.timeoutSeconds < 1 || h.timeoutSeconds > 30)) errs.push(fieldErrors.invalid(fieldPath.child(p, 'timeoutSeconds'), h.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
    const versions = strings(h.admissionReviewVersions);
    const vp = fieldPath.child(p, 'admissionReviewVersions');
    if (versions.length === 0) errs.push(fieldErrors.required(vp, `must specify one of ${REVIEW_VERSIONS.join(', ')}`));
    else {
      const seen = new Set<string>();
      versions.forEach((v, j) => {
        for (const m of isDNS1123Subdomain(v)) errs.push(fieldErrors.invalid(fieldPath.index(vp, j), v, m));
        if (seen.has(v)) errs.push(fieldErrors.invalid(fieldPath.index(vp, j), v, 'duplicate version'));
        seen.add(v);
      });
      if (!versions.some((v) => REVIEW_VERSIONS.includes(v))) errs.push(fieldErrors.invalid(vp, versions, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
    }
    if (mutating && h.reinvocationPolicy !== undefined && !['Never', 'IfNeeded'].includes(String(h.reinvocationPolicy))) {
      errs.push(fieldErrors.notSupported(fieldPath.child(p, 'reinvocationPolicy'), h.reinvocationPolicy, ['IfNeeded', 'Never']));
    }
    errs.push(...validateClientConfig(h.clientConfig, fieldPath.child(p, 'clientConfig')));
    errs.push(...validateLabelSelector(h.namespaceSelector, fieldPath.child(p, 'namespaceSelector')));
    errs.push(...validateLabelSelector(h.objectSelector, fieldPath.child(p, 'objectSelector')));
    const conditions = Array.isArray(h.matchConditions) ? h.matchConditions : [];
    const cp = fieldPath.child(p, 'matchConditions');
    if (conditions.length > MAX_MATCH_CONDITIONS) errs.push(fieldErrors.tooMany(cp, conditions.length, MAX_MATCH_CONDITIONS));
    const conditionNames = new Set<string>();
    conditions.forEach((c, j) => {
      if (!isObject(c)) return;
      const np = fieldPath.child(fieldPath.index(cp, j), 'name');
      const cname = typeof c.name === 'string' ? c.name : '';
      if (!cname) errs.push(fieldErrors.required(np, ''));
      else {
        for (const m of isQualifiedName(cname)) errs.push(fieldErrors.invalid(np, cname, m));
        if (conditionNames.has(cname)) errs.push(fieldErrors.duplicate(np, cname));
        conditionNames.add(cname);
      }
      // Compiled as the dispatcher compiles them.
      const ep = fieldPath.child(fieldPath.index(cp, j), 'expression');
      const expression = typeof c.expression === 'string' ? c.expression : '';
      if (expression.trim() === '') {
        errs.push(fieldErrors.required(ep, ''));
        return;
      }
      try {
        compileMatchCondition(expression, ep);
      } catch (e) {
        const prefix = `${ep}: Invalid value: ${JSON.stringify(expression)}: `;
        const message = (e as Error).message;
        errs.push(fieldErrors.invalid(ep, expression, message.startsWith(prefix) ? message.slice(prefix.length) : message));
      }
    });
  });
  return errs;
}

export const validateMutatingWebhookConfiguration: KindValidator = (obj, old) => validateWebhookConfiguration(obj, old, true);
export const validateValidatingWebhookConfiguration: KindValidator = (obj, old) => validateWebhookConfiguration(obj, old, false);
