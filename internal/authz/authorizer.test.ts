import { describe, it, expect } from 'vitest';
import { anonymousUser } from '../auth/user.js';
import { createNaming } from '../naming/naming.js';
import { authorize, decide, forbiddenReason, rulesFor, type Attributes, type Authorizer } from './authorizer.js';
import { basicUserAuthorizer, privilegedGroupAuthorizer, publicInfoAuthorizer } from './builtin-authorizers.js';

const base: Attributes = { user: anonymousUser, verb: 'get', isResourceRequest: false, path: '/', namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '' };
const admin = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
const alice = { name: 'alice', groups: ['system:authenticated'] };
const chain = [privilegedGroupAuthorizer, basicUserAuthorizer(createNaming('cluster')), publicInfoAuthorizer];
const selfReview = (user: Attributes['user'], group: string, resource: string, verb = 'create', subresource = ''): Partial<Attributes> => ({ user, isResourceRequest: true, verb, apiGroup: group, resource, subresource });

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
    // system:basic-user, bound to system:authenticated upstream, under the configured naming.
    ['alice create selfsubjectaccessreviews', selfReview(alice, 'authorization.cluster.io', 'selfsubjectaccessreviews'), 'allow'],
    ['alice create selfsubjectrulesreviews', selfReview(alice, 'authorization.cluster.io', 'selfsubjectrulesreviews'), 'allow'],
    ['alice create selfsubjectreviews', selfReview(alice, 'authentication.cluster.io', 'selfsubjectreviews'), 'allow'],
    ['alice create selfsubjectreviews in the upstream group name', selfReview(alice, 'authentication.k8s.io', 'selfsubjectreviews'), 'deny'],
    ['alice create subjectaccessreviews', selfReview(alice, 'authorization.cluster.io', 'subjectaccessreviews'), 'deny'],
    ['alice create tokenreviews', selfReview(alice, 'authentication.cluster.io', 'tokenreviews'), 'deny'],
    ['alice list selfsubjectaccessreviews', selfReview(alice, 'authorization.cluster.io', 'selfsubjectaccessreviews', 'list'), 'deny'],
    ['anonymous create selfsubjectaccessreviews', selfReview(anonymousUser, 'authorization.cluster.io', 'selfsubjectaccessreviews'), 'deny'],
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

describe('the union for reviews', () => {
  const decider = (decision: 'allow' | 'deny' | 'noOpinion', reason: string): Authorizer => ({ name: decision, authorize: () => ({ decision, reason }) });
  const thrower = (message: string): Authorizer => ({
    name: 'thrower',
    authorize: () => {
      throw new Error(message);
    },
  });

  it.each([
    ['first decision wins', [decider('noOpinion', 'n/a'), decider('deny', 'no'), decider('allow', 'yes')], { decision: 'deny', reason: 'no' }],
    ['no opinion stays no opinion, reasons joined by newlines', [decider('noOpinion', 'a'), decider('noOpinion', 'b')], { decision: 'noOpinion', reason: 'a\nb' }],
    ['a throw is an evaluation error', [thrower('down')], { decision: 'noOpinion', reason: '', evaluationError: 'down' }],
    ['several throws aggregate', [thrower('x'), thrower('y')], { decision: 'noOpinion', reason: '', evaluationError: '[x, y]' }],
    ['a later decision carries no earlier error', [thrower('x'), decider('allow', 'ok')], { decision: 'allow', reason: 'ok' }],
  ] as Array<[string, Authorizer[], object]>)('decide: %s', async (_name, authorizers, expected) => {
    expect(await decide(authorizers, base)).toEqual(expected);
  });

  it('rulesFor concatenates, and is incomplete when an authorizer cannot enumerate', async () => {
    const all = await rulesFor(chain, admin, 'default');
    expect(all.incomplete).toBe(false);
    expect(all.resourceRules[0]).toEqual({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
    expect(all.nonResourceRules[0]).toEqual({ verbs: ['*'], nonResourceURLs: ['*'] });
    const partial = await rulesFor([decider('noOpinion', ''), publicInfoAuthorizer], anonymousUser, 'default');
    expect(partial).toMatchObject({ incomplete: true, resourceRules: [], nonResourceRules: [{ verbs: ['get'] }] });
    const failing: Authorizer = { ...decider('noOpinion', ''), name: 'rbac', rulesFor: () => { throw new Error('cache not synced'); } };
    expect(await rulesFor([failing], alice, 'default')).toEqual({ resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'rbac: cache not synced' });
  });
});
