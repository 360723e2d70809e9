import { describe, it, expect } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog } from '../schema/catalog.js';
import { builtinSchemas } from '../schema/openapi-index.js';
import { OpenApiDocuments } from './openapi.js';

describe('OpenApiDocuments', () => {
  it('indexes one v3 document per group-version with content hashes', () => {
    const naming = createNaming('kubernetes');
    const docs = new OpenApiDocuments(new ApiCatalog(naming), builtinSchemas, naming, 'v1.35.0');
    const index = JSON.parse(docs.v3Index().toString()) as { paths: Record<string, { serverRelativeURL: string }> };
    expect(index.paths['apis/apps/v1']!.serverRelativeURL).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);
    const apps = JSON.parse(docs.v3('apis/apps/v1')!.toString()) as { components: { schemas: Record<string, { 'x-kubernetes-group-version-kind'?: unknown }> } };
    expect(apps.components.schemas['io.k8s.api.apps.v1.Deployment']!['x-kubernetes-group-version-kind']).toEqual([{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
    expect(apps.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']).toBeDefined();
    expect(docs.v3('apis/apps/v9')).toBeUndefined();
  });

  it('renames groups and extension keys in cluster naming', () => {
    const naming = createNaming('cluster');
    const docs = new OpenApiDocuments(new ApiCatalog(naming), builtinSchemas, naming, 'v1.35.0');
    const text = docs.v3('apis/rbac.authorization.cluster.io/v1')!.toString();
    expect(text).toContain('"x-cluster-group-version-kind":[{"group":"rbac.authorization.cluster.io"');
    const doc = JSON.parse(text) as { paths: Record<string, Record<string, { parameters: Array<{ name: string }>; 'x-kubernetes-group-version-kind': unknown }>>; components: { schemas: Record<string, unknown> } };
    expect(JSON.stringify(doc.components)).not.toContain('"x-kubernetes-');
    // kubectl probes the PATCH operation of a kind for the fieldValidation parameter.
    const patch = doc.paths['/apis/rbac.authorization.cluster.io/v1/namespaces/{namespace}/roles/{name}']!.patch!;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: 'rbac.authorization.cluster.io', version: 'v1', kind: 'Role' });
    expect(patch.parameters.map((p) => p.name)).toContain('fieldValidation');
    const v2 = JSON.parse(docs.v2().toString()) as { swagger: string; definitions: Record<string, unknown> };
    expect(v2.swagger).toBe('2.0');
    expect(JSON.stringify(v2.definitions['io.k8s.api.apps.v1.Deployment'])).toContain('#/definitions/io.k8s.api.apps.v1.DeploymentSpec');
  });
});
