import { describe, it, expect } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog, unknownRuntimeConfigKeys } from './catalog.js';
import { builtinSchemas, SchemaIndex } from './openapi-index.js';
import { compareVersionPriority, stabilityOf } from './versions.js';

describe('versions', () => {
  it('orders GA before beta before alpha, higher numbers first', () => {
    expect(['v1alpha1', 'v1beta1', 'v1', 'v2', 'v2beta2', 'v1beta2', 'v10'].sort(compareVersionPriority)).toEqual([
      'v10',
      'v2',
      'v1',
      'v2beta2',
      'v1beta2',
      'v1beta1',
      'v1alpha1',
    ]);
    expect([stabilityOf('v1'), stabilityOf('v1beta3'), stabilityOf('v2alpha1')]).toEqual(['ga', 'beta', 'alpha']);
  });
});

describe('ApiCatalog', () => {
  const cluster = new ApiCatalog(createNaming('cluster'));
  const kube = new ApiCatalog(createNaming('kubernetes'));

  it('serves the GA groups with the configured naming and the core group first', () => {
    const names = cluster.groups().map((g) => g.name);
    expect(names[0]).toBe('');
    for (const g of ['apps', 'batch', 'autoscaling', 'policy', 'rbac.authorization.cluster.io', 'coordination.cluster.io',
      'apiextensions.cluster.io', 'flowcontrol.apiserver.cluster.io', 'admissionregistration.cluster.io']) {
      expect(names).toContain(g);
    }
    expect(names.some((n) => n.endsWith('k8s.io'))).toBe(false);
    expect(kube.groups().map((g) => g.name)).toContain('rbac.authorization.k8s.io');
  });

  it('prefers autoscaling/v2 and stores HPAs there, serving v1 as well', () => {
    expect(cluster.group('autoscaling')).toMatchObject({ versions: ['v2', 'v1'], preferredVersion: 'v2' });
    expect(cluster.resource('autoscaling', 'v1', 'horizontalpodautoscalers')?.storageVersion).toBe('v2');
  });

  it('leaves beta and alpha versions off by default and turns them on by policy', () => {
    expect(cluster.resource('networking.cluster.io', 'v1beta1', 'ipaddresses')).toBeUndefined();
    const all = new ApiCatalog(createNaming('cluster'), () => true);
    expect(all.resource('networking.cluster.io', 'v1beta1', 'ipaddresses')).toBeDefined();
    expect(all.resource('networking.cluster.io', 'v1', 'ipaddresses')?.storageVersion).toBe('v1');
  });

  it('finds every served resource by group, version and resource, custom ones while they are served', () => {
    const own = new ApiCatalog(createNaming('cluster'));
    for (const r of own.all()) expect(own.resource(r.group, r.version, r.resource)).toBe(r);
    // No decomposition but the exact one matches (segments from a URL may hold a decoded slash).
    expect(own.resource('', 'v1', 'pods')).toBeDefined();
    expect(own.resource('', 'v1/pods', '')).toBeUndefined();
    expect(own.resource('/v1', 'pods', '')).toBeUndefined();
    expect(own.resource('apps/v1', 'deployments', '')).toBeUndefined();
    const widget = { ...own.resource('apps', 'v1', 'deployments')!, group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' };
    own.setCustomResources('widgets.example.com', [widget]);
    expect(own.resource('example.com', 'v1', 'widgets')).toBe(widget);
    own.setCustomResources('widgets.example.com', []);
    expect(own.resource('example.com', 'v1', 'widgets')).toBeUndefined();
    expect(own.resource('apps', 'v1', 'deployments')?.kind).toBe('Deployment');
  });

  it('knows scope, kinds, verbs and sub-resources as upstream has them', () => {
    const deploy = kube.resource('apps', 'v1', 'deployments')!;
    expect(deploy).toMatchObject({ kind: 'Deployment', listKind: 'DeploymentList', namespaced: true, singularName: 'deployment' });
    expect(deploy.shortNames).toEqual(['deploy']);
    expect(deploy.categories).toEqual(['all']);
    expect(deploy.subresources.get('scale')).toMatchObject({ kind: 'Scale', group: 'autoscaling', version: 'v1' });
    expect(deploy.subresources.get('status')?.verbs).toEqual(['get', 'patch', 'update']);
    expect(kube.resource('', 'v1', 'namespaces')).toMatchObject({ namespaced: false, kind: 'Namespace' });
    expect(kube.resource('authorization.k8s.io', 'v1', 'subjectaccessreviews')?.verbs).toEqual(['create']);
    expect(kube.resourceForKind('', 'v1', 'Pod')?.resource).toBe('pods');
  });

  it('lists each stored resource once', () => {
    const stored = cluster.storedResources().map((r) => r.storageResource);
    expect(new Set(stored).size).toBe(stored.length);
    expect(stored).toContain('/configmaps');
    expect(stored).not.toContain('authorization.k8s.io/subjectaccessreviews');
    expect(stored.filter((s) => s === '/events')).toHaveLength(1);
    expect(stored).not.toContain('events.k8s.io/events');
  });

  it('serves events.k8s.io Events from the core event storage, as upstream', () => {
    for (const catalog of [cluster, kube]) {
      const core = catalog.resource('', 'v1', 'events')!;
      const events = catalog.resource(catalog.naming.group('events.k8s.io'), 'v1', 'events')!;
      expect(events).toMatchObject({ storageResource: '/events', storageVersion: 'v1', schemaName: 'io.k8s.api.events.v1.Event' });
      expect(catalog.storageOf(events)).toBe(core);
      expect(catalog.storageOf(core)).toBe(core);
    }
    const hpa = cluster.resource('autoscaling', 'v1', 'horizontalpodautoscalers')!;
    expect(cluster.storageOf(hpa)).toBe(cluster.resource('autoscaling', 'v2', 'horizontalpodautoscalers'));
  });

  it('keeps the core event storage when core Events are disabled and events.k8s.io is served', () => {
    const noCoreEvents = new ApiCatalog(createNaming('kubernetes'), (group, version, resource) => !(group === '' && resource === 'events') && version === 'v1');
    expect(noCoreEvents.resource('', 'v1', 'events')).toBeUndefined();
    const events = noCoreEvents.resource('events.k8s.io', 'v1', 'events')!;
    const storage = noCoreEvents.storageOf(events)!;
    expect(storage).toMatchObject({ group: '', version: 'v1', resource: 'events', apiVersion: 'v1', schemaName: 'io.k8s.api.core.v1.Event' });
    expect(noCoreEvents.storedResources()).toContain(storage);
    expect([...noCoreEvents.all()]).not.toContain(storage);
  });
});

describe('SchemaIndex', () => {
  it('resolves references and finds schemas by kind', () => {
    const name = builtinSchemas.schemaNameForKind('apps', 'v1', 'Deployment');
    expect(name).toBe('io.k8s.api.apps.v1.Deployment');
    const deployment = builtinSchemas.get(name!)!;
    const meta = builtinSchemas.resolve(deployment.properties!.metadata!);
    expect(meta.properties?.name?.type).toBe('string');
    expect(SchemaIndex.refName(deployment.properties!.spec!)).toBe('io.k8s.api.apps.v1.DeploymentSpec');
  });
});

describe('unknownRuntimeConfigKeys', () => {
  it.each([
    ['kubernetes', ['api/all', 'api/beta', '/v1', 'apps/v1', 'batch/v1/jobs', 'flowcontrol.apiserver.k8s.io/v1'], []],
    ['kubernetes', ['apps/v9', 'nosuch.example.com/v1', 'apps/v1/widgets', 'apps.cluster.io/v1'], ['apps/v9', 'nosuch.example.com/v1', 'apps/v1/widgets', 'apps.cluster.io/v1']],
    ['cluster', ['storage.cluster.io/v1', 'api/alpha'], []],
    ['cluster', ['storage.k8s.io/v1'], ['storage.k8s.io/v1']],
  ] as const)('under %s naming: %j → unknown %j', (naming, keys, unknown) => {
    expect(unknownRuntimeConfigKeys(createNaming(naming), keys)).toEqual(unknown);
  });
});
