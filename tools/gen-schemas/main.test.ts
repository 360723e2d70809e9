import { describe, it, expect } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, dirname } from 'node:path';
import { buildCatalog, generate } from './main.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const shared = join(root, '..', 'shared', 'schemas');

describe('buildCatalog', () => {
  const ref = (name: string) => ({ content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } });
  const gvk = { group: 'apps', version: 'v1', kind: 'Widget' };
  const doc = {
    components: { schemas: { 'x.Widget': {}, 'x.WidgetList': {} } },
    paths: {
      '/apis/apps/v1/namespaces/{namespace}/widgets': {
        get: { 'x-kubernetes-action': 'list', 'x-kubernetes-group-version-kind': gvk },
        post: { 'x-kubernetes-action': 'post', 'x-kubernetes-group-version-kind': gvk, responses: { '201': ref('x.Widget') } },
      },
      '/apis/apps/v1/namespaces/{namespace}/widgets/{name}': {
        get: { 'x-kubernetes-action': 'get', 'x-kubernetes-group-version-kind': gvk, responses: { '200': ref('x.Widget') } },
        put: { 'x-kubernetes-action': 'put', 'x-kubernetes-group-version-kind': gvk },
      },
      '/apis/apps/v1/namespaces/{namespace}/widgets/{name}/scale': {
        get: { 'x-kubernetes-action': 'get', 'x-kubernetes-group-version-kind': { group: 'autoscaling', version: 'v1', kind: 'Scale' } },
      },
      '/apis/apps/v1/watch/namespaces/{namespace}/widgets': { get: { 'x-kubernetes-action': 'watchlist' } },
    },
  };

  it('derives scope, verbs, kinds and sub-resources from the paths', () => {
    const cat = buildCatalog(new Map([['apis__apps__v1_openapi.json', doc]]));
    expect(cat.groupVersions).toEqual([
      {
        group: 'apps',
        version: 'v1',
        resources: [
          {
            name: 'widgets',
            singularName: 'widget',
            kind: 'Widget',
            listKind: 'WidgetList',
            namespaced: true,
            verbs: ['create', 'get', 'list', 'update', 'watch'],
            schema: 'x.Widget',
            subresources: [{ name: 'scale', verbs: ['get'], group: 'autoscaling', version: 'v1', kind: 'Scale' }],
          },
        ],
      },
    ]);
  });
});

describe.skipIf(!existsSync(shared))('committed schema files', () => {
  it('are what the generator writes from shared/schemas (run `make gen-schemas` if not)', () => {
    for (const [name, text] of generate(shared)) {
      expect(readFileSync(join(root, 'proto', name), 'utf8') === text, `proto/${name} is stale`).toBe(true);
    }
  });
});
