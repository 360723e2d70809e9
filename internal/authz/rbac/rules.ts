// internal/authz/rbac/rules owns RBAC policy-rule semantics as upstream 1.32 defines them:
// whether a rule allows a request (verbs, API groups, resources with `<res>/<sub>` and
// `*/<sub>`, resource names, non-resource URLs with a trailing `*`), whether one set of rules
// covers another (the escalation check's Covers: each servant rule broken down to one verb,
// group, resource and name), and the compact text upstream's escalation message prints.
// Imports: authz/authorizer (types only).

import type { Attributes } from '../authorizer.js';

/** A policy rule with every list present (absent lists in stored objects read as empty). */
export interface PolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
  nonResourceURLs: string[];
}

const ALL = '*';

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** A stored rule (JSON) as a PolicyRule; tolerant of absent or malformed lists. */
export function toPolicyRule(raw: unknown): PolicyRule {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  return {
    verbs: strings(r.verbs),
    apiGroups: strings(r.apiGroups),
    resources: strings(r.resources),
    resourceNames: strings(r.resourceNames),
    nonResourceURLs: strings(r.nonResourceURLs),
  };
}

export const rule = (partial: Partial<PolicyRule>): PolicyRule => ({ verbs: [], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: [], ...partial });

export const verbMatches = (r: PolicyRule, verb: string): boolean => r.verbs.includes(ALL) || r.verbs.includes(verb);

export const apiGroupMatches = (r: PolicyRule, group: string): boolean => r.apiGroups.includes(ALL) || r.apiGroups.includes(group);

/**
 * `*` matches every resource and sub-resource; `pods/log` only itself; `*\/scale` the scale
 * sub-resource of every resource. Upstream has no `pods/*` form: it is matched only literally.
 */
export function resourceMatches(r: PolicyRule, combined: string, subresource: string): boolean {
  for (const res of r.resources) {
    if (res === ALL || res === combined) return true;
    if (subresource !== '' && res.length === subresource.length + 2 && res.startsWith('*/') && res.endsWith(subresource)) return true;
  }
  return false;
}

/** No names = any name; otherwise the request's name must be listed (a nameless create or list never is). */
export const resourceNameMatches = (r: PolicyRule, name: string): boolean => r.resourceNames.length === 0 || r.resourceNames.includes(name);

export function nonResourceURLMatches(r: PolicyRule, path: string): boolean {
  for (const url of r.nonResourceURLs) {
    if (url === ALL || url === path) return true;
    if (url.endsWith(ALL) && path.startsWith(url.replace(/\*+$/, ''))) return true;
  }
  return false;
}

export function ruleAllows(a: Attributes, r: PolicyRule): boolean {
  if (!verbMatches(r, a.verb)) return false;
  if (!a.isResourceRequest) return nonResourceURLMatches(r, a.path);
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return apiGroupMatches(r, a.apiGroup) && resourceMatches(r, combined, a.subresource) && resourceNameMatches(r, a.name);
}

// ---------------------------------------------------------------------------------------------
// Covers: does the owner hold every permission of the servant rules?

/** One rule per (group, resource, verb[, name]) and per (URL, verb), in upstream's order. */
export function breakdownRule(r: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of r.apiGroups) {
    for (const resource of r.resources) {
      for (const verb of r.verbs) {
        if (r.resourceNames.length > 0) {
          for (const name of r.resourceNames) out.push(rule({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] }));
        } else {
          out.push(rule({ apiGroups: [group], resources: [resource], verbs: [verb] }));
        }
      }
    }
  }
  for (const url of r.nonResourceURLs) for (const verb of r.verbs) out.push(rule({ nonResourceURLs: [url], verbs: [verb] }));
  return out;
}

const hasAll = (set: readonly string[], wanted: readonly string[]): boolean => wanted.every((w) => set.includes(w));

function resourcesCoverAll(owner: readonly string[], wanted: readonly string[]): boolean {
  if (owner.includes(ALL) || hasAll(owner, wanted)) return true;
  for (const path of wanted) {
    if (owner.includes(path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0) return false;
    if (!owner.includes(`*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

const urlCovers = (owner: string, path: string): boolean => owner === path || (owner.endsWith(ALL) && path.startsWith(owner.replace(/\*+$/, '')));

const urlsCoverAll = (owner: readonly string[], wanted: readonly string[]): boolean => wanted.every((p) => owner.some((o) => urlCovers(o, p)));

/** Whether `owner` covers `sub`, a rule of at most one verb, group, resource and name (a breakdown). */
export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = owner.verbs.includes(ALL) || hasAll(owner.verbs, sub.verbs);
  const groups = owner.apiGroups.includes(ALL) || hasAll(owner.apiGroups, sub.apiGroups);
  const names = sub.resourceNames.length === 0 ? owner.resourceNames.length === 0 : owner.resourceNames.length === 0 || hasAll(owner.resourceNames, sub.resourceNames);
  return verbs && groups && resourcesCoverAll(owner.resources, sub.resources) && names && urlsCoverAll(owner.nonResourceURLs, sub.nonResourceURLs);
}

/** Upstream's Covers: true when every broken-down servant rule is covered by some owner rule; else the uncovered ones. */
export function covers(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): { covered: boolean; missing: PolicyRule[] } {
  const missing: PolicyRule[] = [];
  for (const s of servant) {
    for (const sub of breakdownRule(s)) if (!owner.some((o) => ruleCovers(o, sub))) missing.push(sub);
  }
  return { covered: missing.length === 0, missing };
}

/**
 * Upstream's CompactRules: rules of one group, one resource and at most one name (nothing else)
 * merge their verbs; the merged ones come after the others.
 */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const isSimple = r.resourceNames.length <= 1 && r.nonResourceURLs.length === 0 && r.apiGroups.length === 1 && r.resources.length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups[0], r.resources[0], r.resourceNames.length === 1, r.resourceNames[0] ?? '']);
    const known = simple.get(key);
    if (known) {
      for (const v of r.verbs) if (!known.verbs.includes(v)) known.verbs.push(v);
    } else {
      simple.set(key, { ...r, verbs: [...r.verbs] });
    }
  }
  out.push(...simple.values());
  return out;
}

const PLAIN = /^[^"\\\x00-\x1f\x7f]*$/;

/** Go's %q for one string (strconv.Quote): printable characters as they are, the rest escaped. */
export function goQuote(s: string): string {
  if (PLAIN.test(s)) return `"${s}"`;
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\x07') out += '\\a';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\v') out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Go's %q for a []string: `["a" "b"]`. */
export const goQuoteList = (list: readonly string[]): string => `[${list.map(goQuote).join(' ')}]`;

/** Upstream's CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`, empty lists left out. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups.length) parts.push(`APIGroups:${goQuoteList(r.apiGroups)}`);
  if (r.resources.length) parts.push(`Resources:${goQuoteList(r.resources)}`);
  if (r.nonResourceURLs.length) parts.push(`NonResourceURLs:${goQuoteList(r.nonResourceURLs)}`);
  if (r.resourceNames.length) parts.push(`ResourceNames:${goQuoteList(r.resourceNames)}`);
  if (r.verbs.length) parts.push(`Verbs:${goQuoteList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}
