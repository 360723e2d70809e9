import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { Authorizer, Attributes } from '../../authz/authorizer.js';
import { createNaming, NAMING_MODES } from '../../naming/naming.js';
import type { Env } from '../context.js';
import { withImpersonation } from './with-impersonation.js';
import { fixedChain } from '../../authz/chain.js';

/** Allows impersonating any user, and uids and extras only in the given authentication group. */
function authorizerFor(authnGroup: string): Authorizer {
  return {
    name: 'test',
    authorize: (a: Attributes) =>
      a.verb === 'impersonate' && (a.resource === 'users' || ((a.resource === 'uids' || a.resource === 'userextras') && a.apiGroup === authnGroup))
        ? { decision: 'allow', reason: '' }
        : { decision: 'noOpinion', reason: '' },
  };
}

function appFor(authorizer: Authorizer, mode: 'cluster' | 'kubernetes'): Hono<Env> {
  const app = new Hono<Env>();
  app.use('*', async (c, next) => {
    c.set('user', { name: 'requester', groups: ['system:authenticated'] });
    await next();
  });
  app.use('*', withImpersonation(fixedChain([authorizer]), createNaming(mode)));
  app.get('*', (c) => c.json(c.get('user')));
  return app;
}

describe('withImpersonation', () => {
  // uids and userextras are authorized in the authentication group as this server names it.
  it.each(NAMING_MODES)('checks uids and extras in the authentication group of the %s naming', async (mode) => {
    const group = createNaming(mode).group('authentication.k8s.io');
    const headers = { 'impersonate-user': 'bob', 'impersonate-uid': 'b-1', 'impersonate-extra-scope': 'x' };
    const allowed = await appFor(authorizerFor(group), mode).request('/', { headers });
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toMatchObject({ name: 'bob', uid: 'b-1', extra: { scope: ['x'] } });
    const other = mode === 'cluster' ? 'authentication.k8s.io' : 'authentication.cluster.io';
    const refused = await appFor(authorizerFor(other), mode).request('/', { headers });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { details: { group: string } }).details.group).toBe(group);
  });
});
