// Unit tests of the review kinds: validation, decisions and the answer shapes, without a server.
import { describe, it, expect } from 'vitest';
import { isStatusError } from '../../apierrors/status.js';
import type { Authenticator } from '../../auth/authenticator.js';
import { bearerTokenAuthenticator } from '../../auth/token-authenticator.js';
import type { UserInfo } from '../../auth/user.js';
import type { Authorizer } from '../../authz/authorizer.js';
import { basicUserAuthorizer, privilegedGroupAuthorizer, publicInfoAuthorizer } from '../../authz/builtin-authorizers.js';
import { createNaming } from '../../naming/naming.js';
import { answerReview, attributesFrom, goObjectMeta, reviewKindOf, type ReviewContext, type ReviewKind } from './reviews.js';
import { ApiCatalog } from '../../schema/catalog.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- review bodies are free-form JSON

const naming = createNaming('kubernetes');
const admin: UserInfo = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
const alice: UserInfo = { name: 'alice', uid: 'u-1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a', 'b'] } };
const NOW = new Date('2026-01-02T03:04:05.678Z');

const ctx = (user: UserInfo, over: Partial<ReviewContext> = {}): ReviewContext => ({
  user,
  namespace: '',
  authorizers: [privilegedGroupAuthorizer, basicUserAuthorizer(naming), publicInfoAuthorizer],
  authenticators: [],
  naming,
  now: () => NOW,
  ...over,
});

const review = (kind: ReviewKind, body: Obj): Obj => ({
  apiVersion: kind === 'SelfSubjectReview' || kind === 'TokenReview' ? 'authentication.k8s.io/v1' : 'authorization.k8s.io/v1',
  kind,
  ...body,
});

/** The thrown Status (code and message), or the answer. */
async function run(kind: ReviewKind, body: Obj, c: ReviewContext): Promise<Obj> {
  try {
    return await answerReview(kind, review(kind, body), c);
  } catch (e) {
    if (isStatusError(e)) return { code: e.code, message: e.status.message };
    throw e;
  }
}

const getPods = { resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'default' } };

describe('access reviews decide with the authorizer chain', () => {
  it.each([
    ['admin may get pods', 'SelfSubjectAccessReview', admin, { spec: getPods }, { allowed: true, reason: 'member of system:masters' }],
    ['alice may not get pods (no opinion: neither allowed nor denied)', 'SelfSubjectAccessReview', alice, { spec: getPods }, { allowed: false }],
    [
      'alice may create her own access reviews',
      'SelfSubjectAccessReview',
      alice,
      { spec: { resourceAttributes: { verb: 'create', group: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' } } },
      { allowed: true, reason: "allowed to system:authenticated as upstream's system:basic-user role grants" },
    ],
    ['anyone may get /healthz', 'SelfSubjectAccessReview', alice, { spec: { nonResourceAttributes: { path: '/healthz', verb: 'get' } } }, { allowed: true, reason: 'public information path' }],
    ['alice may not get /metrics', 'SelfSubjectAccessReview', alice, { spec: { nonResourceAttributes: { path: '/metrics', verb: 'get' } } }, { allowed: false }],
    ['SAR for a masters group', 'SubjectAccessReview', alice, { spec: { groups: ['system:masters'], ...getPods } }, { allowed: true, reason: 'member of system:masters' }],
    ['SAR for a plain user', 'SubjectAccessReview', admin, { spec: { user: 'bob', ...getPods } }, { allowed: false }],
    [
      'SAR adds no system:authenticated to the named subject',
      'SubjectAccessReview',
      admin,
      { spec: { user: 'bob', resourceAttributes: { verb: 'create', group: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' } } },
      { allowed: false },
    ],
    ['LSAR in the URL namespace', 'LocalSubjectAccessReview', admin, { spec: { groups: ['system:masters'], ...getPods } }, { allowed: true, reason: 'member of system:masters' }],
  ] as Array<[string, ReviewKind, UserInfo, Obj, Obj]>)('%s', async (_name, kind, user, body, status) => {
    const out = await run(kind, body, ctx(user, { namespace: 'default' }));
    expect(out.status).toEqual(status);
    expect(out).toMatchObject({ kind, spec: body.spec });
    expect(out.metadata).not.toHaveProperty('uid');
    expect(out.metadata).not.toHaveProperty('resourceVersion');
  });

  it('reports an explicit deny as denied, and a throwing authorizer as an evaluation error', async () => {
    const deny: Authorizer = { name: 'deny', authorize: () => ({ decision: 'deny', reason: 'no way' }) };
    expect((await run('SelfSubjectAccessReview', { spec: getPods }, ctx(admin, { authorizers: [deny, privilegedGroupAuthorizer] }))).status).toEqual({
      allowed: false,
      denied: true,
      reason: 'no way',
    });
    const broken: Authorizer = {
      name: 'broken',
      authorize: () => {
        throw new Error('webhook down');
      },
    };
    expect((await run('SelfSubjectAccessReview', { spec: getPods }, ctx(alice, { authorizers: [broken] }))).status).toEqual({ allowed: false, evaluationError: 'webhook down' });
  });

  it('passes the resource attributes through, with version "*" when unset', async () => {
    let seen: unknown;
    const spy: Authorizer = { name: 'spy', authorize: (a) => ((seen = a), { decision: 'noOpinion', reason: '' }) };
    await run('SelfSubjectAccessReview', { spec: { resourceAttributes: { verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale', name: 'web', namespace: 'ns' } } }, ctx(alice, { authorizers: [spy] }));
    expect(seen).toEqual({ user: alice, verb: 'update', isResourceRequest: true, path: '', namespace: 'ns', apiGroup: 'apps', apiVersion: '*', resource: 'deployments', subresource: 'scale', name: 'web' });
  });

  it.each([
    ['a raw field selector that does not parse', { fieldSelector: { rawSelector: 'a' } }, 'spec.resourceAttributes.fieldSelector ignored due to parse error'],
    ['field requirements partly unusable', { fieldSelector: { requirements: [{ key: 'a', operator: 'In', values: ['x'] }, { key: 'b', operator: 'Exists' }] } }, 'spec.resourceAttributes.fieldSelector partially ignored due to parse error'],
    ['an unknown label operator', { labelSelector: { requirements: [{ key: 'a', operator: 'Near' }] } }, 'spec.resourceAttributes.labelSelector ignored due to parse error'],
    ['usable selectors', { fieldSelector: { rawSelector: 'spec.nodeName=n1' }, labelSelector: { requirements: [{ key: 'app', operator: 'In', values: ['web'] }] } }, undefined],
  ])('selectors: %s', async (_name, selectors, evaluationError) => {
    const out = await run('SelfSubjectAccessReview', { spec: { resourceAttributes: { verb: 'list', resource: 'pods', ...selectors } } }, ctx(admin));
    expect(out.status.allowed).toBe(true);
    expect(out.status.evaluationError).toBe(evaluationError);
  });
});

describe('access review validation (422 with upstream messages, 400 where upstream storage refuses)', () => {
  const INVALID = (kind: string) => `${kind}.authorization.k8s.io "" is invalid: `;
  it.each([
    ['SSAR without attributes', 'SelfSubjectAccessReview', { spec: {} }, 422, `${INVALID('SelfSubjectAccessReview')}spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified`],
    [
      'SSAR with both attribute kinds',
      'SelfSubjectAccessReview',
      { spec: { ...getPods, nonResourceAttributes: { path: '/api', verb: 'get' } } },
      422,
      `${INVALID('SelfSubjectAccessReview')}spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/api", Verb:"get"}: cannot be specified in combination with resourceAttributes`,
    ],
    ['SSAR with a name', 'SelfSubjectAccessReview', { metadata: { name: 'x' }, spec: getPods }, 422, `${INVALID('SelfSubjectAccessReview')}metadata: Invalid value: v1.ObjectMeta{Name:"x", GenerateName:"",`],
    ['SAR without user or groups', 'SubjectAccessReview', { spec: getPods }, 422, `${INVALID('SubjectAccessReview')}spec.user: Invalid value: "": at least one of user or group must be specified`],
    [
      'LSAR for another namespace',
      'LocalSubjectAccessReview',
      { spec: { user: 'bob', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'other' } } },
      422,
      `${INVALID('LocalSubjectAccessReview')}spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace`,
    ],
    [
      'LSAR with non-resource attributes',
      'LocalSubjectAccessReview',
      { spec: { user: 'bob', nonResourceAttributes: { path: '/api', verb: 'get' } } },
      422,
      `${INVALID('LocalSubjectAccessReview')}spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/api", Verb:"get"}: disallowed on this kind of request`,
    ],
    [
      'a selector with both raw and requirements',
      'SelfSubjectAccessReview',
      { spec: { resourceAttributes: { verb: 'list', resource: 'pods', labelSelector: { rawSelector: 'a=b', requirements: [{ key: 'a', operator: 'Exists' }] } } } },
      422,
      `${INVALID('SelfSubjectAccessReview')}spec.resourceAttributes.labelSelector.rawSelector: Invalid value: "a=b": may not specified at the same time as requirements`,
    ],
    [
      'an empty selector',
      'SelfSubjectAccessReview',
      { spec: { resourceAttributes: { verb: 'list', resource: 'pods', fieldSelector: {} } } },
      422,
      `${INVALID('SelfSubjectAccessReview')}spec.resourceAttributes.fieldSelector.requirements: Required value: when spec.resourceAttributes.fieldSelector is specified, requirements or rawSelector is required`,
    ],
    [
      'a label requirement missing values',
      'SelfSubjectAccessReview',
      { spec: { resourceAttributes: { verb: 'list', resource: 'pods', labelSelector: { requirements: [{ key: 'a', operator: 'In' }] } } } },
      422,
      `${INVALID('SelfSubjectAccessReview')}spec.resourceAttributes.labelSelector.requirements[0].values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`,
    ],
    ['SSRR without a namespace', 'SelfSubjectRulesReview', { spec: {} }, 400, 'no namespace on request'],
    ['TokenReview without a token', 'TokenReview', { spec: {} }, 400, 'token is required for TokenReview in authentication'],
  ] as Array<[string, ReviewKind, Obj, number, string]>)('%s', async (_name, kind, body, code, message) => {
    const out = await run(kind, body, ctx(admin, { namespace: 'default' }));
    expect(out.code).toBe(code);
    expect(out.message.startsWith(message)).toBe(true);
  });

  it('accepts metadata that is empty as upstream compares it (null, empty maps, managedFields)', async () => {
    const out = await run('SelfSubjectAccessReview', { metadata: { creationTimestamp: null, labels: {}, managedFields: [{ manager: 'x' }] }, spec: getPods }, ctx(admin));
    expect(out.status.allowed).toBe(true);
  });

  it('prints metadata as Go does', () => {
    expect(goObjectMeta({ name: 'n', labels: { b: '2', a: '1' }, finalizers: ['f'], creationTimestamp: '2024-02-03T04:05:06Z' })).toBe(
      'v1.ObjectMeta{Name:"n", GenerateName:"", Namespace:"", SelfLink:"", UID:"", ResourceVersion:"", Generation:0, ' +
        'CreationTimestamp:time.Date(2024, time.February, 3, 4, 5, 6, 0, time.Local), DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil), ' +
        'Labels:map[string]string{"a":"1", "b":"2"}, Annotations:map[string]string(nil), OwnerReferences:[]v1.OwnerReference(nil), ' +
        'Finalizers:[]string{"f"}, ManagedFields:[]v1.ManagedFieldsEntry(nil)}',
    );
  });
});

describe('rules, identity and tokens', () => {
  it.each([
    [
      'system:masters: everything, plus the basic-user and public-info grants',
      admin,
      [
        { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
        { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] },
        { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
      ],
      [{ verbs: ['*'], nonResourceURLs: ['*'] }, { verbs: ['get'], nonResourceURLs: ['/livez', '/livez/*', '/readyz', '/readyz/*', '/healthz', '/healthz/*', '/version', '/version/*'] }],
    ],
    [
      'an authenticated user: the self reviews and the public paths',
      alice,
      [
        { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] },
        { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
      ],
      [{ verbs: ['get'], nonResourceURLs: ['/livez', '/livez/*', '/readyz', '/readyz/*', '/healthz', '/healthz/*', '/version', '/version/*'] }],
    ],
  ] as Array<[string, UserInfo, Obj[], Obj[]]>)('SelfSubjectRulesReview for %s', async (_name, user, resourceRules, nonResourceRules) => {
    const out = await run('SelfSubjectRulesReview', { spec: { namespace: 'default' } }, ctx(user));
    expect(out).toEqual({ kind: 'SelfSubjectRulesReview', apiVersion: 'authorization.k8s.io/v1', metadata: {}, spec: {}, status: { resourceRules, nonResourceRules, incomplete: false } });
  });

  it('SelfSubjectRulesReview is incomplete when an authorizer cannot list its rules', async () => {
    const opaque: Authorizer = { name: 'webhook', authorize: () => ({ decision: 'noOpinion', reason: '' }) };
    const out = await run('SelfSubjectRulesReview', { spec: { namespace: 'default' } }, ctx(alice, { authorizers: [opaque, publicInfoAuthorizer] }));
    expect(out.status.incomplete).toBe(true);
    expect(out.status.nonResourceRules).toHaveLength(1);
  });

  it('SelfSubjectReview reports the requester (username, uid, groups, extra) and a creation time', async () => {
    expect(await run('SelfSubjectReview', {}, ctx(alice))).toEqual({
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: '2026-01-02T03:04:05Z' },
      status: { userInfo: { username: 'alice', uid: 'u-1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a', 'b'] } } },
    });
  });

  it.each([
    ['no bearer-token authenticator', [], { user: {}, error: 'invalid bearer token' }],
    [
      'a token authenticator that knows the token',
      [{ name: 'tokens', authenticate: (r) => (r.header('Authorization') === 'Bearer t0k' ? { name: 'svc', groups: ['g'] } : null) }],
      { authenticated: true, user: { username: 'svc', groups: ['g', 'system:authenticated'] } },
    ],
    [
      'a token authenticator that rejects it',
      [{ name: 'tokens', authenticate: () => { throw new Error('token expired'); } }],
      { user: {}, error: 'token expired' },
    ],
  ] as Array<[string, Authenticator[], Obj]>)('TokenReview with %s', async (_name, authenticators, status) => {
    const out = await run('TokenReview', { spec: { token: 't0k' } }, ctx(admin, { authenticators }));
    expect(out).toEqual({ kind: 'TokenReview', apiVersion: 'authentication.k8s.io/v1', metadata: {}, spec: { token: 't0k' }, status });
  });

  it.each([
    ['no audiences: the API audiences', undefined, { authenticated: true, user: { username: 'svc', groups: ['system:authenticated'] }, audiences: ['api'] }],
    ['an audience the API has', ['other', 'api'], { authenticated: true, user: { username: 'svc', groups: ['system:authenticated'] }, audiences: ['api'] }],
    ['only audiences the API lacks', ['other'], { user: {}, error: 'invalid bearer token' }],
  ] as Array<[string, string[] | undefined, Obj]>)('TokenReview of an audience-agnostic token with %s', async (_name, audiences, status) => {
    const tokens = bearerTokenAuthenticator([{ name: 'static', authenticateToken: (t) => (t === 't0k' ? { name: 'svc', groups: [] } : null) }], ['api']);
    const spec = { token: 't0k', ...(audiences ? { audiences } : {}) };
    const out = await run('TokenReview', { spec }, ctx(admin, { authenticators: [tokens] }));
    expect(out.status).toEqual(status);
  });
});

describe('which resources are reviews', () => {
  it.each(['cluster', 'kubernetes'] as const)('under --naming=%s', (mode) => {
    const catalog = new ApiCatalog(createNaming(mode));
    const authz = createNaming(mode).group('authorization.k8s.io');
    expect(reviewKindOf(catalog.resource(authz, 'v1', 'selfsubjectaccessreviews')!)).toBe('SelfSubjectAccessReview');
    expect(reviewKindOf(catalog.resource(createNaming(mode).group('authentication.k8s.io'), 'v1', 'tokenreviews')!)).toBe('TokenReview');
    expect(reviewKindOf(catalog.resource('', 'v1', 'pods')!)).toBeUndefined();
  });
});

describe('selectors of an access review reach the authorizers', () => {
  it.each<[string, Record<string, unknown>, unknown, unknown]>([
    ['a raw field selector', { fieldSelector: { rawSelector: 'spec.nodeName=n1' } }, [{ field: 'spec.nodeName', operator: '=', value: 'n1' }], undefined],
    ['field requirements (In/NotIn with one value)', { fieldSelector: { requirements: [{ key: 'spec.nodeName', operator: 'NotIn', values: ['n2'] }, { key: 'x', operator: 'Exists' }] } }, [{ field: 'spec.nodeName', operator: '!=', value: 'n2' }], undefined],
    ['a raw label selector', { labelSelector: { rawSelector: 'app in (b,a)' } }, undefined, [{ key: 'app', operator: 'in', values: ['a', 'b'] }]],
    ['label requirements', { labelSelector: { requirements: [{ key: 'tier', operator: 'DoesNotExist' }, { key: 'app', operator: 'In', values: ['web'] }] } }, undefined, [{ key: 'tier', operator: '!', values: [] }, { key: 'app', operator: 'in', values: ['web'] }]],
    ['none', {}, undefined, undefined],
  ])('%s', (_what, selectors, field, label) => {
    const a = attributesFrom({ name: 'u', groups: [] }, { resourceAttributes: { verb: 'list', resource: 'pods', ...selectors } });
    expect(a.fieldSelector).toEqual(field);
    expect(a.labelSelector).toEqual(label);
  });
});
