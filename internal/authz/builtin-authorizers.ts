// internal/authz/builtin-authorizers owns the authorizers every configuration starts with:
// the privileged group (system:masters may do everything, before any policy is consulted) and
// the public-info paths (health and version readable by anyone, as upstream's
// system:public-info-viewer role grants). Imports: authorizer, auth/user.

import { MASTERS_GROUP } from '../auth/user.js';
import type { Attributes, Authorizer, Decision } from './authorizer.js';

const NO_OPINION: Decision = { decision: 'noOpinion', reason: '' };

export const privilegedGroupAuthorizer: Authorizer = {
  name: 'privileged-group',
  authorize: (a: Attributes): Decision =>
    a.user.groups.includes(MASTERS_GROUP) ? { decision: 'allow', reason: `member of ${MASTERS_GROUP}` } : NO_OPINION,
};

const PUBLIC_PATHS = ['/livez', '/readyz', '/healthz', '/version'];

export const publicInfoAuthorizer: Authorizer = {
  name: 'public-info',
  authorize(a: Attributes): Decision {
    if (a.isResourceRequest || a.verb !== 'get') return NO_OPINION;
    const path = a.path.replace(/\/+$/, '') || '/';
    const isPublic = PUBLIC_PATHS.some((p) => path === p || path.startsWith(`${p}/`));
    return isPublic ? { decision: 'allow', reason: 'public information path' } : NO_OPINION;
  },
};
