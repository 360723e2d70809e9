// Type checking of policies against the built-in kinds' schemas (status.typeChecking).
import { describe, it, expect } from 'vitest';
import { createNaming } from '../../naming/naming.js';
import { ApiCatalog } from '../../schema/catalog.js';
import { builtinSchemas } from '../../schema/openapi-index.js';
import { typeCheckPolicy } from './type-check.js';

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
