import { describe, it, expect } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog } from '../schema/catalog.js';
import { builtinSchemas } from '../schema/openapi-index.js';
import { customResourceInfos } from '../controllers/crd-controller.js';
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
    // Every other extension key in the naming's spelling; the kind marker in both, with served group names.
    const components = JSON.stringify(doc.components);
    expect(components.match(/"x-kubernetes-[a-z-]+"/g)?.every((k) => k === '"x-kubernetes-group-version-kind"')).toBe(true);
    const role = doc.components.schemas['io.k8s.api.rbac.v1.Role'] as Record<string, unknown>;
    expect(role['x-kubernetes-group-version-kind']).toEqual([{ group: 'rbac.authorization.cluster.io', kind: 'Role', version: 'v1' }]);
    expect(role['x-cluster-group-version-kind']).toEqual(role['x-kubernetes-group-version-kind']);
    expect(components.match(/"x-kubernetes-group-version-kind"/g)).toHaveLength(components.match(/"x-cluster-group-version-kind"/g)!.length);
    // kubectl probes the PATCH operation of a kind for the fieldValidation parameter.
    const patch = doc.paths['/apis/rbac.authorization.cluster.io/v1/namespaces/{namespace}/roles/{name}']!.patch!;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: 'rbac.authorization.cluster.io', version: 'v1', kind: 'Role' });
    expect(patch.parameters.map((p) => p.name)).toContain('fieldValidation');
    const v2 = JSON.parse(docs.v2().toString()) as { swagger: string; definitions: Record<string, unknown> };
    expect(v2.swagger).toBe('2.0');
    expect(JSON.stringify(v2.definitions['io.k8s.api.apps.v1.Deployment'])).toContain('#/definitions/io.k8s.api.apps.v1.DeploymentSpec');
  });
});

describe('custom resource schemas', () => {
  const crd = (schema: Record<string, unknown> | undefined) =>
    customResourceInfos({
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [{ name: 'v1', served: true, storage: true, ...(schema ? { schema: { openAPIV3Schema: schema } } : {}) }],
      },
    });
  const docFor = (schema: Record<string, unknown> | undefined) => {
    const naming = createNaming('kubernetes');
    const catalog = new ApiCatalog(naming);
    catalog.setCustomResources('widgets.example.com', crd(schema));
    const docs = new OpenApiDocuments(catalog, builtinSchemas, naming, 'v1.35.0');
    type Doc = { paths: Record<string, Record<string, { responses: { '200': { content: { 'application/json': { schema: { $ref: string } } } } } }>>; components: { schemas: Record<string, any> } }; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form schemas
    return JSON.parse(docs.v3('apis/example.com/v1')!.toString()) as Doc;
  };

  it.each([
    ['a structural schema', { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } }, ['spec', 'metadata', 'apiVersion', 'kind']],
    ['a schema keeping unknown fields', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, ['metadata', 'apiVersion', 'kind']],
  ])('publishes %s with apiVersion, kind and metadata and a list kind, as upstream', (_name, schema, props) => {
    const doc = docFor(schema);
    const widget = doc.components.schemas['com.example.v1.Widget'];
    expect(Object.keys(widget.properties)).toEqual(props);
    expect(widget.properties.metadata.allOf).toEqual([{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }]);
    expect(widget['x-kubernetes-group-version-kind']).toEqual([{ group: 'example.com', version: 'v1', kind: 'Widget' }]);
    const list = doc.components.schemas['com.example.v1.WidgetList'];
    expect(list.properties.items.items).toEqual({ $ref: '#/components/schemas/com.example.v1.Widget' });
    expect(list['x-kubernetes-group-version-kind']).toEqual([{ group: 'example.com', version: 'v1', kind: 'WidgetList' }]);
    expect(doc.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta']).toBeDefined();
    const listOp = doc.paths['/apis/example.com/v1/namespaces/{namespace}/widgets']!.get!;
    expect(listOp.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/com.example.v1.WidgetList');
    expect(doc.paths['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}']!.get!.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/com.example.v1.Widget');
  });

  it('gives embedded resources apiVersion, kind and metadata, and requires the first two', () => {
    const doc = docFor({ type: 'object', properties: { spec: { type: 'object', properties: { template: { type: 'object', 'x-kubernetes-embedded-resource': true, required: ['spec'], properties: { spec: { type: 'object' } } } } } } });
    const template = doc.components.schemas['com.example.v1.Widget'].properties.spec.properties.template;
    expect(Object.keys(template.properties)).toEqual(['spec', 'apiVersion', 'kind', 'metadata']);
    expect(template.required).toEqual(['spec', 'kind', 'apiVersion']);
  });
});
