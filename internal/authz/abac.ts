// internal/authz/abac owns attribute-based access control (--authorization-policy-file): the
// policy file (one JSON Policy object per line, read once at start) and the authorizer that
// allows a request when any line matches it, as upstream's ABAC mode does, including its
// SelfSubjectRulesReview listing. Imports: authorizer, auth/user, naming.

import { readFileSync } from 'node:fs';
import type { UserInfo } from '../auth/user.js';
import type { Naming } from '../naming/naming.js';
import type { Attributes, Authorizer, Decision, NonResourceRule, ResourceRule, Rules } from './authorizer.js';

/** One line's spec; an absent field is the empty string (matches only an empty attribute). */
export interface AbacPolicySpec {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  namespace: string;
  resource: string;
  nonResourcePath: string;
}

export class AbacPolicyError extends Error {
  override name = 'AbacPolicyError';
}

/** `abac.authorization.<label domain>/v1beta1`: upstream's group sits under kubernetes.io, not k8s.io. */
export const abacApiVersion = (naming: Naming): string => `abac.authorization.${naming.labelDomain}/v1beta1`;

const STRING_FIELDS = ['user', 'group', 'apiGroup', 'namespace', 'resource', 'nonResourcePath'] as const;

/**
 * Parses a policy file's text. Blank lines and lines starting with `#` are skipped; every other
 * line must be a Policy of this naming's v1beta1 (upstream also reads unversioned v0 lines; the
 * spec names only v1beta1). A bad line is an error naming the file and the line number.
 */
export function parseAbacPolicies(text: string, naming: Naming, source = 'policy file'): AbacPolicySpec[] {
  const apiVersion = abacApiVersion(naming);
  const out: AbacPolicySpec[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const fail = (why: string): never => {
      throw new AbacPolicyError(`error reading ${source}, line ${i + 1}: ${line}: ${why}`);
    };
    let doc: unknown;
    try {
      doc = JSON.parse(line);
    } catch (e) {
      fail(`not a JSON object: ${(e as Error).message}`);
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) fail('not a JSON object');
    const obj = doc as Record<string, unknown>;
    if (obj.apiVersion !== apiVersion) fail(`apiVersion must be ${apiVersion}, got ${JSON.stringify(obj.apiVersion ?? '')}`);
    if (obj.kind !== 'Policy') fail(`kind must be Policy, got ${JSON.stringify(obj.kind ?? '')}`);
    const spec = obj.spec;
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) fail('spec must be an object');
    const s = spec as Record<string, unknown>;
    const policy: AbacPolicySpec = { user: '', group: '', readonly: false, apiGroup: '', namespace: '', resource: '', nonResourcePath: '' };
    for (const f of STRING_FIELDS) {
      const v = s[f];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string') fail(`spec.${f} must be a string`);
      policy[f] = v as string;
    }
    if (s.readonly !== undefined && s.readonly !== null) {
      if (typeof s.readonly !== 'boolean') fail('spec.readonly must be a boolean');
      policy.readonly = s.readonly as boolean;
    }
    out.push(policy);
  }
  return out;
}

export function loadAbacPolicyFile(path: string, naming: Naming): AbacPolicySpec[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new AbacPolicyError(`cannot read the ABAC policy file ${path}: ${(e as Error).message}`);
  }
  return parseAbacPolicies(text, naming, `policy file ${path}`);
}

/**
 * A user or group of `*` matches everyone; a given user or group must match; a line naming
 * neither matches nobody (upstream's subjectMatches).
 */
function subjectMatches(p: AbacPolicySpec, user: UserInfo): boolean {
  let matched = false;
  if (p.user !== '') {
    if (p.user === '*') matched = true;
    else if (p.user === user.name) matched = true;
    else return false;
  }
  if (p.group !== '') {
    if (p.group === '*') matched = true;
    else if (user.groups.includes(p.group)) matched = true;
    else return false;
  }
  return matched;
}

const READ_ONLY_VERBS = new Set(['get', 'list', 'watch']);

function matches(p: AbacPolicySpec, a: Attributes): boolean {
  if (!subjectMatches(p, a.user)) return false;
  if (p.readonly && !READ_ONLY_VERBS.has(a.verb)) return false;
  if (a.isResourceRequest) {
    // As upstream, the resource is compared without its subresource.
    return (
      (p.namespace === '*' || p.namespace === a.namespace) &&
      (p.resource === '*' || p.resource === a.resource) &&
      (p.apiGroup === '*' || p.apiGroup === a.apiGroup)
    );
  }
  const np = p.nonResourcePath;
  if (np === '*' || np === a.path) return true;
  return np.endsWith('*') && a.path.startsWith(np.replace(/\*+$/, ''));
}

const verbsOf = (readonly: boolean): string[] => (readonly ? ['get', 'list', 'watch'] : ['*']);

/** An Authorizer that answers synchronously and always lists its rules. */
export interface AbacAuthorizer extends Authorizer {
  authorize(a: Attributes): Decision;
  rulesFor(user: UserInfo, namespace: string): Omit<Rules, 'evaluationError'>;
}

export function createAbacAuthorizer(policies: readonly AbacPolicySpec[]): AbacAuthorizer {
  return {
    name: 'abac',
    authorize(a: Attributes): Decision {
      for (const p of policies) if (matches(p, a)) return { decision: 'allow', reason: '' };
      return { decision: 'noOpinion', reason: 'No policy matched.' };
    },
    // Upstream's PolicyList.RulesFor: every line for this subject in this namespace (or `*`)
    // gives its resource rule and its non-resource rule; the listing is complete.
    rulesFor(user: UserInfo, namespace: string): Omit<Rules, 'evaluationError'> {
      const resourceRules: ResourceRule[] = [];
      const nonResourceRules: NonResourceRule[] = [];
      for (const p of policies) {
        if (!subjectMatches(p, user) || (p.namespace !== '*' && p.namespace !== namespace)) continue;
        if (p.resource !== '') resourceRules.push({ verbs: verbsOf(p.readonly), apiGroups: [p.apiGroup], resources: [p.resource] });
        if (p.nonResourcePath !== '') nonResourceRules.push({ verbs: verbsOf(p.readonly), nonResourceURLs: [p.nonResourcePath] });
      }
      return { resourceRules, nonResourceRules, incomplete: false };
    },
  };
}
