import { describe, expect, it } from 'vitest';
import type { Attributes } from '../authorizer.js';
import { compactRules, compactString, covers, goQuote, rule, ruleAllows, type PolicyRule } from './rules.js';

const user = { name: 'u', groups: [] };
const res = (verb: string, apiGroup: string, resource: string, extra: Partial<Attributes> = {}): Attributes => ({
  user, verb, isResourceRequest: true, path: '', namespace: 'ns', apiGroup, apiVersion: 'v1', resource, subresource: '', name: '', ...extra,
});
const url = (verb: string, path: string): Attributes => ({ ...res(verb, '', ''), isResourceRequest: false, path });

describe('ruleAllows (upstream RuleAllows)', () => {
  const cases: Array<[string, PolicyRule, Attributes, boolean]> = [
    ['exact verb, core group, resource', rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }), res('get', '', 'pods', { name: 'p' }), true],
    ['other verb', rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }), res('list', '', 'pods'), false],
    ['verb *', rule({ verbs: ['*'], apiGroups: [''], resources: ['pods'] }), res('deletecollection', '', 'pods'), true],
    ['core group does not match apps', rule({ verbs: ['get'], apiGroups: [''], resources: ['deployments'] }), res('get', 'apps', 'deployments'), false],
    ['group *', rule({ verbs: ['get'], apiGroups: ['*'], resources: ['deployments'] }), res('get', 'apps', 'deployments'), true],
    ['resource * covers sub-resources', rule({ verbs: ['get'], apiGroups: [''], resources: ['*'] }), res('get', '', 'pods', { subresource: 'log' }), true],
    ['pods does not cover pods/log', rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }), res('get', '', 'pods', { subresource: 'log' }), false],
    ['pods/log exact', rule({ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }), res('get', '', 'pods', { subresource: 'log' }), true],
    ['pods/log does not cover pods', rule({ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }), res('get', '', 'pods'), false],
    ['*/scale covers deployments/scale', rule({ verbs: ['update'], apiGroups: ['apps'], resources: ['*/scale'] }), res('update', 'apps', 'deployments', { subresource: 'scale' }), true],
    ['*/scale does not cover deployments', rule({ verbs: ['update'], apiGroups: ['apps'], resources: ['*/scale'] }), res('update', 'apps', 'deployments'), false],
    ['*/scale does not cover deployments/status', rule({ verbs: ['update'], apiGroups: ['apps'], resources: ['*/scale'] }), res('update', 'apps', 'deployments', { subresource: 'status' }), false],
    ['*/scale does not cover a longer sub-resource ending in scale', rule({ verbs: ['get'], apiGroups: [''], resources: ['*/scale'] }), res('get', '', 'x', { subresource: 'rescale' }), false],
    ['pods/* is not a pattern upstream', rule({ verbs: ['get'], apiGroups: [''], resources: ['pods/*'] }), res('get', '', 'pods', { subresource: 'log' }), false],
    ['resourceNames: listed name', rule({ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }), res('get', '', 'configmaps', { name: 'a' }), true],
    ['resourceNames: other name', rule({ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }), res('get', '', 'configmaps', { name: 'b' }), false],
    ['resourceNames: nameless list does not match', rule({ verbs: ['list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }), res('list', '', 'configmaps'), false],
    ['resourceNames: nameless create does not match', rule({ verbs: ['create'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }), res('create', '', 'configmaps'), false],
    ['resourceNames: list with a name (field selector) matches', rule({ verbs: ['list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }), res('list', '', 'configmaps', { name: 'a' }), true],
    ['no resourceNames: any name', rule({ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }), res('get', '', 'configmaps', { name: 'zzz' }), true],
    ['non-resource exact', rule({ verbs: ['get'], nonResourceURLs: ['/healthz'] }), url('get', '/healthz'), true],
    ['non-resource exact is not a prefix', rule({ verbs: ['get'], nonResourceURLs: ['/healthz'] }), url('get', '/healthz/ping'), false],
    ['non-resource trailing *', rule({ verbs: ['get'], nonResourceURLs: ['/healthz/*'] }), url('get', '/healthz/ping'), true],
    ['non-resource prefix* without slash', rule({ verbs: ['get'], nonResourceURLs: ['/api*'] }), url('get', '/apis/apps'), true],
    ['non-resource *', rule({ verbs: ['get'], nonResourceURLs: ['*'] }), url('get', '/anything'), true],
    ['non-resource wrong verb', rule({ verbs: ['get'], nonResourceURLs: ['*'] }), url('post', '/anything'), false],
    ['resource rule never matches a URL', rule({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }), url('get', '/healthz'), false],
    ['URL rule never matches a resource', rule({ verbs: ['*'], nonResourceURLs: ['*'] }), res('get', '', 'pods'), false],
  ];
  it.each(cases)('%s', (_name, r, a, want) => {
    expect(ruleAllows(a, r)).toBe(want);
  });
});

describe('covers (upstream Covers)', () => {
  const cases: Array<[string, PolicyRule[], PolicyRule[], boolean]> = [
    ['same rule', [rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] })], [rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] })], true],
    ['more verbs', [rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] })], [rule({ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] })], false],
    ['split across owner rules', [rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }), rule({ verbs: ['delete'], apiGroups: [''], resources: ['pods'] })], [rule({ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] })], true],
    ['owner * verbs', [rule({ verbs: ['*'], apiGroups: [''], resources: ['pods'] })], [rule({ verbs: ['escalate'], apiGroups: [''], resources: ['pods'] })], true],
    ['servant * verb needs owner *', [rule({ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] })], [rule({ verbs: ['*'], apiGroups: [''], resources: ['pods'] })], false],
    ['servant * resource needs owner *', [rule({ verbs: ['get'], apiGroups: [''], resources: ['pods', 'services'] })], [rule({ verbs: ['get'], apiGroups: [''], resources: ['*'] })], false],
    ['owner * resources cover sub-resources', [rule({ verbs: ['get'], apiGroups: [''], resources: ['*'] })], [rule({ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] })], true],
    ['owner */log covers pods/log', [rule({ verbs: ['get'], apiGroups: [''], resources: ['*/log'] })], [rule({ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] })], true],
    ['owner pods does not cover pods/log', [rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] })], [rule({ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] })], false],
    ['owner group * covers any group', [rule({ verbs: ['get'], apiGroups: ['*'], resources: ['deployments'] })], [rule({ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] })], true],
    ['other group', [rule({ verbs: ['get'], apiGroups: [''], resources: ['deployments'] })], [rule({ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] })], false],
    ['owner names cover the same names', [rule({ verbs: ['get'], apiGroups: [''], resources: ['cm'], resourceNames: ['a', 'b'] })], [rule({ verbs: ['get'], apiGroups: [''], resources: ['cm'], resourceNames: ['a'] })], true],
    ['owner names do not cover all names', [rule({ verbs: ['get'], apiGroups: [''], resources: ['cm'], resourceNames: ['a'] })], [rule({ verbs: ['get'], apiGroups: [''], resources: ['cm'] })], false],
    ['owner without names covers names', [rule({ verbs: ['get'], apiGroups: [''], resources: ['cm'] })], [rule({ verbs: ['get'], apiGroups: [''], resources: ['cm'], resourceNames: ['x'] })], true],
    ['URL prefix covers', [rule({ verbs: ['get'], nonResourceURLs: ['/logs/*'] })], [rule({ verbs: ['get'], nonResourceURLs: ['/logs/a', '/logs/*'] })], true],
    ['URL exact does not cover a prefix', [rule({ verbs: ['get'], nonResourceURLs: ['/logs'] })], [rule({ verbs: ['get'], nonResourceURLs: ['/logs/*'] })], false],
    ['resource owner cannot cover a URL', [rule({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] })], [rule({ verbs: ['get'], nonResourceURLs: ['/metrics'] })], false],
    ['nothing held', [], [rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] })], false],
    ['empty servant', [], [], true],
  ];
  it.each(cases)('%s', (_name, owner, servant, want) => {
    expect(covers(owner, servant).covered).toBe(want);
  });

  it('reports the uncovered broken-down rules, compacted and printed as upstream', () => {
    const owner = [rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] })];
    const servant = [rule({ verbs: ['get', 'list', 'delete'], apiGroups: ['', 'apps'], resources: ['pods'] }), rule({ verbs: ['get'], nonResourceURLs: ['/metrics'] })];
    const { covered, missing } = covers(owner, servant);
    expect(covered).toBe(false);
    expect(missing).toHaveLength(6);
    const text = compactRules(missing).map(compactString).sort();
    expect(text).toEqual([
      '{APIGroups:[""], Resources:["pods"], Verbs:["list" "delete"]}',
      '{APIGroups:["apps"], Resources:["pods"], Verbs:["get" "list" "delete"]}',
      '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
    ]);
  });

  it('prints resource names and quotes as Go does', () => {
    expect(compactString(rule({ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a"b'] }))).toBe('{APIGroups:[""], Resources:["secrets"], ResourceNames:["a\\"b"], Verbs:["get"]}');
    expect(goQuote('tab\there')).toBe('"tab\\there"');
  });
});
