import { describe, expect, it } from 'vitest';
import { namespacePrefix, objectKey, resourcePrefix } from './keys.js';

describe('store keys', () => {
  it.each([
    ['core resource', { upstreamGroup: '', resource: 'pods', namespaced: true }, 'ns', 'p', '/registry/core/pods/', '/registry/core/pods/ns/p'],
    ['group resource', { upstreamGroup: 'apps', resource: 'deployments', namespaced: true }, 'ns', 'd', '/registry/apps/deployments/', '/registry/apps/deployments/ns/d'],
    ['cluster-scoped', { upstreamGroup: 'rbac.authorization.k8s.io', resource: 'clusterroles', namespaced: false }, '', 'admin', '/registry/rbac.authorization.k8s.io/clusterroles/', '/registry/rbac.authorization.k8s.io/clusterroles/admin'],
    ['custom resource', { upstreamGroup: 'ex.com', resource: 'widgets', namespaced: true }, 'g', 'w', '/registry/ex.com/widgets/', '/registry/ex.com/widgets/g/w'],
  ])('%s', (_name, r, ns, name, prefix, key) => {
    expect(resourcePrefix(r)).toBe(prefix);
    expect(objectKey(r, ns, name)).toBe(key);
    expect(namespacePrefix(r, 'ns1')).toBe(`${prefix}ns1/`);
  });

  it('answers the same prefix for the same resource, also after the remembered prefixes were cleared', () => {
    const pods = { upstreamGroup: '', resource: 'pods' };
    expect(resourcePrefix(pods)).toBe(resourcePrefix({ ...pods }));
    // More distinct resources than are remembered: each still gets its own prefix.
    for (let i = 0; i < 5000; i++) expect(resourcePrefix({ upstreamGroup: `g${i % 7}.ex.com`, resource: `r${i}` })).toBe(`/registry/g${i % 7}.ex.com/r${i}/`);
    expect(resourcePrefix(pods)).toBe('/registry/core/pods/');
    expect(resourcePrefix({ upstreamGroup: 'g3.ex.com', resource: 'r3' })).toBe('/registry/g3.ex.com/r3/');
  });
});
