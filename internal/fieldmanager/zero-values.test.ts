import { describe, expect, it } from 'vitest';
import { builtinTypeNode } from '../patch/type-node.js';
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
});
