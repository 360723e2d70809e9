import { describe, expect, it } from 'vitest';
import type { ManagedFieldsEntry } from './managed-fields.js';
import { fieldElement as f, type Path } from './path-element.js';
import { replicasPathFromJsonPath, ScaleHandler, type ReplicasPaths } from './scale-handler.js';

const REPLICAS: Path = [f('spec'), f('replicas')];
const appsPaths: ReplicasPaths = (v) => (v.startsWith('apps/') ? REPLICAS : undefined);
const e = (manager: string, operation: 'Apply' | 'Update', apiVersion: string, fieldsV1: Record<string, unknown>, extra: Partial<ManagedFieldsEntry> = {}): ManagedFieldsEntry => ({
  manager,
  operation,
  apiVersion,
  ...(extra.time ? { time: extra.time } : {}),
  fieldsType: 'FieldsV1',
  fieldsV1: fieldsV1 as ManagedFieldsEntry['fieldsV1'],
  ...(extra.subresource ? { subresource: extra.subresource } : {}),
});
const replicas = { 'f:spec': { 'f:replicas': {} } };
const replicasAndSelector = { 'f:spec': { 'f:replicas': {}, 'f:selector': {} } };
const selector = { 'f:spec': { 'f:selector': {} } };
const handler = (parent: ManagedFieldsEntry[], paths = appsPaths) => new ScaleHandler(parent, 'apps/v1', 'autoscaling/v1', paths);

describe('ScaleHandler.toSubresource', () => {
  it('keeps only the owners of replicas, at the Scale apiVersion, with their subresource and time', () => {
    const parent = [
      e('other', 'Apply', 'apps/v1', selector),
      e('owner', 'Apply', 'apps/v1', replicasAndSelector, { time: '2024-01-01T00:00:00Z' }),
      e('scaler', 'Update', 'apps/v1', replicas, { subresource: 'scale', time: '2024-01-02T00:00:00Z' }),
    ];
    expect(handler(parent).toSubresource()).toEqual([
      e('owner', 'Apply', 'autoscaling/v1', replicas, { time: '2024-01-01T00:00:00Z' }),
      e('scaler', 'Update', 'autoscaling/v1', replicas, { subresource: 'scale', time: '2024-01-02T00:00:00Z' }),
    ]);
  });

  it('skips entries at unknown versions and has nothing for no owners', () => {
    expect(handler([e('x', 'Apply', 'other.io/v1', replicas)]).toSubresource()).toBeUndefined();
    expect(handler([]).toSubresource()).toBeUndefined();
  });
});

describe('ScaleHandler.toParent', () => {
  it.each([
    ['Apply', 'Update'],
    ['Apply', 'Apply'],
    ['Update', 'Update'],
    ['Update', 'Apply'],
  ] as const)('a %s owner loses replicas to a %s through the Scale', (parentOp, scaleOp) => {
    const parent = [e('test', parentOp, 'apps/v1', replicasAndSelector)];
    const scale = [e('scale', scaleOp, 'autoscaling/v1', replicas, { subresource: 'scale', time: '2024-02-01T00:00:00Z' })];
    const out = handler(parent).toParent(scale)!;
    expect(out).toHaveLength(2);
    expect(out).toContainEqual(e('test', parentOp, 'apps/v1', selector));
    expect(out).toContainEqual(e('scale', scaleOp, 'apps/v1', replicas, { subresource: 'scale', time: '2024-02-01T00:00:00Z' }));
  });

  it('keeps an owner whose Scale counterpart still owns replicas as it was (Update entries too)', () => {
    const parent = [e('a', 'Apply', 'apps/v1', replicasAndSelector, { time: '2024-01-01T00:00:00Z' }), e('u', 'Update', 'apps/v1', replicasAndSelector)];
    const h = handler(parent);
    const scale = [...h.toSubresource()!, e('hpa', 'Apply', 'autoscaling/v1', replicas, { subresource: 'scale' })];
    const out = h.toParent(scale)!;
    expect(out).toContainEqual(parent[0]);
    expect(out).toContainEqual(parent[1]);
    expect(out).toContainEqual(e('hpa', 'Apply', 'apps/v1', replicas, { subresource: 'scale' }));
    expect(out).toHaveLength(3);
  });

  it('drops an entry that owned only replicas, and leaves entries without replicas or at unknown versions alone', () => {
    const parent = [e('only', 'Apply', 'apps/v1', replicas), e('sel', 'Update', 'apps/v1', selector), e('foreign', 'Apply', 'other.io/v1', replicas)];
    const out = handler(parent).toParent([e('hpa', 'Apply', 'autoscaling/v1', replicas, { subresource: 'scale' })])!;
    expect(out.map((x) => x.manager).sort()).toEqual(['foreign', 'hpa', 'sel']);
  });

  it('does not turn Scale entries that own other fields into workload entries', () => {
    const parent = [e('test', 'Apply', 'apps/v1', selector)];
    const out = handler(parent).toParent([e('scale', 'Update', 'autoscaling/v1', { 'f:status': { 'f:replicas': {} } }, { subresource: 'scale' })]);
    expect(out).toEqual(parent);
  });

  it('maps replicas to a custom resource path, and a version without scale keeps its entries', () => {
    const count: Path = [f('spec'), f('scaling'), f('count')];
    const paths: ReplicasPaths = (v) => (v === 'apps/v1' ? count : null);
    const parent = [e('owner', 'Apply', 'apps/v1', { 'f:spec': { 'f:scaling': { 'f:count': {} }, 'f:size': {} } })];
    const h = handler(parent, paths);
    expect(h.toSubresource()).toEqual([e('owner', 'Apply', 'autoscaling/v1', replicas)]);
    expect(h.toParent([e('hpa', 'Apply', 'autoscaling/v1', replicas, { subresource: 'scale' })])).toEqual([
      e('hpa', 'Apply', 'apps/v1', { 'f:spec': { 'f:scaling': { 'f:count': {} } } }, { subresource: 'scale' }),
      e('owner', 'Apply', 'apps/v1', { 'f:spec': { 'f:size': {} } }),
    ]);
  });

  it.each([
    ['.spec.replicas', [f('spec'), f('replicas')]],
    ['.spec.scaling.count', [f('spec'), f('scaling'), f('count')]],
    ['.spec.items[0].n', null],
    ['', null],
  ] as const)('reads the path %s', (jsonPath, path) => {
    expect(replicasPathFromJsonPath(jsonPath)).toEqual(path);
  });
});
