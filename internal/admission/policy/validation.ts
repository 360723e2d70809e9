// internal/admission/policy/validation owns the write-time rules of ValidatingAdmissionPolicy
// and ValidatingAdmissionPolicyBinding objects, worded as upstream words them: every
// expression compiles (matchConditions, variables, validations, messageExpression,
// auditAnnotations: compile.ts is the same compiler admission runs), paramKind complete,
// matchConstraints with resourceRules, enums (failurePolicy, matchPolicy, reason, operations,
// scope, validationActions, parameterNotFoundAction), names (variables are CEL identifiers,
// matchConditions qualified and unique, audit annotation keys), selectors; bindings name a
// policy, at least one action and never Deny with Warn, and a paramRef with name or selector.
// MutatingAdmissionPolicy and its binding share those rules, plus mutations (patchType required,
// the matching expression field, compiled in the mutation environment) and reinvocationPolicy.
// Imports: apierrors (FieldError), validation (name-rules, kinds/common), policy/compile.

import { fieldErrors, type FieldError } from '../../apierrors/field-errors.js';
import { validateLabelSelector } from '../../validation/kinds/common.js';
import { isQualifiedName } from '../../validation/name-rules.js';
import { compileMutatingPolicy, compilePolicy, type Compiled } from './compile.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const OPERATIONS = ['*', 'CREATE', 'UPDATE', 'DELETE', 'CONNECT'];
const REASONS = ['Unauthorized', 'Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const CEL_IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

function ruleErrors(rules: unknown, path: string, withNames: boolean): FieldError[] {
  const errs: FieldError[] = [];
  list(rules).forEach((r, i) => {
    const p = `${path}[${i}]`;
    if (!isObj(r)) return;
    const ops = list(r.operations);
    if (ops.length === 0) errs.push(fieldErrors.required(`${p}.operations`, ''));
    ops.forEach((o, j) => {
      if (!OPERATIONS.includes(str(o))) errs.push(fieldErrors.notSupported(`${p}.operations[${j}]`, o, OPERATIONS));
    });
    if (ops.length > 1 && ops.includes('*')) errs.push(fieldErrors.invalid(`${p}.operations`, ops, "if '*' is present, must not specify other operations"));
    for (const field of ['apiGroups', 'apiVersions', 'resources'] as const) {
      const v = list(r[field]);
      if (v.length === 0) errs.push(fieldErrors.required(`${p}.${field}`, ''));
      else if (v.length > 1 && v.includes('*')) errs.push(fieldErrors.invalid(`${p}.${field}`, v, "if '*' is present, must not specify other " + (field === 'apiGroups' ? 'API groups' : field === 'apiVersions' ? 'API versions' : 'resources')));
    }
    if (r.scope !== undefined && !['*', 'Cluster', 'Namespaced'].includes(str(r.scope))) errs.push(fieldErrors.notSupported(`${p}.scope`, r.scope, ['*', 'Cluster', 'Namespaced']));
    if (!withNames && r.resourceNames !== undefined) errs.push(fieldErrors.forbidden(`${p}.resourceNames`, 'may not be set'));
  });
  return errs;
}

function matchResourcesErrors(m: unknown, path: string, requireRules: boolean): FieldError[] {
  if (!isObj(m)) return requireRules ? [fieldErrors.required(path, '')] : [];
  const errs: FieldError[] = [];
  if (requireRules && list(m.resourceRules).length === 0) errs.push(fieldErrors.required(`${path}.resourceRules`, ''));
  errs.push(...ruleErrors(m.resourceRules, `${path}.resourceRules`, true), ...ruleErrors(m.excludeResourceRules, `${path}.excludeResourceRules`, true));
  if (m.matchPolicy !== undefined && !['Exact', 'Equivalent'].includes(str(m.matchPolicy))) errs.push(fieldErrors.notSupported(`${path}.matchPolicy`, m.matchPolicy, ['Exact', 'Equivalent']));
  errs.push(...validateLabelSelector(m.namespaceSelector, `${path}.namespaceSelector`), ...validateLabelSelector(m.objectSelector, `${path}.objectSelector`));
  return errs;
}

/** A compile error as a field error, from the compiler's `<path>: <Type>: …` text. */
function compileError(c: Compiled): FieldError | undefined {
  if (!c.error) return undefined;
  const rest = c.error.startsWith(`${c.path}: `) ? c.error.slice(c.path.length + 2) : c.error;
  if (rest.startsWith('Required value: ')) return fieldErrors.required(c.path, rest.slice('Required value: '.length));
  const invalidPrefix = `Invalid value: ${JSON.stringify(c.source)}: `;
  if (rest.startsWith(invalidPrefix)) return fieldErrors.invalid(c.path, c.source, rest.slice(invalidPrefix.length));
  if (rest.startsWith('Forbidden: ')) return fieldErrors.forbidden(c.path, rest.slice('Forbidden: '.length));
  return fieldErrors.invalid(c.path, c.source, rest);
}

/** What validating and mutating policies share: failurePolicy, paramKind, matchConstraints, matchConditions, variables. */
function commonPolicyErrors(spec: Obj): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.failurePolicy !== undefined && !['Fail', 'Ignore'].includes(str(spec.failurePolicy))) errs.push(fieldErrors.notSupported('spec.failurePolicy', spec.failurePolicy, ['Fail', 'Ignore']));
  if (spec.paramKind !== undefined) {
    const pk = isObj(spec.paramKind) ? spec.paramKind : {};
    if (!str(pk.apiVersion)) errs.push(fieldErrors.required('spec.paramKind.apiVersion', ''));
    else if (str(pk.apiVersion).split('/').length > 2) errs.push(fieldErrors.invalid('spec.paramKind.apiVersion', pk.apiVersion, 'apiVersion must be of the form group/version or version'));
    if (!str(pk.kind)) errs.push(fieldErrors.required('spec.paramKind.kind', ''));
  }
  errs.push(...matchResourcesErrors(spec.matchConstraints, 'spec.matchConstraints', true));
  const conditionNames = new Set<string>();
  list(spec.matchConditions).forEach((m, i) => {
    if (!isObj(m)) return;
    const p = `spec.matchConditions[${i}].name`;
    const n = str(m.name);
    if (!n) errs.push(fieldErrors.required(p, ''));
    else {
      for (const msg of isQualifiedName(n)) errs.push(fieldErrors.invalid(p, n, msg));
      if (conditionNames.has(n)) errs.push(fieldErrors.duplicate(p, n));
      conditionNames.add(n);
    }
  });
  if (list(spec.matchConditions).length > 64) errs.push(fieldErrors.tooMany('spec.matchConditions', list(spec.matchConditions).length, 64));
  list(spec.variables).forEach((v, i) => {
    if (!isObj(v)) return;
    const p = `spec.variables[${i}].name`;
    const n = str(v.name);
    if (!n) errs.push(fieldErrors.required(p, 'name is not specified'));
    else if (!CEL_IDENTIFIER.test(n) || CEL_RESERVED.has(n)) errs.push(fieldErrors.invalid(p, n, 'name is not a valid CEL identifier'));
  });
  return errs;
}

export function validateValidatingAdmissionPolicy(obj: Obj): FieldError[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const name = str(isObj(obj.metadata) ? obj.metadata.name : '');
  const errs: FieldError[] = commonPolicyErrors(spec);
  if (list(spec.validations).length === 0 && list(spec.auditAnnotations).length === 0) {
    errs.push(fieldErrors.required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
  }
  list(spec.validations).forEach((v, i) => {
    if (!isObj(v)) return;
    const p = `spec.validations[${i}]`;
    if (v.reason !== undefined && !REASONS.includes(str(v.reason))) errs.push(fieldErrors.notSupported(`${p}.reason`, v.reason, REASONS));
    const message = str(v.message);
    if (message.includes('\n')) errs.push(fieldErrors.invalid(`${p}.message`, message, 'message must not contain line breaks'));
    else if (v.message !== undefined && message.trim() === '') errs.push(fieldErrors.invalid(`${p}.message`, message, 'message must be non-empty if specified'));
  });
  const keys = new Set<string>();
  list(spec.auditAnnotations).forEach((a, i) => {
    if (!isObj(a)) return;
    const p = `spec.auditAnnotations[${i}]`;
    const key = str(a.key);
    if (!key) errs.push(fieldErrors.required(`${p}.key`, ''));
    else {
      for (const msg of isQualifiedName(`${name}/${key}`)) errs.push(fieldErrors.invalid(`${p}.key`, key, msg));
      if (keys.has(key)) errs.push(fieldErrors.duplicate(`${p}.key`, key));
      keys.add(key);
    }
    if (!str(a.valueExpression)) errs.push(fieldErrors.required(`${p}.valueExpression`, 'valueExpression is not specified'));
  });
  // Expressions: the same compiler admission uses (empty ones are reported above or by it).
  const compiled = compilePolicy(obj);
  const exprs: Compiled[] = [
    ...compiled.matchConditions.map((m) => m.expr),
    ...compiled.variables.map((v) => v.expr),
    ...compiled.validations.flatMap((v) => [v.expression, ...(v.messageExpression ? [v.messageExpression] : [])]),
    ...compiled.auditAnnotations.filter((a) => a.expr.source !== '').map((a) => a.expr),
  ];
  return [...errs, ...compileErrors(exprs)];
}

function compileErrors(exprs: readonly Compiled[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const c of exprs) {
    const e = compileError(c);
    if (e) errs.push(e);
  }
  return errs;
}

const PATCH_TYPES = ['ApplyConfiguration', 'JSONPatch'];

/** MutatingAdmissionPolicy (v1alpha1): the shared parts, mutations with their patchType and expression, reinvocationPolicy. */
export function validateMutatingAdmissionPolicy(obj: Obj): FieldError[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const errs: FieldError[] = commonPolicyErrors(spec);
  if (list(spec.mutations).length === 0) errs.push(fieldErrors.required('spec.mutations', 'mutations must contain at least one item'));
  const compiled = compileMutatingPolicy(obj);
  const exprs: Compiled[] = [...compiled.matchConditions.map((m) => m.expr), ...compiled.variables.map((v) => v.expr)];
  list(spec.mutations).forEach((m, i) => {
    if (!isObj(m)) return;
    const p = `spec.mutations[${i}]`;
    if (m.patchType === undefined || m.patchType === '') {
      errs.push(fieldErrors.required(`${p}.patchType`, ''));
      return;
    }
    if (!PATCH_TYPES.includes(str(m.patchType))) {
      errs.push(fieldErrors.notSupported(`${p}.patchType`, m.patchType, PATCH_TYPES));
      return;
    }
    const [field, other] = m.patchType === 'JSONPatch' ? ['jsonPatch', 'applyConfiguration'] : ['applyConfiguration', 'jsonPatch'];
    if (m[other] !== undefined && m[other] !== null) errs.push(fieldErrors.invalid(`${p}.${other}`, '{}', `must not be specified when patchType is ${str(m.patchType)}`));
    if (!isObj(m[field]) || !str(m[field].expression)) {
      errs.push(fieldErrors.required(`${p}.${field}`, `${field}.expression is required`));
      return;
    }
    exprs.push(compiled.mutations[i]!.expression);
  });
  if (spec.reinvocationPolicy !== undefined && !['Never', 'IfNeeded'].includes(str(spec.reinvocationPolicy))) {
    errs.push(fieldErrors.notSupported('spec.reinvocationPolicy', spec.reinvocationPolicy, ['Never', 'IfNeeded']));
  }
  return [...errs, ...compileErrors(exprs)];
}

/** MutatingAdmissionPolicyBinding (v1alpha1): a policy name, paramRef and matchResources as the validating binding has them. */
export function validateMutatingAdmissionPolicyBinding(obj: Obj): FieldError[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const errs: FieldError[] = [];
  if (!str(spec.policyName)) errs.push(fieldErrors.required('spec.policyName', ''));
  return [...errs, ...paramRefErrors(spec.paramRef), ...matchResourcesErrors(spec.matchResources, 'spec.matchResources', false)];
}

function paramRefErrors(paramRef: unknown): FieldError[] {
  const errs: FieldError[] = [];
  if (paramRef === undefined) return errs;
  const ref = isObj(paramRef) ? paramRef : {};
  const hasName = str(ref.name) !== '';
  const hasSelector = ref.selector !== undefined && ref.selector !== null;
  if (hasName && hasSelector) errs.push(fieldErrors.forbidden('spec.paramRef.name', 'name and selector are mutually exclusive'));
  if (!hasName && !hasSelector) errs.push(fieldErrors.required('spec.paramRef', 'one of name or selector must be specified'));
  if (hasSelector) errs.push(...validateLabelSelector(ref.selector, 'spec.paramRef.selector'));
  if (ref.parameterNotFoundAction === undefined) errs.push(fieldErrors.required('spec.paramRef.parameterNotFoundAction', ''));
  else if (!['Allow', 'Deny'].includes(str(ref.parameterNotFoundAction))) errs.push(fieldErrors.notSupported('spec.paramRef.parameterNotFoundAction', ref.parameterNotFoundAction, ['Allow', 'Deny']));
  return errs;
}

export function validateValidatingAdmissionPolicyBinding(obj: Obj): FieldError[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const errs: FieldError[] = [];
  if (!str(spec.policyName)) errs.push(fieldErrors.required('spec.policyName', ''));
  const actions = list(spec.validationActions);
  if (actions.length === 0) errs.push(fieldErrors.required('spec.validationActions', 'at least one validation action is required'));
  const seen = new Set<unknown>();
  actions.forEach((a, i) => {
    const p = `spec.validationActions[${i}]`;
    if (seen.has(a)) errs.push(fieldErrors.duplicate(p, a));
    seen.add(a);
    if (!['Deny', 'Warn', 'Audit'].includes(str(a))) errs.push(fieldErrors.notSupported(p, a, ['Deny', 'Warn', 'Audit']));
  });
  if (seen.has('Deny') && seen.has('Warn')) {
    errs.push(fieldErrors.invalid('spec.validationActions', actions, 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'));
  }
  errs.push(...paramRefErrors(spec.paramRef));
  errs.push(...matchResourcesErrors(spec.matchResources, 'spec.matchResources', false));
  return errs;
}
