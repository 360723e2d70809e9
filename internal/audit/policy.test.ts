import { describe, expect, it } from 'vitest';
import { evaluatePolicy, parsePolicy, PolicyError, type PolicyAttributes } from './policy.js';

const V = ['audit.k8s.io/v1'];

const alice = { name: 'alice', groups: ['devs', 'system:authenticated'] };
const bob = { name: 'bob', groups: ['ops', 'system:authenticated'] };

const req = (over: Partial<PolicyAttributes>): PolicyAttributes => ({
  user: alice,
  verb: 'get',
  isResourceRequest: true,
  path: '/api/v1/namespaces/default/pods/p1',
  namespace: 'default',
  apiGroup: '',
  resource: 'pods',
  subresource: '',
  name: 'p1',
  ...over,
});

const nonResource = (path: string, user = alice): PolicyAttributes => ({ user, verb: 'get', isResourceRequest: false, path, namespace: '', apiGroup: '', resource: '', subresource: '', name: '' });

const POLICY = parsePolicy(
  `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: [system:kube-proxy]
- level: RequestResponse
  userGroups: [ops]
  verbs: [delete]
- level: Metadata
  resources: [{group: "", resources: [secrets]}]
  omitStages: [ResponseStarted]
  omitManagedFields: true
- level: None
  resources: [{group: "", resources: [configmaps], resourceNames: [leader]}]
- level: Request
  resources: [{group: "", resources: [pods/log, "*/status"]}]
- level: RequestResponse
  resources: [{group: apps, resources: ["deployments/*"]}]
- level: Request
  namespaces: [kube-system]
- level: Metadata
  namespaces: [""]
  resources: [{group: rbac.authorization.cluster.io}]
- level: None
  nonResourceURLs: ["/healthz*", /version]
- level: Request
  resources: [{group: "", resources: ["*"]}]
- level: Metadata
`,
  V,
);

describe('evaluatePolicy: the first matching rule decides', () => {
  it.each<[string, PolicyAttributes, string]>([
    ['users: the named user is never audited', req({ user: { name: 'system:kube-proxy', groups: [] } }), 'None'],
    ['userGroups + verbs: an ops delete', req({ user: bob, verb: 'delete' }), 'RequestResponse'],
    ['userGroups + verbs: an ops get falls through to later rules', req({ user: bob }), 'Request'],
    ['verbs: a dev delete falls through (group does not match)', req({ verb: 'delete' }), 'Request'],
    ['resources: secrets at Metadata, before the catch-all core rule', req({ resource: 'secrets', name: 's' }), 'Metadata'],
    ['resourceNames: the named config map', req({ resource: 'configmaps', name: 'leader' }), 'None'],
    ['resourceNames: another config map falls through', req({ resource: 'configmaps', name: 'other' }), 'Request'],
    ['resource/subresource exact', req({ subresource: 'log' }), 'Request'],
    ['*/subresource matches any resource\'s status', req({ resource: 'services', subresource: 'status', name: 's' }), 'Request'],
    ['"pods" does not match pods/exec, "*" in the group does', req({ subresource: 'exec' }), 'Request'],
    ['resource/* matches the resource itself', req({ apiGroup: 'apps', resource: 'deployments', name: 'd' }), 'RequestResponse'],
    ['resource/* matches its sub-resources', req({ apiGroup: 'apps', resource: 'deployments', subresource: 'scale', name: 'd' }), 'RequestResponse'],
    ['resource/* does not match other resources of the group', req({ apiGroup: 'apps', resource: 'replicasets', name: 'r' }), 'Metadata'],
    ['namespaces alone: any resource in kube-system', req({ apiGroup: 'apps', resource: 'replicasets', namespace: 'kube-system' }), 'Request'],
    ['namespaces [""] + group without resources: cluster-scoped rbac', req({ apiGroup: 'rbac.authorization.cluster.io', resource: 'clusterroles', namespace: '', name: 'r' }), 'Metadata'],
    ['namespaces [""] does not match a namespaced request', req({ apiGroup: 'rbac.authorization.cluster.io', resource: 'roles', name: 'r' }), 'Metadata'],
    ['nonResourceURLs prefix', nonResource('/healthz/ping'), 'None'],
    ['nonResourceURLs exact', nonResource('/version'), 'None'],
    ['nonResourceURLs exact does not match a longer path', nonResource('/version/x'), 'Metadata'],
    ['resource rules never match non-resource requests', nonResource('/api'), 'Metadata'],
  ])('%s', (_name, attrs, level) => {
    expect(evaluatePolicy(POLICY, attrs).level).toBe(level);
  });

  it('nonResourceURLs rules never match resource requests', () => {
    const p = parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Request\n  nonResourceURLs: ["/*"]\n', V);
    expect(evaluatePolicy(p, req({})).level).toBe('None');
    expect(evaluatePolicy(p, nonResource('/metrics')).level).toBe('Request');
  });

  it('no matching rule means None; a user-less request matches only rules without user matchers', () => {
    const p = parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Request\n  userGroups: [devs]\n', V);
    expect(evaluatePolicy(p, req({ user: bob })).level).toBe('None');
    expect(evaluatePolicy(p, req({ user: undefined })).level).toBe('None');
    expect(evaluatePolicy(POLICY, req({ user: undefined, resource: 'secrets' })).level).toBe('Metadata');
  });

  it('omitStages: the policy\'s and the matching rule\'s together; omitManagedFields: the rule overrides the policy', () => {
    const secrets = evaluatePolicy(POLICY, req({ resource: 'secrets' }));
    expect([...secrets.omitStages].sort()).toEqual(['RequestReceived', 'ResponseStarted']);
    expect(secrets.omitManagedFields).toBe(true);
    const pods = evaluatePolicy(POLICY, req({}));
    expect([...pods.omitStages]).toEqual(['RequestReceived']);
    expect(pods.omitManagedFields).toBe(false);
    const p = parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nomitManagedFields: true\nrules:\n- level: Request\n  verbs: [get]\n  omitManagedFields: false\n- level: Request\n', V);
    expect(evaluatePolicy(p, req({})).omitManagedFields).toBe(false);
    expect(evaluatePolicy(p, req({ verb: 'list' })).omitManagedFields).toBe(true);
  });
});

describe('parsePolicy: problems name the field', () => {
  const head = 'apiVersion: audit.k8s.io/v1\nkind: Policy\n';
  it.each<[string, string, RegExp]>([
    ['no rules', head, /^rules: Required value/],
    ['empty rules', `${head}rules: []\n`, /^rules: Required value/],
    ['a rule without level', `${head}rules:\n- verbs: [get]\n`, /rules\[0\]\.level: Required value/],
    ['a bad level', `${head}rules:\n- level: Everything\n`, /rules\[0\]\.level: Unsupported value: "Everything"/],
    ['a bad policy stage', `${head}omitStages: [Started]\nrules:\n- level: None\n`, /omitStages\[0\]: Unsupported value: "Started"/],
    ['a bad rule stage', `${head}rules:\n- level: None\n- level: Metadata\n  omitStages: [RequestReceived, Done]\n`, /rules\[1\]\.omitStages\[1\]: Unsupported value: "Done"/],
    ['an unknown field', `${head}rules:\n- level: None\n  verb: [get]\n`, /rules\[0\]\.verb: unknown field/],
    ['resources and nonResourceURLs together', `${head}rules:\n- level: None\n  resources: [{group: ""}]\n  nonResourceURLs: [/x]\n`, /rules\[0\]\.nonResourceURLs: Invalid value: rules can apply to API resources or nonResourceURLs, but not both/],
    ['a relative non-resource URL', `${head}rules:\n- level: None\n  nonResourceURLs: [healthz]\n`, /rules\[0\]\.nonResourceURLs\[0\]: Invalid value: "healthz"/],
    ['resourceNames without resources', `${head}rules:\n- level: None\n  resources: [{group: "", resourceNames: [x]}]\n`, /rules\[0\]\.resources\[0\]\.resourceNames: Invalid value/],
    ['a wrong apiVersion', 'apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n', /^apiVersion: Unsupported value: "audit.k8s.io\/v1beta1"/],
    ['a wrong kind', 'apiVersion: audit.k8s.io/v1\nkind: Polcy\nrules:\n- level: None\n', /^kind: Unsupported value: "Polcy"/],
    ['a wrong type', `${head}omitManagedFields: yes please\nrules:\n- level: None\n`, /^omitManagedFields: must be true or false/],
    ['not YAML', '{rules: [', /not valid YAML or JSON/],
  ])('%s', (_name, text, message) => {
    expect(() => parsePolicy(text, V)).toThrow(PolicyError);
    expect(() => parsePolicy(text, V)).toThrow(message);
  });

  it('reads JSON too', () => {
    const p = parsePolicy(JSON.stringify({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'Metadata', verbs: ['create'] }] }), V);
    expect(evaluatePolicy(p, req({ verb: 'create' })).level).toBe('Metadata');
    expect(evaluatePolicy(p, req({})).level).toBe('None');
  });
});
