// internal/authz/node/identity owns who counts as a node (upstream's default node identifier):
// a user named `system:node:<name>` in the group `system:nodes`. The same answer serves the
// Node authorizer and the NodeRestriction admission plugin. Imports: auth/user (types).

import type { UserInfo } from '../../auth/user.js';

export const NODES_GROUP = 'system:nodes';
export const NODE_USER_PREFIX = 'system:node:';

/**
 * The node's name for a node identity ('' when the name after the prefix is empty: a node
 * whose object is unknown), or undefined for any other user.
 */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.name.startsWith(NODE_USER_PREFIX) || !user.groups.includes(NODES_GROUP)) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
}
