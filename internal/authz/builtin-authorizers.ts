// internal/authz/builtin-authorizers owns the authorizers every configuration starts with:
// the privileged group (system:masters may do everything, before any policy is consulted),
// the basic-user grant (every authenticated user may ask about itself: create
// selfsubjectaccessreviews, selfsubjectrulesreviews and selfsubjectreviews, as upstream's
// bootstrap role system:basic-user bound to system:authenticated grants) and the public-info
// paths (health and version readable by anyone, as upstream's system:public-info-viewer role
// grants). Each can list what it allows, for SelfSubjectRulesReview.
// Imports: authorizer, auth/user, naming.

import { AUTHENTICATED_GROUP, MASTERS_GROUP, type UserInfo } from '../auth/user.js';
import type { Naming } from '../naming/naming.js';
import type { Attributes, Authorizer, Decision, Rules } from './authorizer.js';

const NO_OPINION: Decision = { decision: 'noOpinion', reason: '' };
type OwnRules = Omit<Rules, 'evaluationError'>;
const NO_RULES = (): OwnRules => ({ resourceRules: [], nonResourceRules: [], incomplete: false });

export const privilegedGroupAuthorizer: Authorizer = {
  name: 'privileged-group',
  authorize: (a: Attributes): Decision =>
    a.user.groups.includes(MASTERS_GROUP) ? { decision: 'allow', reason: `member of ${MASTERS_GROUP}` } : NO_OPINION,
  // What upstream's cluster-admin role (bound to system:masters) lists: everything.
  rulesFor: (user: UserInfo): OwnRules =>
    user.groups.includes(MASTERS_GROUP)
      ? {
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
          incomplete: false,
        }
      : NO_RULES(),
};

/** Upstream group name → the self-review resources system:basic-user may create in it. */
const SELF_REVIEWS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['authorization.k8s.io', ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']],
  ['authentication.k8s.io', ['selfsubjectreviews']],
];

/**
 * system:basic-user for system:authenticated: without it a user who is not in system:masters
 * could not even ask `kubectl auth can-i` or `kubectl auth whoami`. Group names come from the
 * naming, so `authorization.cluster.io` is matched under the default naming.
 */
export function basicUserAuthorizer(naming: Naming): Authorizer {
  const grants = SELF_REVIEWS.map(([group, resources]) => ({ group: naming.group(group), resources }));
  const reason = `allowed to ${AUTHENTICATED_GROUP} as upstream's system:basic-user role grants`;
  return {
    name: 'basic-user',
    authorize(a: Attributes): Decision {
      if (!a.isResourceRequest || a.verb !== 'create' || a.subresource !== '' || !a.user.groups.includes(AUTHENTICATED_GROUP)) return NO_OPINION;
      const allowed = grants.some((g) => g.group === a.apiGroup && g.resources.includes(a.resource));
      return allowed ? { decision: 'allow', reason } : NO_OPINION;
    },
    rulesFor: (user: UserInfo): OwnRules =>
      user.groups.includes(AUTHENTICATED_GROUP)
        ? { resourceRules: grants.map((g) => ({ verbs: ['create'], apiGroups: [g.group], resources: [...g.resources] })), nonResourceRules: [], incomplete: false }
        : NO_RULES(),
  };
}

const PUBLIC_PATHS = ['/livez', '/readyz', '/healthz', '/version'];

export const publicInfoAuthorizer: Authorizer = {
  name: 'public-info',
  authorize(a: Attributes): Decision {
    if (a.isResourceRequest || a.verb !== 'get') return NO_OPINION;
    const path = a.path.replace(/\/+$/, '') || '/';
    const isPublic = PUBLIC_PATHS.some((p) => path === p || path.startsWith(`${p}/`));
    return isPublic ? { decision: 'allow', reason: 'public information path' } : NO_OPINION;
  },
  // Each path and everything below it (`/livez/*` in RBAC's prefix notation), for everyone.
  rulesFor: (): OwnRules => ({
    resourceRules: [],
    nonResourceRules: [{ verbs: ['get'], nonResourceURLs: PUBLIC_PATHS.flatMap((p) => [p, `${p}/*`]) }],
    incomplete: false,
  }),
};
