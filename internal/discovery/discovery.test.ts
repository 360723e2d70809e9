import { describe, it, expect } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog } from '../schema/catalog.js';
import { Discovery, storageVersionHash } from './discovery.js';

describe('Discovery', () => {
  const naming = createNaming('kubernetes');
  const d = new Discovery(new ApiCatalog(naming), naming);

  it('lists named groups with their preferred versions', () => {
    const list = d.apiGroupList() as { groups: Array<{ name: string; preferredVersion: { groupVersion: string } }> };
    expect(list.groups.find((g) => g.name === 'apps')?.preferredVersion.groupVersion).toBe('apps/v1');
    expect(list.groups.find((g) => g.name === 'autoscaling')?.preferredVersion.groupVersion).toBe('autoscaling/v2');
    expect(list.groups.some((g) => g.name === '')).toBe(false);
  });

  it('lists resources and sub-resources of a group-version as upstream does', () => {
    const list = d.apiResourceList('apps', 'v1') as { resources: Array<Record<string, unknown>> };
    expect(list.resources).toContainEqual({
      name: 'deployments', singularName: 'deployment', namespaced: true, kind: 'Deployment',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'], shortNames: ['deploy'], categories: ['all'],
      storageVersionHash: '8aSe+NMegvE=',
    });
    expect(list.resources).toContainEqual({
      name: 'deployments/scale', singularName: '', namespaced: true, kind: 'Scale', verbs: ['get', 'patch', 'update'], group: 'autoscaling', version: 'v1',
    });
    expect(d.apiResourceList('apps', 'v9')).toBeUndefined();
  });

  it.each([
    // Values a real 1.35 kube-apiserver publishes.
    ['', 'v1', 'pods', 'xPOwRZ+Yhw8='],
    ['', 'v1', 'events', 'r2yiGXH7wu8='],
    ['', 'v1', 'configmaps', 'qFsyl6wFWjQ='],
    // autoscaling/v1 HPAs are stored as autoscaling/v2.
    ['autoscaling', 'v1', 'horizontalpodautoscalers', storageVersionHash('autoscaling', 'v2', 'HorizontalPodAutoscaler')],
    ['', 'v1', 'bindings', undefined],
    ['', 'v1', 'componentstatuses', undefined],
    ['authorization.k8s.io', 'v1', 'subjectaccessreviews', undefined],
  ])('gives %s/%s %s the storage version hash %s', (group, version, resource, hash) => {
    const list = d.apiResourceList(group, version) as { resources: Array<Record<string, unknown>> };
    expect(list.resources.find((r) => r.name === resource)!.storageVersionHash).toBe(hash);
  });

  it('builds the aggregated document with scopes and response kinds', () => {
    const agg = d.aggregated('api', 'v2') as { apiVersion: string; items: Array<{ versions: Array<{ resources: Array<Record<string, unknown>> }> }> };
    expect(agg.apiVersion).toBe('apidiscovery.k8s.io/v2');
    const pods = agg.items[0]!.versions[0]!.resources.find((r) => r.resource === 'pods')!;
    expect(pods).toMatchObject({ scope: 'Namespaced', singularResource: 'pod', responseKind: { group: '', version: 'v1', kind: 'Pod' }, shortNames: ['po'] });
  });
});
