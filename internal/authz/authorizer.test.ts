import { describe, it, expect } from 'vitest';
import { anonymousUser } from '../auth/user.js';
import { authorize, forbiddenReason, type Attributes } from './authorizer.js';
import { privilegedGroupAuthorizer, publicInfoAuthorizer } from './builtin-authorizers.js';

const base: Attributes = { user: anonymousUser, verb: 'get', isResourceRequest: false, path: '/', namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '' };
const admin = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
const alice = { name: 'alice', groups: ['system:authenticated'] };
const chain = [privilegedGroupAuthorizer, publicInfoAuthorizer];

describe('built-in authorizers', () => {
  it.each([
    ['anonymous GET /livez', { path: '/livez' }, 'allow'],
    ['anonymous GET /readyz/etcd', { path: '/readyz/etcd' }, 'allow'],
    ['anonymous GET /healthz', { path: '/healthz' }, 'allow'],
    ['anonymous GET /version/', { path: '/version/' }, 'allow'],
    ['anonymous POST /livez', { path: '/livez', verb: 'post' }, 'deny'],
    ['anonymous GET /livezz', { path: '/livezz' }, 'deny'],
    ['anonymous GET /api', { path: '/api' }, 'deny'],
    ['anonymous list pods', { isResourceRequest: true, verb: 'list', resource: 'pods' }, 'deny'],
    ['alice list pods', { user: alice, isResourceRequest: true, verb: 'list', resource: 'pods' }, 'deny'],
    ['admin delete namespaces', { user: admin, isResourceRequest: true, verb: 'delete', resource: 'namespaces' }, 'allow'],
    ['admin GET /metrics', { user: admin, path: '/metrics' }, 'allow'],
  ] as Array<[string, Partial<Attributes>, string]>)('%s → %s', async (_n, attrs, expected) => {
    expect((await authorize(chain, { ...base, ...attrs })).decision).toBe(expected);
  });

  it('words the forbidden reason as upstream does', () => {
    expect(forbiddenReason({ ...base, user: alice, isResourceRequest: true, verb: 'list', resource: 'pods', namespace: 'ns' })).toBe(
      'User "alice" cannot list resource "pods" in API group "" in the namespace "ns"',
    );
    expect(forbiddenReason({ ...base, user: alice, isResourceRequest: true, verb: 'get', resource: 'nodes', apiGroup: '' })).toBe(
      'User "alice" cannot get resource "nodes" in API group "" at the cluster scope',
    );
  });
});
