// internal/admission/webhook/hooks owns reading one admission webhook out of a stored
// Mutating/ValidatingWebhookConfiguration (compiled once per stored version: selectors parsed,
// match conditions compiled) and deciding whether it is called for a request, as upstream's
// webhook matchers decide: rules (operations, apiGroups, apiVersions, resources with `*`,
// `*/*`, `<resource>/*`, `*/<subresource>`, scope), matchPolicy Equivalent (another served
// version or group of the same stored resource matching the rules), the namespace selector
// (the namespace's labels; a Namespace's own), the object selector (old or new object labels).
// Match conditions are evaluated by the dispatcher (they need the review request).
// Imports: cel, authz/cel-authorizer, selectors, schema/catalog (types), webhook/client-config.

import { celEnvironment, compileExpression, type CompiledExpression } from '../../cel/cel.js';
import { registerAuthorizerLibrary } from '../../authz/cel-authorizer.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import { LabelSelector, labelSelectorFromMeta } from '../../selectors/label-selector.js';
import type { WebhookClientConfig } from '../../webhook/client-config.js';
import type { AdmissionRequest, JsonObject, Operation } from '../admission.js';

/** Upstream's limit on match conditions per webhook. */
export const MAX_MATCH_CONDITIONS = 64;
/** Upstream's limit on timeoutSeconds. */
export const MAX_TIMEOUT_SECONDS = 30;

export interface Rule {
  operations: string[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  scope: string;
}

export interface MatchCondition {
  name: string;
  expression: CompiledExpression;
}

export interface Hook {
  /** The configuration object's name (audit annotations, logs). */
  configuration: string;
  name: string;
  mutating: boolean;
  rules: Rule[];
  matchPolicy: 'Exact' | 'Equivalent';
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  matchConditions: MatchCondition[];
  failurePolicy: 'Fail' | 'Ignore';
  sideEffects: string;
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  reinvoke: boolean;
  clientConfig: WebhookClientConfig;
  /** Set when the stored webhook cannot be used (a bad selector or expression): its failure policy decides. */
  brokenReason?: string;
}

const MATCH_CONDITION_ENV = registerAuthorizerLibrary(celEnvironment({ object: 'dyn', oldObject: 'dyn', request: 'map' }));

/** Compiles a match condition (variables object, oldObject, request, authorizer; a bool); throws CelCompileError naming `path`. */
export function compileMatchCondition(expression: string, path: string): CompiledExpression {
  return compileExpression(MATCH_CONDITION_ENV, expression, path, ['bool']);
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);
const rec = (v: unknown): JsonObject | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : undefined);

/** The webhooks of one stored configuration, in their order. */
export function compileConfiguration(config: JsonObject, mutating: boolean): Hook[] {
  const configuration = String(rec(config.metadata)?.name ?? '');
  const hooks: Hook[] = [];
  const list = Array.isArray(config.webhooks) ? config.webhooks : [];
  list.forEach((raw, i) => {
    const h = rec(raw) ?? {};
    const problems: string[] = [];
    const selector = (v: unknown, field: string): LabelSelector => {
      // An absent selector is `{}` once defaulted: it selects everything.
      if (v === undefined || v === null) return LabelSelector.everything();
      const parsed = labelSelectorFromMeta(v, `webhooks[${i}].${field}`);
      if (parsed.ok) return parsed.selector;
      problems.push(parsed.errors.map((e) => `${e.field}: ${e.detail ?? ''}`).join('; '));
      return LabelSelector.nothing();
    };
    const conditions: MatchCondition[] = [];
    const rawConditions = Array.isArray(h.matchConditions) ? h.matchConditions : [];
    if (rawConditions.length > MAX_MATCH_CONDITIONS) problems.push(`webhooks[${i}].matchConditions: Too many: ${rawConditions.length}: must have at most ${MAX_MATCH_CONDITIONS} items`);
    rawConditions.forEach((c, j) => {
      const cond = rec(c) ?? {};
      try {
        conditions.push({ name: String(cond.name ?? ''), expression: compileMatchCondition(String(cond.expression ?? ''), `webhooks[${i}].matchConditions[${j}].expression`) });
      } catch (e) {
        problems.push((e as Error).message);
      }
    });
    const timeout = typeof h.timeoutSeconds === 'number' ? h.timeoutSeconds : 10;
    hooks.push({
      configuration,
      name: String(h.name ?? ''),
      mutating,
      rules: (Array.isArray(h.rules) ? h.rules : []).map((r) => {
        const rule = rec(r) ?? {};
        return { operations: strings(rule.operations), apiGroups: strings(rule.apiGroups), apiVersions: strings(rule.apiVersions), resources: strings(rule.resources), scope: typeof rule.scope === 'string' && rule.scope ? rule.scope : '*' };
      }),
      matchPolicy: h.matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
      namespaceSelector: selector(h.namespaceSelector, 'namespaceSelector'),
      objectSelector: selector(h.objectSelector, 'objectSelector'),
      matchConditions: conditions,
      failurePolicy: h.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
      sideEffects: typeof h.sideEffects === 'string' ? h.sideEffects : 'Unknown',
      timeoutSeconds: Math.min(Math.max(timeout, 1), MAX_TIMEOUT_SECONDS),
      admissionReviewVersions: strings(h.admissionReviewVersions),
      reinvoke: mutating && h.reinvocationPolicy === 'IfNeeded',
      clientConfig: (rec(h.clientConfig) ?? {}) as WebhookClientConfig,
      ...(problems.length ? { brokenReason: problems.join('; ') } : {}),
    });
  });
  return hooks;
}

/** The request's resource as the rules see it: upstream (served) group, version, resource, subresource, scope. */
export interface RuleTarget {
  group: string;
  version: string;
  resource: string;
  subresource: string;
  /** Cluster-scoped request: a cluster-scoped resource, or a Namespace itself. */
  clusterScoped: boolean;
}

const has = (list: readonly string[], v: string): boolean => list.includes('*') || list.includes(v);

function resourceMatches(patterns: readonly string[], resource: string, subresource: string): boolean {
  const full = subresource ? `${resource}/${subresource}` : resource;
  for (const p of patterns) {
    if (p === '*/*' || p === full) return true;
    if (p === '*' && !subresource) return true;
    const slash = p.indexOf('/');
    if (slash < 0 || !subresource) continue;
    const pr = p.slice(0, slash);
    const ps = p.slice(slash + 1);
    if ((pr === '*' || pr === resource) && (ps === '*' || ps === subresource)) return true;
  }
  return false;
}

export function ruleMatches(rule: Rule, operation: Operation, t: RuleTarget): boolean {
  if (!has(rule.operations, operation)) return false;
  if (!has(rule.apiGroups, t.group) || !has(rule.apiVersions, t.version)) return false;
  if (!resourceMatches(rule.resources, t.resource, t.subresource)) return false;
  if (rule.scope === 'Cluster') return t.clusterScoped;
  if (rule.scope === 'Namespaced') return !t.clusterScoped;
  return true;
}

export function targetOf(r: ResourceInfo, subresource: string, namespace: string): RuleTarget {
  const isNamespace = r.group === '' && r.resource === 'namespaces';
  return { group: r.group, version: r.version, resource: r.resource, subresource, clusterScoped: isNamespace || !r.namespaced || !namespace };
}

/**
 * The resource the webhook is called for: the request's when a rule matches it, else (matchPolicy
 * Equivalent) the first equivalent served resource with the same sub-resource that a rule
 * matches, else undefined.
 */
export function matchingResource(hook: Hook, req: AdmissionRequest, equivalents: () => readonly ResourceInfo[]): ResourceInfo | undefined {
  const own = targetOf(req.resource, req.subresource, req.namespace);
  if (hook.rules.some((rule) => ruleMatches(rule, req.operation, own))) return req.resource;
  if (hook.matchPolicy !== 'Equivalent') return undefined;
  for (const eq of equivalents()) {
    if (eq === req.resource) continue;
    if (req.subresource && !eq.subresources.has(req.subresource)) continue;
    const t = targetOf(eq, req.subresource, req.namespace);
    if (hook.rules.some((rule) => ruleMatches(rule, req.operation, t))) return eq;
  }
  return undefined;
}

const labelsOf = (o: JsonObject | undefined): Record<string, string> | undefined => {
  if (!o) return undefined;
  return (rec(rec(o.metadata)?.labels) ?? {}) as Record<string, string>;
};

/** The object selector: the new or the old object's labels match (a missing object never does). */
export function objectSelectorMatches(hook: Hook, req: AdmissionRequest): boolean {
  if (hook.objectSelector.isEmpty()) return true;
  const now = labelsOf(req.object);
  const old = labelsOf(req.oldObject);
  return (now !== undefined && hook.objectSelector.matches(now)) || (old !== undefined && hook.objectSelector.matches(old));
}

/**
 * The namespace selector: cluster-scoped requests other than a Namespace's always match; a
 * Namespace is matched by its own labels (the new object, or the old one on delete); other
 * requests by their namespace's labels (`namespaceLabels`, undefined when it does not exist:
 * then the webhook is not called).
 */
export async function namespaceSelectorMatches(hook: Hook, req: AdmissionRequest, namespaceLabels: (name: string) => Promise<Record<string, string> | undefined>): Promise<boolean> {
  if (hook.namespaceSelector.isEmpty()) return true;
  const isNamespace = req.resource.group === '' && req.resource.resource === 'namespaces';
  if (isNamespace && !req.subresource) return hook.namespaceSelector.matches(labelsOf(req.object ?? req.oldObject) ?? {});
  const ns = isNamespace ? req.name : req.namespace;
  if (!ns) return true;
  const labels = await namespaceLabels(ns);
  return labels !== undefined && hook.namespaceSelector.matches(labels);
}
