// Tests dropOmittedEmpty against the built-in schemas: what Go's encoder leaves out of a built-in
// object (empty lists and maps of fields the schema does not require) and what it keeps.
import { describe, expect, it } from 'vitest';
import { builtinTypeNode, type TypeNode } from '../patch/index.js';
import { dropOmittedEmpty } from './omit-empty.js';

const node = (name: string): TypeNode => {
  const t = builtinTypeNode(name);
  if (!t) throw new Error(`no schema ${name}`);
  return t;
};
const POD = 'io.k8s.api.core.v1.Pod';
const CONFIG_MAP = 'io.k8s.api.core.v1.ConfigMap';
const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment';
const CRD = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition';

describe('dropOmittedEmpty', () => {
  it.each([
    ['empty labels, annotations, finalizers and owner references', CONFIG_MAP, { metadata: { name: 'a', labels: {}, annotations: {}, finalizers: [], ownerReferences: [] } }, { metadata: { name: 'a' } }],
    ['a null map or list field', CONFIG_MAP, { metadata: { name: 'a', labels: null, finalizers: null }, data: null }, { metadata: { name: 'a' } }],
    ['an empty map at the top', CONFIG_MAP, { metadata: { name: 'a' }, data: {}, binaryData: {} }, { metadata: { name: 'a' } }],
    ['empty lists of a container, in a list of containers', POD, { spec: { containers: [{ name: 'c', args: [], env: [], ports: [] }], nodeSelector: {}, tolerations: [] } }, { spec: { containers: [{ name: 'c' }] } }],
    ['inside a pod template', DEPLOYMENT, { spec: { template: { metadata: { labels: { app: 'x' }, annotations: {} }, spec: { containers: [{ name: 'c', command: [] }], volumes: [] } } } }, { spec: { template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c' }] } } } }],
  ])('drops %s', (_, schema, obj, want) => {
    dropOmittedEmpty(obj, node(schema));
    expect(obj).toEqual(want);
  });

  it.each([
    ['a required list (containers)', POD, { spec: { containers: [] } }],
    ['structs, empty or not (resources, securityContext, strategy, status)', DEPLOYMENT, { spec: { strategy: {}, template: { spec: { containers: [{ name: 'c', resources: {} }], securityContext: {} } } }, status: {} }],
    ['scalars, zero or not', POD, { spec: { hostNetwork: false, priority: 0, containers: [{ name: 'c', image: '' }] } }],
    ['non-empty lists and maps', CONFIG_MAP, { metadata: { name: 'a', labels: { a: '' }, finalizers: ['x'] }, data: { k: '' } }],
    ['empty values inside a map (a map keeps its entries)', CONFIG_MAP, { data: { k: '' }, metadata: { annotations: { a: '' } } }],
    ['managed fields, which the field manager owns', CONFIG_MAP, { metadata: { name: 'a', managedFields: [] } }],
    ['a list Go writes although it is optional (a role\'s rules)', 'io.k8s.api.rbac.v1.ClusterRole', { metadata: { name: 'a' }, rules: [] }],
    ['a projected volume\'s sources, inside a pod', POD, { spec: { containers: [{ name: 'c' }], volumes: [{ name: 'v', projected: { sources: [] } }] } }],
    ['a CRD\'s status conditions and stored versions', CRD, { status: { conditions: [], storedVersions: [], acceptedNames: { kind: '', plural: '' } } }],
    ['fields the schema does not declare', CONFIG_MAP, { metadata: { name: 'a' }, extra: [], other: {} }],
    ['a mistyped value, for validation to refuse', CONFIG_MAP, { metadata: { name: 'a', finalizers: {}, labels: [] } }],
    [
      'raw JSON in a CRD schema (a default of {} is data)',
      CRD,
      { spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: { type: 'object', default: {}, properties: { a: { type: 'object', default: {}, 'x-kubernetes-preserve-unknown-fields': true } } } } }] } },
    ],
  ])('keeps %s', (_, schema, obj) => {
    const before = structuredClone(obj);
    dropOmittedEmpty(obj, node(schema));
    expect(obj).toEqual(before);
  });

  it('walks the typed values of a map (a CRD schema\'s properties)', () => {
    const obj = { spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: { type: 'object', properties: { a: { type: 'string', enum: [] }, b: { type: 'object', properties: {}, required: [] } } } } }] } };
    dropOmittedEmpty(obj, node(CRD));
    expect(obj.spec.versions[0]!.schema.openAPIV3Schema.properties).toEqual({ a: { type: 'string' }, b: { type: 'object' } });
  });
});
