import { describe, it, expect } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog } from '../schema/catalog.js';
import { resourceSpecs } from './registry-set.js';

describe('resourceSpecs', () => {
  // The watch cache is built before the registries (they read through it), so its per-resource
  // attributes come from the catalog alone.
  const catalog = new ApiCatalog(createNaming('cluster'));
  const specFor = resourceSpecs(catalog);

  it('gives each stored resource its labels and selectable fields', () => {
    const pod = { metadata: { name: 'p', namespace: 'ns', labels: { app: 'web' } }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } };
    const attrs = specFor('/registry/core/pods/')!.attributes(pod);
    expect(attrs.labels).toEqual({ app: 'web' });
    expect(attrs.fields).toMatchObject({ 'metadata.name': 'p', 'metadata.namespace': 'ns', 'spec.nodeName': 'n1', 'status.phase': 'Running' });
    const node = specFor('/registry/core/nodes/')!.attributes({ metadata: { name: 'n1' } });
    expect(node.fields).toEqual(expect.not.objectContaining({ 'metadata.namespace': expect.anything() }));
  });

  it('knows nothing of prefixes no resource is stored under', () => {
    expect(specFor('/registry/core/nothing/')).toBeUndefined();
    expect(specFor('/registry/events.k8s.io/events/')).toBeUndefined();
  });

  it('answers one spec object per prefix until the catalog changes', () => {
    // The watch cache matches what it derived for a local write by the spec's identity.
    const own = new ApiCatalog(createNaming('cluster'));
    const specs = resourceSpecs(own);
    const first = specs('/registry/core/pods/');
    expect(specs('/registry/core/pods/')).toBe(first);
    own.setCustomResources('widgets.example.com', []);
    const after = specs('/registry/core/pods/');
    expect(after).not.toBe(first);
    expect(after!.stamp).toBe(first!.stamp);
    expect(specs('/registry/core/pods/')).toBe(after);
  });
});
