import { describe, expect, it } from 'vitest';
import { builtinTypeNode } from '../patch/type-node.js';
import type { JsonObject } from '../patch/json-value.js';
import { withGoZeroValues } from './zero-values.js';

describe('withGoZeroValues', () => {
  it('materializes value structs and required lists the way Go serializes a Deployment', () => {
    const obj = { apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: { spec: { containers: [{ name: 'c' }] } } } };
    expect(withGoZeroValues(obj, builtinTypeNode('io.k8s.api.apps.v1.Deployment'))).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {},
      spec: {
        selector: null,
        strategy: {},
        template: { metadata: {}, spec: { containers: [{ name: 'c', resources: {} }] } },
      },
      status: {},
    });
    expect(obj).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: { spec: { containers: [{ name: 'c' }] } } } });
  });

  it('returns the same object when nothing is missing and leaves schemaless data alone', () => {
    const obj = { a: { b: 1 } };
    expect(withGoZeroValues(obj, undefined)).toBe(obj);
  });

  // Subtrees whose types have no zero fields anywhere below are returned as they are (not
  // walked); the answers are those of a full walk, including under recursive types.
  it.each([
    ['a Pod: labels, annotations and a container whose structs are all present', 'io.k8s.api.core.v1.Pod',
      { metadata: { labels: { a: '1' }, annotations: { b: '2' } }, spec: { containers: [{ name: 'c', resources: {}, env: [{ name: 'E', value: '1' }] }] }, status: {} }, true],
    ['a Pod missing its status and the resources of a container', 'io.k8s.api.core.v1.Pod',
      { metadata: {}, spec: { containers: [{ name: 'c' }] } }, false],
    ['a CRD: JSONSchemaProps recurse into themselves', 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
      { metadata: {}, spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: { type: 'object', properties: { a: { type: 'string', items: { type: 'x' } } } } } }] } }, false],
  ])('%s', (_name, schema, obj, same) => {
    const before = JSON.stringify(obj);
    const out = withGoZeroValues(obj as JsonObject, builtinTypeNode(schema));
    expect(JSON.stringify(obj)).toBe(before);
    expect(out === obj).toBe(same);
    // Parts without zero fields below them are shared, not copied.
    expect((out.metadata as JsonObject | undefined)?.labels).toBe((obj.metadata as JsonObject).labels);
  });
});
