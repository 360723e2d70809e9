// internal/auth/user owns the identity every later stage sees: the user name, uid, groups and
// extra attributes, and the well-known user and group names.
// Imports: nothing from the project.

export interface UserInfo {
  readonly name: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';
export const MASTERS_GROUP = 'system:masters';
/** Every service account is in it, and in `system:serviceaccounts:<namespace>`. */
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

export const anonymousUser: UserInfo = { name: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };

/**
 * The users withAuthenticatedGroup made, by the user they were made from: authenticators that
 * keep their answer (per connection, per cached token) get the same object back on every
 * request instead of a copy. Users are read-only from here on.
 */
const authenticatedUsers = new WeakMap<UserInfo, UserInfo>();

/** Every authenticated (non-anonymous) user is also in system:authenticated, once. */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.name === ANONYMOUS_USER || user.groups.includes(AUTHENTICATED_GROUP)) return user;
  let out = authenticatedUsers.get(user);
  if (!out) authenticatedUsers.set(user, (out = { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] }));
  return out;
}
