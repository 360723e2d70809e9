import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anonymousUser, type UserInfo } from '../auth/user.js';
import { createNaming, NAMING_MODES } from '../naming/naming.js';
import { AbacPolicyError, abacApiVersion, createAbacAuthorizer, loadAbacPolicyFile, parseAbacPolicies, type AbacPolicySpec } from './abac.js';
import type { Attributes } from './authorizer.js';

const naming = createNaming('kubernetes');
const line = (spec: Partial<AbacPolicySpec>, apiVersion = abacApiVersion(naming)) => JSON.stringify({ apiVersion, kind: 'Policy', spec });

const alice: UserInfo = { name: 'alice', groups: ['dev', 'system:authenticated'] };
const bob: UserInfo = { name: 'bob', groups: ['ops', 'system:authenticated'] };
const sa: UserInfo = { name: 'system:serviceaccount:kube-system:default', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'] };

const resource = (user: UserInfo, verb: string, namespace: string, res: string, apiGroup = '', subresource = ''): Attributes => ({
  user, verb, isResourceRequest: true, path: '', namespace, apiGroup, apiVersion: 'v1', resource: res, subresource, name: '',
});
const path = (user: UserInfo, verb: string, p: string): Attributes => ({
  user, verb, isResourceRequest: false, path: p, namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '',
});

describe('ABAC policy matching (spec §2.5)', () => {
  it.each<[string, Partial<AbacPolicySpec>, Attributes, boolean]>([
    ['a user line matches that user', { user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }, resource(alice, 'delete', 'ns', 'pods'), true],
    ['a user line does not match another user', { user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }, resource(bob, 'get', 'ns', 'pods'), false],
    ['user * matches everyone, anonymous too', { user: '*', namespace: '*', resource: '*', apiGroup: '*' }, resource(anonymousUser, 'get', 'ns', 'pods'), true],
    ['a group line matches members', { group: 'ops', namespace: '*', resource: '*', apiGroup: '*' }, resource(bob, 'get', 'ns', 'pods'), true],
    ['a group line does not match non-members', { group: 'ops', namespace: '*', resource: '*', apiGroup: '*' }, resource(alice, 'get', 'ns', 'pods'), false],
    ['user and group must both match', { user: 'alice', group: 'ops', namespace: '*', resource: '*', apiGroup: '*' }, resource(alice, 'get', 'ns', 'pods'), false],
    ['a line naming neither user nor group matches nobody', { namespace: '*', resource: '*', apiGroup: '*' }, resource(alice, 'get', 'ns', 'pods'), false],
    ['system:authenticated matches every authenticated user', { group: 'system:authenticated', namespace: '*', resource: '*', apiGroup: '*', readonly: true }, resource(sa, 'list', 'ns', 'pods'), true],
    ['system:authenticated does not match anonymous', { group: 'system:authenticated', namespace: '*', resource: '*', apiGroup: '*' }, resource(anonymousUser, 'get', 'ns', 'pods'), false],
    ['system:unauthenticated matches anonymous', { group: 'system:unauthenticated', nonResourcePath: '/version' }, path(anonymousUser, 'get', '/version'), true],
    ['a service-account user name', { user: 'system:serviceaccount:kube-system:default', namespace: '*', resource: '*', apiGroup: '*' }, resource(sa, 'create', 'x', 'secrets'), true],
    ['readonly allows get', { user: 'alice', namespace: 'ns', resource: 'pods', apiGroup: '', readonly: true }, resource(alice, 'get', 'ns', 'pods'), true],
    ['readonly allows list', { user: 'alice', namespace: 'ns', resource: 'pods', readonly: true }, resource(alice, 'list', 'ns', 'pods'), true],
    ['readonly allows watch', { user: 'alice', namespace: 'ns', resource: 'pods', readonly: true }, resource(alice, 'watch', 'ns', 'pods'), true],
    ['readonly refuses create', { user: 'alice', namespace: 'ns', resource: 'pods', readonly: true }, resource(alice, 'create', 'ns', 'pods'), false],
    ['readonly refuses patch', { user: 'alice', namespace: 'ns', resource: 'pods', readonly: true }, resource(alice, 'patch', 'ns', 'pods'), false],
    ['another namespace does not match', { user: 'alice', namespace: 'ns', resource: 'pods' }, resource(alice, 'get', 'other', 'pods'), false],
    ['namespace * matches cluster-scoped requests too', { user: 'alice', namespace: '*', resource: 'nodes' }, resource(alice, 'get', '', 'nodes'), true],
    ['an absent namespace matches only the empty (cluster) namespace', { user: 'alice', resource: 'nodes' }, resource(alice, 'get', '', 'nodes'), true],
    ['an absent namespace does not match a namespaced request', { user: 'alice', resource: 'pods' }, resource(alice, 'get', 'ns', 'pods'), false],
    ['another resource does not match', { user: 'alice', namespace: '*', resource: 'pods' }, resource(alice, 'get', 'ns', 'secrets'), false],
    ['the resource matches whatever the subresource', { user: 'alice', namespace: '*', resource: 'pods' }, resource(alice, 'get', 'ns', 'pods', '', 'log'), true],
    ['an absent apiGroup is the core group only', { user: 'alice', namespace: '*', resource: '*' }, resource(alice, 'get', 'ns', 'deployments', 'apps'), false],
    ['apiGroup * matches every group', { user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }, resource(alice, 'get', 'ns', 'deployments', 'apps'), true],
    ['a named apiGroup', { user: 'alice', namespace: '*', resource: 'deployments', apiGroup: 'apps' }, resource(alice, 'get', 'ns', 'deployments', 'apps'), true],
    ['a resource line does not match a path', { user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }, path(alice, 'get', '/api'), false],
    ['nonResourcePath * matches every path', { user: 'alice', nonResourcePath: '*' }, path(alice, 'get', '/metrics'), true],
    ['an exact nonResourcePath', { user: 'alice', nonResourcePath: '/version' }, path(alice, 'get', '/version'), true],
    ['an exact nonResourcePath does not match below it', { user: 'alice', nonResourcePath: '/version' }, path(alice, 'get', '/version/x'), false],
    ['/prefix/* matches subpaths', { user: 'alice', nonResourcePath: '/apis/*' }, path(alice, 'get', '/apis/apps/v1'), true],
    ['/prefix/* does not match another prefix', { user: 'alice', nonResourcePath: '/apis/*' }, path(alice, 'get', '/api/v1'), false],
    ['readonly paths: get only', { user: 'alice', nonResourcePath: '*', readonly: true }, path(alice, 'get', '/healthz'), true],
    ['readonly paths: post refused', { user: 'alice', nonResourcePath: '*', readonly: true }, path(alice, 'post', '/healthz'), false],
    ['a path line does not match a resource request', { user: 'alice', nonResourcePath: '*' }, resource(alice, 'get', 'ns', 'pods'), false],
  ])('%s', (_name, spec, attrs, allowed) => {
    const z = createAbacAuthorizer(parseAbacPolicies(line(spec), naming));
    expect(z.authorize(attrs)).toEqual(allowed ? { decision: 'allow', reason: '' } : { decision: 'noOpinion', reason: 'No policy matched.' });
  });

  it('allows when any line matches', () => {
    const text = [line({ user: 'bob', namespace: '*', resource: '*' }), line({ user: 'alice', namespace: 'ns', resource: 'pods' })].join('\n');
    const z = createAbacAuthorizer(parseAbacPolicies(text, naming));
    expect(z.authorize(resource(alice, 'get', 'ns', 'pods')).decision).toBe('allow');
    expect(z.authorize(resource(alice, 'get', 'ns', 'secrets')).decision).toBe('noOpinion');
  });
});

describe('ABAC policy file', () => {
  it.each(NAMING_MODES)('reads lines of abac.authorization.<label domain>/v1beta1 under the %s naming, skipping blank and # lines', (mode) => {
    const n = createNaming(mode);
    expect(abacApiVersion(n)).toBe(mode === 'cluster' ? 'abac.authorization.cluster.io/v1beta1' : 'abac.authorization.kubernetes.io/v1beta1');
    const text = `# team policy\n\n   \n${line({ user: 'alice', readonly: true }, abacApiVersion(n))}\r\n  # indented comment\n${line({ group: 'ops' }, abacApiVersion(n))}\n`;
    expect(parseAbacPolicies(text, n)).toEqual([
      { user: 'alice', group: '', readonly: true, apiGroup: '', namespace: '', resource: '', nonResourcePath: '' },
      { user: '', group: 'ops', readonly: false, apiGroup: '', namespace: '', resource: '', nonResourcePath: '' },
    ]);
  });

  it.each([
    ['not JSON', '{"apiVersion":', /line 3: .*not a JSON object/],
    ['a JSON list', '[]', /line 3: \[\]: not a JSON object/],
    ['the other naming\'s group', line({ user: 'a' }, 'abac.authorization.cluster.io/v1beta1'), /line 3: .*apiVersion must be abac\.authorization\.kubernetes\.io\/v1beta1, got "abac\.authorization\.cluster\.io\/v1beta1"/],
    ['an unversioned (v0) line', JSON.stringify({ user: 'a' }), /line 3: .*apiVersion must be/],
    ['another kind', JSON.stringify({ apiVersion: abacApiVersion(naming), kind: 'Role', spec: {} }), /line 3: .*kind must be Policy, got "Role"/],
    ['no spec', JSON.stringify({ apiVersion: abacApiVersion(naming), kind: 'Policy' }), /line 3: .*spec must be an object/],
    ['a non-string user', JSON.stringify({ apiVersion: abacApiVersion(naming), kind: 'Policy', spec: { user: 1 } }), /line 3: .*spec\.user must be a string/],
    ['a non-boolean readonly', JSON.stringify({ apiVersion: abacApiVersion(naming), kind: 'Policy', spec: { user: 'a', readonly: 'yes' } }), /line 3: .*spec\.readonly must be a boolean/],
  ])('refuses %s, naming the line', (_name, bad, message) => {
    const text = `${line({ user: 'ok' })}\n# fine\n${bad}\n${line({ user: 'ok' })}`;
    expect(() => parseAbacPolicies(text, naming)).toThrow(AbacPolicyError);
    expect(() => parseAbacPolicies(text, naming)).toThrow(message);
  });

  it('names the file, and a missing file is an error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'abac-'));
    const file = join(dir, 'policy.jsonl');
    writeFileSync(file, `${line({ user: 'a' })}\nnope\n`);
    expect(() => loadAbacPolicyFile(file, naming)).toThrow(`error reading policy file ${file}, line 2: nope:`);
    expect(() => loadAbacPolicyFile(join(dir, 'missing'), naming)).toThrow(/cannot read the ABAC policy file/);
  });
});

describe('ABAC rules for SelfSubjectRulesReview', () => {
  const text = [
    line({ user: 'alice', namespace: 'ns', resource: 'pods', apiGroup: '', readonly: true }),
    line({ user: 'alice', namespace: '*', resource: 'deployments', apiGroup: 'apps' }),
    line({ group: 'system:authenticated', namespace: '*', nonResourcePath: '/version' , readonly: true }),
    line({ user: 'alice', namespace: 'other', resource: 'secrets' }),
    line({ user: 'bob', namespace: '*', resource: '*', apiGroup: '*' }),
    // Upstream lists a path rule only when the line's namespace also matches.
    line({ user: 'alice', nonResourcePath: '/metrics' }),
  ].join('\n');
  const z = createAbacAuthorizer(parseAbacPolicies(text, naming));

  it('lists the subject\'s lines for the namespace, as upstream\'s RulesFor', () => {
    expect(z.rulesFor(alice, 'ns')).toEqual({
      resourceRules: [
        { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] },
        { verbs: ['*'], apiGroups: ['apps'], resources: ['deployments'] },
      ],
      nonResourceRules: [{ verbs: ['get', 'list', 'watch'], nonResourceURLs: ['/version'] }],
      incomplete: false,
    });
    expect(z.rulesFor(alice, '')).toEqual({
      resourceRules: [{ verbs: ['*'], apiGroups: ['apps'], resources: ['deployments'] }],
      nonResourceRules: [{ verbs: ['get', 'list', 'watch'], nonResourceURLs: ['/version'] }, { verbs: ['*'], nonResourceURLs: ['/metrics'] }],
      incomplete: false,
    });
    expect(z.rulesFor(anonymousUser, 'ns')).toEqual({ resourceRules: [], nonResourceRules: [], incomplete: false });
  });
});
