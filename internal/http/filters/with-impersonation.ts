// internal/http/filters/with-impersonation owns acting as another user: `Impersonate-User`,
// `Impersonate-Group`, `Impersonate-Uid` and `Impersonate-Extra-*` headers, each allowed only
// when the requester may `impersonate` that user, group, uid or extra value. Runs after
// authentication and before authorization, so the impersonated user is what gets authorized.
// Imports: auth/user, authz, apierrors, naming, http/context, http/respond.

import type { Context, MiddlewareHandler, Next } from 'hono';
import { AUTHENTICATED_GROUP, ANONYMOUS_USER, SERVICE_ACCOUNTS_GROUP, UNAUTHENTICATED_GROUP, type UserInfo } from '../../auth/user.js';
import { authorize, type Attributes } from '../../authz/authorizer.js';
import type { AuthorizerSource } from '../../authz/chain.js';
import { errors } from '../../apierrors/status.js';
import type { Naming } from '../../naming/naming.js';
import type { Env } from '../context.js';
import { errorResponse } from '../respond.js';
import { requestChain } from './with-authorization.js';

export function withImpersonation(source: AuthorizerSource, naming: Naming): MiddlewareHandler<Env> {
  // uids and userextras live in the authentication group, named as this server names it.
  const authnGroup = naming.group('authentication.k8s.io');
  // The common case (no impersonation headers) goes on without a promise turn of its own.
  return (c, next) => {
    // Header lookups through hono: touching c.req.raw would build a full web Request per call.
    const userName = c.req.header('impersonate-user') ?? null;
    const groups = c.req.header('impersonate-group') ?? null;
    const uid = c.req.header('impersonate-uid') ?? null;
    if (userName === null && groups === null && uid === null) return next();
    return impersonate(c, next, userName, groups, uid);
  };

  async function impersonate(c: Context<Env>, next: Next, userName: string | null, groups: string | null, uid: string | null): Promise<Response | void> {
    const extras: Array<[string, string]> = [];
    if (userName !== null) {
      for (const [key, value] of Object.entries(c.req.header())) {
        if (!key.toLowerCase().startsWith('impersonate-extra-')) continue;
        let extraKey: string;
        try {
          extraKey = decodeURIComponent(key.slice('impersonate-extra-'.length));
        } catch {
          return errorResponse(c, errors.badRequest(`malformed impersonation extra header: ${key}`));
        }
        extras.push([extraKey, value]);
      }
    }
    if (userName === null) {
      if (groups !== null || uid !== null || extras.length > 0) {
        return errorResponse(c, errors.badRequest('requested impersonation of groups, uid or extra without impersonating a user'));
      }
      return next();
    }
    const requester = c.get('user');
    const authorizers = requestChain(c, source);
    const base: Omit<Attributes, 'verb' | 'resource' | 'name' | 'apiGroup' | 'subresource'> = {
      user: requester,
      isResourceRequest: true,
      path: '',
      namespace: '',
      apiVersion: '',
    };
    const check = async (resource: string, name: string, apiGroup = '', subresource = '', namespace = ''): Promise<boolean> =>
      (await authorize(authorizers, { ...base, verb: 'impersonate', resource, name, apiGroup, subresource, namespace })).decision === 'allow';

    // As upstream, a service account's user name is impersonated as that service account: the
    // right asked is `impersonate` on serviceaccounts/<name> in its namespace, and with no
    // groups given it gets its fixed groups.
    const serviceAccount = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(userName);
    if (serviceAccount) {
      const [, ns, sa] = serviceAccount as unknown as [string, string, string];
      if (!(await check('serviceaccounts', sa, '', '', ns))) {
        return errorResponse(c, errors.forbidden({ group: '', name: 'serviceaccounts' }, sa, `User "${requester.name}" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "${ns}"`));
      }
    } else if (!(await check('users', userName))) {
      return errorResponse(c, errors.forbidden({ group: '', name: 'users' }, userName, `User "${requester.name}" cannot impersonate resource "users" in API group "" at the cluster scope`));
    }
    const groupList = groups === null ? [] : groups.split(',').map((g) => g.trim()).filter(Boolean);
    for (const g of groupList) {
      if (!(await check('groups', g))) {
        return errorResponse(c, errors.forbidden({ group: '', name: 'groups' }, g, `User "${requester.name}" cannot impersonate resource "groups" in API group "" at the cluster scope`));
      }
    }
    if (uid !== null && !(await check('uids', uid, authnGroup))) {
      return errorResponse(c, errors.forbidden({ group: authnGroup, name: 'uids' }, uid, `User "${requester.name}" cannot impersonate resource "uids"`));
    }
    const extra: Record<string, string[]> = {};
    for (const [key, value] of extras) {
      if (!(await check('userextras', value, authnGroup, key))) {
        return errorResponse(c, errors.forbidden({ group: authnGroup, name: `userextras/${key}` }, value, `User "${requester.name}" cannot impersonate resource "userextras/${key}"`));
      }
      (extra[key] ??= []).push(value);
    }
    const anonymous = userName === ANONYMOUS_USER;
    const fixed = serviceAccount && groups === null ? [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${serviceAccount[1]}`] : groupList;
    // Upstream's rule: system:authenticated is added unless either all-users group was given
    // (system:unauthenticated for system:anonymous unless given).
    const implied = anonymous ? (fixed.includes(UNAUTHENTICATED_GROUP) ? [] : [UNAUTHENTICATED_GROUP]) : fixed.includes(AUTHENTICATED_GROUP) || fixed.includes(UNAUTHENTICATED_GROUP) ? [] : [AUTHENTICATED_GROUP];
    const impersonated: UserInfo = {
      name: userName,
      groups: [...fixed, ...implied].filter((g, i, a) => a.indexOf(g) === i),
      ...(uid !== null ? { uid } : {}),
      ...(Object.keys(extra).length ? { extra } : {}),
    };
    c.set('user', impersonated);
    await next();
  }
}
