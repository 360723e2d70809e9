// internal/authz/authorizer owns the authorization contract: request attributes in, a
// tri-state decision out (allow, deny, no opinion), and the union that asks authorizers in
// order until one decides. No opinion from all of them is a deny for a request; access reviews
// see the raw tri-state instead (decide). It also owns the rule-listing contract behind
// SelfSubjectRulesReview: an authorizer that can enumerate what it allows says so (rulesFor),
// one that cannot makes the answer incomplete, as upstream's RuleResolver union does.
// Imports: auth/user, selectors (types).

import type { UserInfo } from '../auth/user.js';
import type { FieldRequirement } from '../selectors/field-selector.js';
import type { LabelRequirement } from '../selectors/label-selector.js';

export interface Attributes {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  /** Non-resource requests: the URL path. */
  path: string;
  namespace: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  name: string;
  /**
   * The request's parsed field selector (list, watch, deletecollection), as upstream's
   * AuthorizeWithSelectors passes it; absent when the request had none or it did not parse.
   * Selectors only narrow a request, so an authorizer may ignore them (the webhook sends them).
   */
  fieldSelector?: readonly FieldRequirement[];
  /** The same for the label selector. */
  labelSelector?: readonly LabelRequirement[];
}

export type Decision = {
  decision: 'allow' | 'deny' | 'noOpinion';
  reason: string;
  /**
   * An error met on the way that did not stop the authorizer from answering (a webhook that
   * failed under its failure policy, or that reported one): access reviews report it.
   */
  evaluationError?: string;
};

/** A resource rule as SelfSubjectRulesReview reports it (upstream's ResourceRule). */
export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

/** A non-resource rule as SelfSubjectRulesReview reports it (upstream's NonResourceRule). */
export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs?: string[];
}

export interface Rules {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  /** True when some authorizer could not list everything it would allow. */
  incomplete: boolean;
  /** Errors met while listing; the rules found are still reported. */
  evaluationError?: string;
}

export interface Authorizer {
  readonly name: string;
  authorize(a: Attributes): Promise<Decision> | Decision;
  /**
   * What this authorizer allows `user` in `namespace`, or absent when it cannot enumerate its
   * decisions (a webhook could not): the union then reports the rules as incomplete.
   */
  rulesFor?(user: UserInfo, namespace: string): Promise<Omit<Rules, 'evaluationError'>> | Omit<Rules, 'evaluationError'>;
}

/** The union's raw answer for an access review: no opinion stays no opinion, errors are reported. */
export interface ReviewDecision extends Decision {
  /** Errors authorizers threw on the way (upstream's evaluationError); undefined when none did. */
  evaluationError?: string;
}

/** utilerrors.NewAggregate's message: one error bare, several as `[a, b]`. */
const aggregate = (messages: readonly string[]): string => (messages.length === 1 ? messages[0]! : `[${messages.join(', ')}]`);

/**
 * The request's decision: the first allow or deny, else a deny with every no-opinion reason,
 * one per line (upstream's union). Evaluation errors (a webhook that failed) ride along: on a
 * decision other than allow the request is a 500, as upstream's filter answers, not a 403.
 * Synchronous while every authorizer asked answers synchronously (RBAC, Node, ABAC and the
 * built-in ones do): the request goes on without a promise turn here; a webhook's answer
 * makes it a promise from there on.
 */
export function authorize(authorizers: readonly Authorizer[], a: Attributes): Promise<Decision> | Decision {
  return unionFrom(authorizers, a, 0, [], []);
}

function unionFrom(authorizers: readonly Authorizer[], a: Attributes, start: number, reasons: string[], failures: string[]): Promise<Decision> | Decision {
  for (let i = start; i < authorizers.length; i++) {
    const d = authorizers[i]!.authorize(a);
    if (d instanceof Promise) return d.then((answer) => (answer.decision !== 'noOpinion' ? answer : (noted(answer, reasons, failures), unionFrom(authorizers, a, i + 1, reasons, failures))));
    if (d.decision !== 'noOpinion') return d;
    noted(d, reasons, failures);
  }
  return { decision: 'deny', reason: reasons.join('\n'), ...(failures.length ? { evaluationError: aggregate(failures) } : {}) };
}

function noted(d: Decision, reasons: string[], failures: string[]): void {
  if (d.reason) reasons.push(d.reason);
  if (d.evaluationError) failures.push(d.evaluationError);
}


/**
 * The union as access reviews need it (upstream's unionAuthzHandler): the first allow or deny
 * wins with its reason; otherwise no opinion with every reason joined by newlines. An
 * authorizer that throws counts as no opinion and its message becomes the evaluation error, so
 * a review answers instead of failing; requests still go through authorize(), where a throw is
 * a 500 as upstream's filter answers an evaluation error. A no-opinion decision's own
 * evaluationError (a webhook that failed open) is collected the same way. As upstream, a later authorizer's
 * decision carries only its own error (ours return none with a decision), so earlier failures
 * are reported only when nobody decided.
 */
export async function decide(authorizers: readonly Authorizer[], a: Attributes): Promise<ReviewDecision> {
  const reasons: string[] = [];
  const failures: string[] = [];
  for (const z of authorizers) {
    let d: Decision;
    try {
      d = await z.authorize(a);
    } catch (e) {
      failures.push(e instanceof Error ? e.message : String(e));
      continue;
    }
    if (d.reason) reasons.push(d.reason);
    if (d.decision !== 'noOpinion') return d;
    if (d.evaluationError) failures.push(d.evaluationError);
  }
  const undecided: ReviewDecision = { decision: 'noOpinion', reason: reasons.join('\n') };
  if (failures.length) undecided.evaluationError = aggregate(failures);
  return undecided;
}

/**
 * Every authorizer's rules for `user` in `namespace`, concatenated in chain order (upstream's
 * union RuleResolver). Authorizers without rulesFor, and ones that throw, make the result
 * incomplete; a throw's message is the evaluation error.
 */
export async function rulesFor(authorizers: readonly Authorizer[], user: UserInfo, namespace: string): Promise<Rules> {
  const out: Rules = { resourceRules: [], nonResourceRules: [], incomplete: false };
  const failures: string[] = [];
  for (const z of authorizers) {
    if (!z.rulesFor) {
      out.incomplete = true;
      continue;
    }
    try {
      const r = await z.rulesFor(user, namespace);
      out.resourceRules.push(...r.resourceRules);
      out.nonResourceRules.push(...r.nonResourceRules);
      if (r.incomplete) out.incomplete = true;
    } catch (e) {
      out.incomplete = true;
      failures.push(`${z.name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (failures.length) out.evaluationError = aggregate(failures);
  return out;
}

/** Upstream's forbidden message: `User "x" cannot get resource "pods" in API group "" in the namespace "ns"`. */
export function forbiddenReason(a: Attributes): string {
  if (!a.isResourceRequest) return `User "${a.user.name}" cannot ${a.verb} path "${a.path}"`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  let text = `User "${a.user.name}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}"`;
  text += a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope';
  return text;
}
