// Matching as upstream's generic matcher: rules (operations, groups, versions, resources with
// wildcards and sub-resources, scope, resourceNames), exclusions first, selectors, Equivalent.
import { describe, it, expect } from 'vitest';
import type { AdmissionRequest } from '../admission.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import { matches, type MatchEnv } from './match.js';

const resource = (group: string, version: string, res: string, namespaced = true, storageResource = `${group}/${res}`): ResourceInfo =>
  ({ group, upstreamGroup: group, version, resource: res, kind: 'K', namespaced, storageResource }) as unknown as ResourceInfo;
const deployments = resource('apps', 'v1', 'deployments');
const req = (over: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  operation: 'CREATE', resource: deployments, subresource: '', namespace: 'ns', name: 'd', object: { metadata: { labels: { app: 'x' } } }, oldObject: undefined, user: { name: 'u', groups: [] }, dryRun: false, ...over,
});
const env = (labels: Record<string, Record<string, string>> = {}, equivalents: ResourceInfo[] = []): MatchEnv => ({ namespaceLabels: (n) => labels[n], equivalents: () => equivalents });
const rule = (r: Record<string, unknown> = {}) => ({ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'], ...r });

describe('matches', () => {
  it('rules: operations, groups, versions, resource wildcards and sub-resources, scope, names', () => {
    expect(matches({ resourceRules: [rule()] }, req(), env())).toBe(true);
    expect(matches({ resourceRules: [rule({ operations: ['UPDATE'] })] }, req(), env())).toBe(false);
    expect(matches({ resourceRules: [rule({ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'] })] }, req(), env())).toBe(true);
    expect(matches({ resourceRules: [rule({ resources: ['*'] })] }, req({ subresource: 'scale' }), env())).toBe(false);
    expect(matches({ resourceRules: [rule({ resources: ['*/*'] })] }, req({ subresource: 'scale' }), env())).toBe(true);
    expect(matches({ resourceRules: [rule({ resources: ['deployments/*'] })] }, req({ subresource: 'scale' }), env())).toBe(true);
    expect(matches({ resourceRules: [rule({ resources: ['*/scale'] })] }, req({ subresource: 'scale' }), env())).toBe(true);
    expect(matches({ resourceRules: [rule({ resources: ['*/scale'] })] }, req(), env())).toBe(false);
    expect(matches({ resourceRules: [rule({ scope: 'Cluster' })] }, req(), env())).toBe(false);
    expect(matches({ resourceRules: [rule({ scope: 'Namespaced' })] }, req(), env())).toBe(true);
    expect(matches({ resourceRules: [rule({ resourceNames: ['other'] })] }, req(), env())).toBe(false);
    expect(matches({ resourceRules: [rule({ resourceNames: ['d'] })] }, req(), env())).toBe(true);
  });

  it('exclusions win; no rules match nothing for a policy, everything for a binding', () => {
    expect(matches({ resourceRules: [rule()], excludeResourceRules: [rule({ resourceNames: ['d'] })] }, req(), env())).toBe(false);
    expect(matches({}, req(), env())).toBe(false);
    expect(matches({}, req(), env(), true)).toBe(true);
    expect(matches(undefined, req(), env(), true)).toBe(true);
  });

  it('namespace and object selectors', () => {
    const e = env({ ns: { team: 'a' } });
    expect(matches({ resourceRules: [rule()], namespaceSelector: { matchLabels: { team: 'a' } } }, req(), e)).toBe(true);
    expect(matches({ resourceRules: [rule()], namespaceSelector: { matchLabels: { team: 'b' } } }, req(), e)).toBe(false);
    // A cluster-scoped object is not narrowed by the namespace selector; a Namespace by its own labels.
    const nodes = resource('', 'v1', 'nodes', false);
    expect(matches({ resourceRules: [rule({ apiGroups: [''], resources: ['nodes'] })], namespaceSelector: { matchLabels: { team: 'b' } } }, req({ resource: nodes, namespace: '' }), e)).toBe(true);
    const namespaces = resource('', 'v1', 'namespaces', false);
    const nsReq = req({ resource: namespaces, namespace: '', object: { metadata: { labels: { team: 'b' } } } });
    expect(matches({ resourceRules: [rule({ apiGroups: [''], resources: ['namespaces'] })], namespaceSelector: { matchLabels: { team: 'b' } } }, nsReq, e)).toBe(true);
    expect(matches({ resourceRules: [rule()], objectSelector: { matchLabels: { app: 'x' } } }, req(), e)).toBe(true);
    expect(matches({ resourceRules: [rule()], objectSelector: { matchLabels: { app: 'y' } } }, req(), e)).toBe(false);
    expect(matches({ resourceRules: [rule({ operations: ['DELETE'] })], objectSelector: { matchLabels: { app: 'x' } } }, req({ operation: 'DELETE', object: undefined, oldObject: { metadata: { labels: { app: 'x' } } } }), e)).toBe(true);
  });

  it('matchPolicy Equivalent matches another version of the same stored resource; Exact does not', () => {
    const v2 = resource('autoscaling', 'v2', 'horizontalpodautoscalers', true, 'autoscaling/horizontalpodautoscalers');
    const v1 = resource('autoscaling', 'v1', 'horizontalpodautoscalers', true, 'autoscaling/horizontalpodautoscalers');
    const r = rule({ apiGroups: ['autoscaling'], apiVersions: ['v1'], resources: ['horizontalpodautoscalers'] });
    expect(matches({ resourceRules: [r], matchPolicy: 'Equivalent' }, req({ resource: v2 }), env({}, [v1]))).toBe(true);
    expect(matches({ resourceRules: [r], matchPolicy: 'Exact' }, req({ resource: v2 }), env({}, [v1]))).toBe(false);
  });
});
