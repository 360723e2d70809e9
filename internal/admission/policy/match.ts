// internal/admission/policy/match owns whether an admission request falls under a policy's
// matchConstraints or a binding's matchResources, as upstream's generic matcher decides:
// namespaceSelector (cluster-scoped objects other than Namespaces always match it; a Namespace
// is matched by its own labels), objectSelector (the new or the old object's labels),
// excludeResourceRules first, then resourceRules (operations, apiGroups, apiVersions,
// resources with `*`, `*/*`, `res/*`, `*/sub`, resourceNames, scope), and matchPolicy
// Equivalent: a rule naming another group/version of the same stored resource matches too, and
// `matchedResource` says which one (the policy then sees the object as that version).
// Imports: admission (request type), schema/catalog (types), validation/kinds/common (selectors).

import type { AdmissionRequest } from '../admission.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import { selectorMatches } from '../../validation/kinds/common.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

export interface MatchEnv {
  /** The labels of a namespace (undefined when it does not exist). */
  namespaceLabels(name: string): Record<string, string> | undefined;
  /** Other served group/versions of the same stored resource (matchPolicy Equivalent). */
  equivalents(resource: ResourceInfo): readonly ResourceInfo[];
}

export interface MatchTarget {
  group: string;
  version: string;
  resource: string;
  subresource: string;
}

function ruleMatches(rule: Obj, req: AdmissionRequest, t: MatchTarget): boolean {
  const ops = strings(rule.operations);
  if (!ops.includes('*') && !ops.includes(req.operation)) return false;
  const groups = strings(rule.apiGroups);
  if (!groups.includes('*') && !groups.includes(t.group)) return false;
  const versions = strings(rule.apiVersions);
  if (!versions.includes('*') && !versions.includes(t.version)) return false;
  const scope = typeof rule.scope === 'string' ? rule.scope : '*';
  if (scope === 'Cluster' && req.namespace !== '') return false;
  if (scope === 'Namespaced' && req.namespace === '') return false;
  const names = strings(rule.resourceNames);
  if (names.length > 0 && !names.includes(req.name)) return false;
  const full = t.subresource ? `${t.resource}/${t.subresource}` : t.resource;
  return strings(rule.resources).some((r) => {
    if (r === '*/*' || r === full) return true;
    if (r === '*') return t.subresource === '';
    const slash = r.indexOf('/');
    if (slash < 0) return false;
    const [res, sub] = [r.slice(0, slash), r.slice(slash + 1)];
    return (res === '*' || res === t.resource) && (sub === '*' || sub === t.subresource) && t.subresource !== '';
  });
}

/** The request's own target, then (Equivalent) the same stored resource under its other names. */
function targets(req: AdmissionRequest, matchPolicy: unknown, env: MatchEnv): MatchTarget[] {
  const own: MatchTarget = { group: req.resource.group, version: req.resource.version, resource: req.resource.resource, subresource: req.subresource };
  if (matchPolicy === 'Exact') return [own];
  return [own, ...env.equivalents(req.resource).map((r) => ({ group: r.group, version: r.version, resource: r.resource, subresource: req.subresource }))];
}

function rulesMatch(rules: unknown, req: AdmissionRequest, all: readonly MatchTarget[]): boolean {
  const rs = Array.isArray(rules) ? rules.filter(isObj) : [];
  return rs.some((rule) => all.some((t) => ruleMatches(rule, req, t)));
}

/**
 * The resource a request matched `criteria`'s resourceRules under: the request's own when a rule
 * names it, else (matchPolicy Equivalent) the first equivalent resource a rule names, as
 * upstream's matcher picks it; undefined when no rule matches.
 */
export function matchedResource(criteria: Obj | undefined, req: AdmissionRequest, env: MatchEnv): ResourceInfo | undefined {
  if (!criteria) return undefined;
  const own: MatchTarget = { group: req.resource.group, version: req.resource.version, resource: req.resource.resource, subresource: req.subresource };
  if (rulesMatch(criteria.resourceRules, req, [own])) return req.resource;
  if (criteria.matchPolicy === 'Exact') return undefined;
  for (const r of env.equivalents(req.resource)) {
    if (rulesMatch(criteria.resourceRules, req, [{ group: r.group, version: r.version, resource: r.resource, subresource: req.subresource }])) return r;
  }
  return undefined;
}

const labelsOf = (o: unknown): Record<string, string> => {
  const meta = isObj(o) && isObj(o.metadata) ? o.metadata : undefined;
  return (meta && isObj(meta.labels) ? meta.labels : {}) as Record<string, string>;
};

const isEmptySelector = (s: unknown): boolean => !isObj(s) || (Object.keys(isObj(s.matchLabels) ? s.matchLabels : {}).length === 0 && (!Array.isArray(s.matchExpressions) || s.matchExpressions.length === 0));

function namespaceMatches(selector: unknown, req: AdmissionRequest, env: MatchEnv): boolean {
  if (isEmptySelector(selector)) return true;
  const isNamespace = req.resource.group === '' && req.resource.resource === 'namespaces';
  if (isNamespace) return selectorMatches(selector, labelsOf(req.object ?? req.oldObject));
  // Cluster-scoped objects are not in a namespace: the selector does not narrow them.
  if (req.namespace === '') return true;
  return selectorMatches(selector, env.namespaceLabels(req.namespace) ?? {});
}

function objectMatches(selector: unknown, req: AdmissionRequest): boolean {
  if (isEmptySelector(selector)) return true;
  return (req.object !== undefined && selectorMatches(selector, labelsOf(req.object))) || (req.oldObject !== undefined && selectorMatches(selector, labelsOf(req.oldObject)));
}

/**
 * Whether `criteria` (matchConstraints or matchResources) selects the request. `rulesOptional`:
 * a binding's matchResources without resourceRules narrows by its selectors only.
 */
export function matches(criteria: Obj | undefined, req: AdmissionRequest, env: MatchEnv, rulesOptional = false): boolean {
  if (!criteria) return rulesOptional;
  if (!namespaceMatches(criteria.namespaceSelector, req, env)) return false;
  if (!objectMatches(criteria.objectSelector, req)) return false;
  const all = targets(req, criteria.matchPolicy, env);
  if (rulesMatch(criteria.excludeResourceRules, req, all)) return false;
  const hasRules = Array.isArray(criteria.resourceRules) && criteria.resourceRules.length > 0;
  if (!hasRules) return rulesOptional;
  return rulesMatch(criteria.resourceRules, req, all);
}
