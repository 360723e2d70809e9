import { describe, it, expect } from 'vitest';
import { createNaming } from './naming.js';

describe('naming', () => {
  const cases: Array<[mode: 'cluster' | 'kubernetes', upstream: string, served: string]> = [
    ['cluster', 'rbac.authorization.k8s.io', 'rbac.authorization.cluster.io'],
    ['cluster', 'flowcontrol.apiserver.k8s.io', 'flowcontrol.apiserver.cluster.io'],
    ['cluster', 'apps', 'apps'],
    ['cluster', '', ''],
    ['kubernetes', 'rbac.authorization.k8s.io', 'rbac.authorization.k8s.io'],
    ['kubernetes', 'batch', 'batch'],
  ];
  it.each(cases)('%s: %s is served as %s and maps back', (mode, upstream, served) => {
    const n = createNaming(mode);
    expect(n.group(upstream)).toBe(served);
    expect(n.upstreamGroup(served)).toBe(upstream);
  });

  it('does not accept upstream spellings in cluster mode', () => {
    expect(createNaming('cluster').upstreamGroup('rbac.authorization.k8s.io')).toBeUndefined();
  });

  it('names media types, meta group, extensions and labels per mode', () => {
    const c = createNaming('cluster');
    const k = createNaming('kubernetes');
    expect([c.protobufMediaType, k.protobufMediaType]).toEqual([
      'application/vnd.cluster.protobuf',
      'application/vnd.kubernetes.protobuf',
    ]);
    expect([c.metaGroup, k.metaGroup]).toEqual(['meta.cluster.io', 'meta.k8s.io']);
    expect([c.extensionPrefix, k.extensionPrefix]).toEqual(['x-cluster-', 'x-kubernetes-']);
    expect([c.label('metadata.name'), k.label('metadata.name')]).toEqual([
      'cluster.io/metadata.name',
      'kubernetes.io/metadata.name',
    ]);
    expect(c.labelPrefix('node')).toBe('node.cluster.io/');
  });
});
