// internal/audit/policy owns the audit policy (`audit.k8s.io/v1` Policy, `audit.cluster.io/v1`
// in the cluster naming): reading it from a YAML or JSON file with every problem named by its
// field path, and deciding for one request which level it is audited at and which stages are
// left out. Semantics follow upstream's policy checker: rules are tried in order and the first
// whose every non-empty matcher matches decides; no match means level None.
// Imports: auth/user (types), js-yaml.

import { readFileSync } from 'node:fs';
import { load as loadYaml } from 'js-yaml';
import type { UserInfo } from '../auth/user.js';

export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type Level = (typeof LEVELS)[number];
export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type Stage = (typeof STAGES)[number];

/** Index in LEVELS: a level includes everything of the levels before it. */
export const levelRank = (l: Level): number => LEVELS.indexOf(l);

export interface GroupResources {
  /** API group as served ('' = core). */
  group: string;
  /** `pods`, `pods/log`, `*`, `*\/status`, `pods/*`; empty = every resource of the group. */
  resources: string[];
  /** Object names; empty = any. */
  resourceNames: string[];
}

export interface PolicyRule {
  level: Level;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  /** '' matches cluster-scoped requests. */
  namespaces: string[];
  /** Exact paths, or prefixes ending in `*`. */
  nonResourceURLs: string[];
  omitStages: Stage[];
  omitManagedFields: boolean | undefined;
}

export interface Policy {
  omitStages: Stage[];
  omitManagedFields: boolean;
  rules: PolicyRule[];
}

/** What the policy checker needs to know about a request (the authenticated user, before impersonation). */
export interface PolicyAttributes {
  user: UserInfo | undefined;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  namespace: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  name: string;
}

export interface AuditDecision {
  level: Level;
  /** Policy-level and rule-level omitted stages together. */
  omitStages: ReadonlySet<Stage>;
  omitManagedFields: boolean;
}

export class PolicyError extends Error {
  override name = 'PolicyError';
}

const NONE: AuditDecision = { level: 'None', omitStages: new Set(), omitManagedFields: false };

/** The level and stages of one request: the first matching rule decides. */
export function evaluatePolicy(policy: Policy, attrs: PolicyAttributes): AuditDecision {
  for (const rule of policy.rules) {
    if (!ruleMatches(rule, attrs)) continue;
    return {
      level: rule.level,
      omitStages: new Set([...policy.omitStages, ...rule.omitStages]),
      omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
    };
  }
  return NONE;
}

function ruleMatches(r: PolicyRule, a: PolicyAttributes): boolean {
  if (r.users.length > 0 && !r.users.includes(a.user?.name ?? '')) return false;
  if (r.userGroups.length > 0 && !(a.user?.groups ?? []).some((g) => r.userGroups.includes(g))) return false;
  if (r.verbs.length > 0 && !r.verbs.includes(a.verb)) return false;
  if (r.namespaces.length > 0 || r.resources.length > 0) return resourceMatches(r, a);
  if (r.nonResourceURLs.length > 0) return nonResourceMatches(r, a);
  return true;
}

function nonResourceMatches(r: PolicyRule, a: PolicyAttributes): boolean {
  if (a.isResourceRequest) return false;
  return r.nonResourceURLs.some((u) => u === a.path || (u.endsWith('*') && a.path.startsWith(u.slice(0, -1))));
}

function resourceMatches(r: PolicyRule, a: PolicyAttributes): boolean {
  if (!a.isResourceRequest) return false;
  if (r.namespaces.length > 0 && !r.namespaces.includes(a.namespace)) return false;
  if (r.resources.length === 0) return true;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  for (const gr of r.resources) {
    if (gr.group !== a.apiGroup) continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(a.name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (a.subresource && res.startsWith('*/') && res.slice(2) === a.subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === a.resource) return true;
    }
  }
  return false;
}

// ---- reading and validating a policy file -------------------------------------------------

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads and validates a policy file (YAML or JSON). Problems are a PolicyError naming the file and field. */
export function loadPolicyFile(path: string, acceptedApiVersions: readonly string[]): Policy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new PolicyError(`audit policy file ${path}: ${(e as Error).message}`);
  }
  try {
    return parsePolicy(text, acceptedApiVersions);
  } catch (e) {
    throw new PolicyError(`audit policy file ${path}: ${(e as Error).message}`);
  }
}

/** Parses and validates policy text; every problem is reported with its field path. */
export function parsePolicy(text: string, acceptedApiVersions: readonly string[]): Policy {
  let doc: unknown;
  try {
    doc = loadYaml(text);
  } catch (e) {
    throw new PolicyError(`not valid YAML or JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  const problems: string[] = [];
  const bad = (path: string, msg: string) => problems.push(`${path}: ${msg}`);
  if (!isObj(doc)) throw new PolicyError('want a Policy object');
  checkFields(doc, '', ['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields'], bad);
  if (!acceptedApiVersions.includes(String(doc.apiVersion ?? ''))) {
    bad('apiVersion', `Unsupported value: ${JSON.stringify(doc.apiVersion ?? '')}: supported values: ${acceptedApiVersions.map((v) => JSON.stringify(v)).join(', ')}`);
  }
  if (doc.kind !== 'Policy') bad('kind', `Unsupported value: ${JSON.stringify(doc.kind ?? '')}: supported values: "Policy"`);
  const omitStages = stageList(doc.omitStages, 'omitStages', bad);
  const omitManagedFields = optionalBool(doc.omitManagedFields, 'omitManagedFields', bad) ?? false;
  const rules: PolicyRule[] = [];
  if (doc.rules === undefined || doc.rules === null || (Array.isArray(doc.rules) && doc.rules.length === 0)) {
    bad('rules', 'Required value: a policy needs at least one rule');
  } else if (!Array.isArray(doc.rules)) {
    bad('rules', 'must be a list');
  } else {
    doc.rules.forEach((raw, i) => {
      const rule = parseRule(raw, `rules[${i}]`, bad);
      if (rule) rules.push(rule);
    });
  }
  if (problems.length > 0) throw new PolicyError(problems.join('; '));
  return { omitStages, omitManagedFields, rules };
}

function parseRule(raw: unknown, path: string, bad: (p: string, m: string) => void): PolicyRule | undefined {
  if (!isObj(raw)) {
    bad(path, 'must be an object');
    return undefined;
  }
  checkFields(raw, path, ['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields'], bad);
  let level: Level = 'None';
  if (raw.level === undefined || raw.level === '') bad(`${path}.level`, `Required value: one of ${LEVELS.map((l) => JSON.stringify(l)).join(', ')}`);
  else if (!(LEVELS as readonly unknown[]).includes(raw.level)) bad(`${path}.level`, `Unsupported value: ${JSON.stringify(raw.level)}: supported values: ${LEVELS.map((l) => JSON.stringify(l)).join(', ')}`);
  else level = raw.level as Level;
  const users = stringList(raw.users, `${path}.users`, bad);
  const userGroups = stringList(raw.userGroups, `${path}.userGroups`, bad);
  const verbs = stringList(raw.verbs, `${path}.verbs`, bad);
  const namespaces = stringList(raw.namespaces, `${path}.namespaces`, bad);
  const nonResourceURLs = stringList(raw.nonResourceURLs, `${path}.nonResourceURLs`, bad);
  nonResourceURLs.forEach((u, j) => {
    const p = `${path}.nonResourceURLs[${j}]`;
    if (!u.startsWith('/')) bad(p, `Invalid value: ${JSON.stringify(u)}: non-resource URL must start with '/'`);
    else if (u.slice(0, -1).includes('*')) bad(p, `Invalid value: ${JSON.stringify(u)}: '*' is only allowed at the end`);
  });
  const resources: GroupResources[] = [];
  if (raw.resources !== undefined && raw.resources !== null) {
    if (!Array.isArray(raw.resources)) bad(`${path}.resources`, 'must be a list');
    else {
      raw.resources.forEach((gr, j) => {
        const p = `${path}.resources[${j}]`;
        if (!isObj(gr)) {
          bad(p, 'must be an object');
          return;
        }
        checkFields(gr, p, ['group', 'resources', 'resourceNames'], bad);
        const group = gr.group === undefined || gr.group === null ? '' : typeof gr.group === 'string' ? gr.group : (bad(`${p}.group`, 'must be a string'), '');
        if (group.includes('/')) bad(`${p}.group`, `Invalid value: ${JSON.stringify(group)}: a group name has no '/'`);
        const res = stringList(gr.resources, `${p}.resources`, bad);
        res.forEach((r, k) => {
          if (r.split('/').length > 2 || r === '' || r.endsWith('/') || r.startsWith('/')) bad(`${p}.resources[${k}]`, `Invalid value: ${JSON.stringify(r)}: want resource, resource/subresource, */subresource or resource/*`);
        });
        const names = stringList(gr.resourceNames, `${p}.resourceNames`, bad);
        if (names.length > 0 && res.length === 0) bad(`${p}.resourceNames`, 'Invalid value: using resourceNames requires at least one resource');
        resources.push({ group, resources: res, resourceNames: names });
      });
    }
  }
  if (nonResourceURLs.length > 0 && (resources.length > 0 || namespaces.length > 0)) {
    bad(`${path}.nonResourceURLs`, 'Invalid value: rules can apply to API resources or nonResourceURLs, but not both');
  }
  return {
    level,
    users,
    userGroups,
    verbs,
    resources,
    namespaces,
    nonResourceURLs,
    omitStages: stageList(raw.omitStages, `${path}.omitStages`, bad),
    omitManagedFields: optionalBool(raw.omitManagedFields, `${path}.omitManagedFields`, bad),
  };
}

function checkFields(o: Obj, path: string, known: readonly string[], bad: (p: string, m: string) => void): void {
  for (const k of Object.keys(o)) if (!known.includes(k)) bad(path ? `${path}.${k}` : k, 'unknown field');
}

function stringList(v: unknown, path: string, bad: (p: string, m: string) => void): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    bad(path, 'must be a list of strings');
    return [];
  }
  const out: string[] = [];
  v.forEach((s, i) => {
    if (typeof s === 'string') out.push(s);
    else bad(`${path}[${i}]`, 'must be a string');
  });
  return out;
}

function stageList(v: unknown, path: string, bad: (p: string, m: string) => void): Stage[] {
  const list = stringList(v, path, bad);
  const out: Stage[] = [];
  list.forEach((s, i) => {
    if ((STAGES as readonly string[]).includes(s)) out.push(s as Stage);
    else bad(`${path}[${i}]`, `Unsupported value: ${JSON.stringify(s)}: supported values: ${STAGES.map((x) => JSON.stringify(x)).join(', ')}`);
  });
  return out;
}

function optionalBool(v: unknown, path: string, bad: (p: string, m: string) => void): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') {
    bad(path, 'must be true or false');
    return undefined;
  }
  return v;
}
