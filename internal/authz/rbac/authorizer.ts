// internal/authz/rbac/authorizer owns the RBAC authorizer: allow when a rule bound to the user
// (at cluster scope, or in the request's namespace) matches the request, with upstream's
// reason (`RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "u"`); otherwise
// no opinion, whose reason carries only the errors met (missing roles), as upstream. It also
// lists a user's rules for SelfSubjectRulesReview. Answers come from the index; before the
// index has taken the cache's state (only while the cache primes), requests wait for it, as
// upstream serves only once its informers have synced. Default bindings of the bootstrap policy
// the store does not hold yet stand in for themselves (pending-defaults).
// Imports: authz/authorizer, auth/user, naming, watchcache, log, index, rules.

import type { UserInfo } from '../../auth/user.js';
import type { Logger } from '../../log/logger.js';
import type { Naming } from '../../naming/naming.js';
import { BoundedMap } from '../../memo/bounded-map.js';
import type { WatchCache } from '../../watchcache/watch-cache.js';
import type { Attributes, Authorizer, Decision, NonResourceRule, ResourceRule, Rules } from '../authorizer.js';
import { RbacIndex } from './index.js';
import { PendingDefaults } from './pending-defaults.js';
import { ruleAllows } from './rules.js';

export interface RbacAuthorizer extends Authorizer {
  readonly index: RbacIndex;
  /** True once the index holds the cache's state. */
  readonly ready: boolean;
  whenReady(): Promise<void>;
  rulesFor(user: UserInfo, namespace: string): Omit<Rules, 'evaluationError'>;
  stop(): void;
}

export interface RbacAuthorizerDeps {
  cache: WatchCache;
  naming: Naming;
  log: Logger;
  /** How long a request waits for a cache that is not primed yet (ms). */
  syncWaitMs?: number;
}

/** Decisions remembered per index generation (a busy client asks the same few questions). */
const REMEMBERED_DECISIONS = 4096;

/**
 * Everything of the request RBAC reads, each part length-prefixed so no two requests share a
 * key whatever their names contain. Not the API version, the selectors or the user's extra:
 * rules cannot name them.
 */
function decisionKey(a: Attributes): string {
  const part = (s: string): string => `${s.length}:${s}`;
  let key = `${part(a.user.name)}${a.user.groups.length}`;
  for (const g of a.user.groups) key += part(g);
  key += part(a.verb);
  if (!a.isResourceRequest) return `${key}N${part(a.path)}`;
  return `${key}R${part(a.namespace)}${part(a.apiGroup)}${part(a.resource)}${part(a.subresource)}${part(a.name)}`;
}

/** utilerrors.NewAggregate's text. */
const aggregate = (messages: readonly string[]): string => (messages.length === 1 ? messages[0]! : `[${messages.join(', ')}]`);

export function createRbacAuthorizer(deps: RbacAuthorizerDeps): RbacAuthorizer {
  const index = new RbacIndex(deps.cache, deps.naming, deps.log);
  index.start();
  const syncWaitMs = deps.syncWaitMs ?? 60_000;
  const defaults = new PendingDefaults(index, deps.naming);

  const decide = (a: Attributes): Decision => {
    let reason = '';
    const errors = index.visit(a.user, a.namespace, (source, rule) => {
      if (!ruleAllows(a, rule)) return true;
      reason = `RBAC: allowed by ${source()}`;
      return false;
    });
    if (reason) return { decision: 'allow', reason };
    const byDefault = defaults.allows(a);
    if (byDefault) return { decision: 'allow', reason: byDefault };
    return { decision: 'noOpinion', reason: errors.length ? `RBAC: ${aggregate(errors)}` : '' };
  };

  // The index changes only when a role or binding does; until then the same question has the
  // same answer, and visiting every rule of every group's bindings is the dearest part of a
  // service account's request.
  const remembered = new BoundedMap<string, Decision>(REMEMBERED_DECISIONS);
  let rememberedAt = index.generation;
  const decideRemembered = (a: Attributes): Decision => {
    if (rememberedAt !== index.generation) {
      remembered.clear();
      rememberedAt = index.generation;
    }
    const key = decisionKey(a);
    let d = remembered.get(key);
    if (!d) remembered.set(key, (d = Object.freeze(decide(a))));
    return d;
  };

  return {
    name: 'RBAC',
    index,
    get ready() {
      return index.ready;
    },
    whenReady: () => index.whenReady(),
    authorize(a: Attributes): Decision | Promise<Decision> {
      if (index.ready) return decideRemembered(a);
      return new Promise<Decision>((resolve) => {
        const timer = setTimeout(() => resolve({ decision: 'noOpinion', reason: 'RBAC: the authorization cache has not synced yet' }), syncWaitMs);
        timer.unref();
        void index.whenReady().then(() => {
          clearTimeout(timer);
          resolve(decideRemembered(a));
        });
      });
    },
    rulesFor(user: UserInfo, namespace: string) {
      const resourceRules: ResourceRule[] = [];
      const nonResourceRules: NonResourceRule[] = [];
      const found = index.rulesFor(user, namespace);
      const errors = found.errors;
      const rules = [...found.rules, ...defaults.rulesFor(user)];
      // Upstream reports the rules found with its errors as the evaluation error; this contract
      // carries no error beside rules, so they are logged instead.
      if (errors.length) deps.log.debug('rbac: rules listed with errors', { user: user.name, namespace, errors });
      for (const r of rules) {
        if (r.resources.length > 0) {
          const rr: ResourceRule = { verbs: [...r.verbs], apiGroups: [...r.apiGroups], resources: [...r.resources] };
          if (r.resourceNames.length > 0) rr.resourceNames = [...r.resourceNames];
          resourceRules.push(rr);
        }
        if (r.nonResourceURLs.length > 0) nonResourceRules.push({ verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs] });
      }
      return { resourceRules, nonResourceRules, incomplete: false };
    },
    stop: () => index.stop(),
  };
}
