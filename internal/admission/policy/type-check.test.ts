// Type checking of policies against the built-in kinds' schemas (status.typeChecking).
import { describe, it, expect } from 'vitest';
import { createNaming } from '../../naming/naming.js';
import { ApiCatalog } from '../../schema/catalog.js';
import { builtinSchemas } from '../../schema/openapi-index.js';
import { smdTypeOf } from '../../fieldmanager/index.js';
import { builtinTypeNode } from '../../patch/index.js';
import { customResourceInfos } from '../../controllers/crd-controller.js';
import { typeCheckMutatingPolicy, typeCheckPolicy } from './type-check.js';

const catalog = new ApiCatalog(createNaming('cluster'));
const policy = (validations: unknown[], rules: unknown = [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }], paramKind?: unknown) => ({
  metadata: { name: 'p' },
  spec: { matchConstraints: { resourceRules: rules }, validations, ...(paramKind ? { paramKind } : {}) },
});

describe('typeCheckPolicy', () => {
  it('warns about unknown fields and wrong types per field, naming the kind', () => {
    const warnings = typeCheckPolicy(policy([
      { expression: 'object.spec.replicas <= 5' },
      { expression: 'object.spec.replicass <= 5' },
      { expression: "object.spec.replicas == 'x'", messageExpression: "'n: ' + object.metadata.nam" },
      { expression: "object.spec.template.spec.containers.all(c, c.image.startsWith('r/'))" },
    ]), catalog, builtinSchemas);
    expect(warnings.map((w) => w.fieldRef)).toEqual(['spec.validations[1].expression', 'spec.validations[2].expression', 'spec.validations[2].messageExpression']);
    expect(warnings[0]!.warning).toMatch(/^apps\/v1, Kind=Deployment: .*replicass/);
    expect(warnings[1]!.warning).toContain('apps/v1, Kind=Deployment:');
  });

  it('checks each named resource; wildcards name no schema', () => {
    const two = typeCheckPolicy(policy([{ expression: 'object.spec.replicas > 0' }], [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments', 'daemonsets'] }]), catalog, builtinSchemas);
    expect(two).toHaveLength(1);
    expect(two[0]!.warning).toMatch(/^apps\/v1, Kind=DaemonSet: /);
    expect(typeCheckPolicy(policy([{ expression: 'object.nope' }], [{ apiGroups: ['*'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }]), catalog, builtinSchemas)).toEqual([]);
  });

  it('types params from a built-in paramKind', () => {
    const w = typeCheckPolicy(policy([{ expression: 'object.spec.replicas <= int(params.dta.max)' }], undefined, { apiVersion: 'v1', kind: 'ConfigMap' }), catalog, builtinSchemas);
    expect(w).toHaveLength(1);
    expect(w[0]!.warning).toContain('dta');
    expect(typeCheckPolicy(policy([{ expression: 'object.spec.replicas <= int(params.data.max)' }], undefined, { apiVersion: 'v1', kind: 'ConfigMap' }), catalog, builtinSchemas)).toEqual([]);
  });
});

describe('typeCheckPolicy with custom resources', () => {
  const crd = (kind: string, plural: string, schema: Record<string, unknown>) =>
    customResourceInfos({
      metadata: { name: `${plural}.example.com` },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      },
    });
  const withCrds = new ApiCatalog(createNaming('kubernetes'));
  withCrds.setCustomResources('widgets.example.com', crd('Widget', 'widgets', {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          size: { type: 'integer' },
          owner: { type: 'string' },
          extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } },
          ports: { type: 'array', items: { type: 'object', properties: { port: { type: 'integer' } } } },
        },
      },
    },
  }));
  withCrds.setCustomResources('limits.example.com', crd('Limit', 'limits', { type: 'object', properties: { max: { type: 'integer' } } }));
  const widgets = [{ apiGroups: ['example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['widgets'] }];

  it.each<[string, string, RegExp | undefined]>([
    ['a declared field', 'object.spec.size <= 5', undefined],
    ['metadata is ObjectMeta', "object.metadata.name.startsWith('w-') && object.kind == 'Widget' && object.apiVersion != ''", undefined],
    ['list items typed', 'object.spec.ports.all(p, p.port > 0)', undefined],
    ['preserve-unknown-fields is dyn', 'object.spec.extra.anything == 1', undefined],
    ['an embedded resource carries its implied fields', "object.spec.template.metadata.name == 'x'", undefined],
    ['an undeclared field', 'object.spec.sise <= 5', /^example\.com\/v1, Kind=Widget: .*sise/],
    ['a wrong type', "object.spec.size == 'big'", /^example\.com\/v1, Kind=Widget: /],
    ['an undeclared field of ObjectMeta', "object.metadata.nam == 'x'", /^example\.com\/v1, Kind=Widget: .*nam/],
    ['an undeclared field in a list item', 'object.spec.ports.all(p, p.prt > 0)', /prt/],
  ])('%s', (_name, expression, warning) => {
    const got = typeCheckPolicy(policy([{ expression }], widgets), withCrds, builtinSchemas);
    if (!warning) expect(got).toEqual([]);
    else {
      expect(got).toHaveLength(1);
      expect(got[0]!.warning).toMatch(warning);
    }
  });

  it('types params from a custom paramKind', () => {
    const paramKind = { apiVersion: 'example.com/v1', kind: 'Limit' };
    expect(typeCheckPolicy(policy([{ expression: 'object.spec.size <= params.max' }], widgets, paramKind), withCrds, builtinSchemas)).toEqual([]);
    const w = typeCheckPolicy(policy([{ expression: 'object.spec.size <= params.maximum' }], widgets, paramKind), withCrds, builtinSchemas);
    expect(w).toHaveLength(1);
    expect(w[0]!.warning).toContain('maximum');
  });
});

describe('typeCheckMutatingPolicy: Object{…} field names against the named resources\' schemas', () => {
  const typeOf = (r: { schemaName?: string }) => smdTypeOf(r.schemaName ? builtinTypeNode(r.schemaName) : undefined);
  const mutating = (expressions: string[], resources = ['deployments']) => ({
    metadata: { name: 'm' },
    spec: {
      matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources }] },
      mutations: expressions.map((expression) => ({ patchType: 'ApplyConfiguration', applyConfiguration: { expression } })),
    },
  });

  it.each<[string, string, string | undefined]>([
    ['declared fields at every depth, list items by their field', 'Object{spec: Object.spec{replicas: 3, template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "a", image: "b"}]}}}}', undefined],
    ['map keys under a map field are not fields', 'Object{metadata: Object.metadata{labels: {"any-key": "v"}}}', undefined],
    ['an undeclared field', 'Object{spec: Object.spec{replicass: 3}}', "apps/v1, Kind=Deployment: undefined field 'replicass' in Object.spec"],
    ['an undeclared field in a list item', 'Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "a", imag: "b"}]}}}}', "apps/v1, Kind=Deployment: undefined field 'imag' in Object.spec.template.spec.containers"],
    ['an undeclared type path', 'Object{spek: Object.spek{replicas: 1}}', "apps/v1, Kind=Deployment: undefined field 'spek' in Object"],
  ])('%s', (_name, expression, warning) => {
    const got = typeCheckMutatingPolicy(mutating([expression]), catalog, typeOf);
    if (warning === undefined) expect(got).toEqual([]);
    else expect(got).toEqual([{ fieldRef: 'spec.mutations[0].applyConfiguration.expression', warning }]);
  });

  it('names each resource whose schema lacks the field; JSONPatch mutations and wildcards are not checked', () => {
    const got = typeCheckMutatingPolicy(mutating(['Object{spec: Object.spec{replicas: 3}}'], ['deployments', 'daemonsets']), catalog, typeOf);
    expect(got).toEqual([{ fieldRef: 'spec.mutations[0].applyConfiguration.expression', warning: "apps/v1, Kind=DaemonSet: undefined field 'replicas' in Object.spec" }]);
    const jsonPatch = { ...mutating([]), spec: { ...mutating([]).spec, mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: '[JSONPatch{op: "add", path: "/x", value: 1}]' } }] } };
    expect(typeCheckMutatingPolicy(jsonPatch, catalog, typeOf)).toEqual([]);
    expect(typeCheckMutatingPolicy(mutating(['Object{spec: Object.spec{nope: 3}}'], ['*']), catalog, typeOf)).toEqual([]);
  });
});
