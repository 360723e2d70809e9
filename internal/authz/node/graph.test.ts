import { describe, expect, it } from 'vitest';
import { createLogger } from '../../log/logger.js';
import { encodeStored } from '../../storedobject/stored-object.js';
import { memoryCacheFixture } from '../../watchcache/memory-cache-fixture.js';
import { followCache, NodeGraph, type VertexKind } from './graph.js';
import { podReferences, pvReferences } from './references.js';

type Json = Record<string, unknown>;
const pod = (name: string, nodeName: string, spec: Json = {}, extra: Json = {}): Json => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { name, namespace: 'ns', uid: `uid-${name}` },
  spec: { nodeName, containers: [{ name: 'c', image: 'i' }], ...spec },
  ...extra,
});

describe('podReferences', () => {
  it.each<[string, Json, Partial<ReturnType<typeof podReferences>>]>([
    ['image pull secrets', { imagePullSecrets: [{ name: 'pull' }] }, { secrets: ['pull'] }],
    [
      'env and envFrom of every container kind',
      {
        initContainers: [{ name: 'i', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 's-init', key: 'k' } } }] }],
        containers: [{ name: 'c', envFrom: [{ secretRef: { name: 's-from' } }, { configMapRef: { name: 'cm-from' } }], env: [{ name: 'B', valueFrom: { configMapKeyRef: { name: 'cm-env', key: 'k' } } }] }],
        ephemeralContainers: [{ name: 'e', envFrom: [{ secretRef: { name: 's-eph' } }] }],
      },
      { secrets: ['s-init', 's-from', 's-eph'], configMaps: ['cm-from', 'cm-env'] },
    ],
    [
      'volumes of every secret-bearing plugin',
      {
        volumes: [
          { name: 'a', secret: { secretName: 's-vol' } },
          { name: 'b', azureFile: { secretName: 's-azure', shareName: 'x' } },
          { name: 'c', cephfs: { monitors: ['m'], secretRef: { name: 's-ceph' } } },
          { name: 'd', rbd: { monitors: ['m'], image: 'i', secretRef: { name: 's-rbd' } } },
          { name: 'e', csi: { driver: 'd', nodePublishSecretRef: { name: 's-csi' } } },
          { name: 'f', flexVolume: { driver: 'd', secretRef: { name: 's-flex' } } },
          { name: 'g', configMap: { name: 'cm-vol' } },
        ],
      },
      { secrets: ['s-vol', 's-azure', 's-ceph', 's-rbd', 's-csi', 's-flex'], configMaps: ['cm-vol'] },
    ],
    [
      'projected sources',
      { volumes: [{ name: 'p', projected: { sources: [{ secret: { name: 's-proj' } }, { configMap: { name: 'cm-proj' } }, { serviceAccountToken: { path: 't' } }] } }] },
      { secrets: ['s-proj'], configMaps: ['cm-proj'] },
    ],
    [
      'named and ephemeral claims',
      { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'claim' } }, { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } }] },
      { claims: ['claim', 'p-scratch'] },
    ],
    ['service account', { serviceAccountName: 'sa' }, { serviceAccount: 'sa' }],
    ['nothing', {}, { secrets: [], configMaps: [], claims: [], serviceAccount: '', resourceClaims: [] }],
  ])('%s', (_n, spec, want) => {
    expect(podReferences(pod('p', 'n', spec))).toMatchObject(want);
  });

  it('resource claims named directly or through the status of a template', () => {
    const p = pod('p', 'n', { resourceClaims: [{ name: 'a', resourceClaimName: 'direct' }, { name: 'b', resourceClaimTemplateName: 't' }, { name: 'c', resourceClaimTemplateName: 't' }] }, {
      status: { resourceClaimStatuses: [{ name: 'b', resourceClaimName: 'p-b-xyz' }] },
    });
    expect(podReferences(p).resourceClaims).toEqual(['direct', 'p-b-xyz']);
  });

  it('PV secrets the kubelet reads, in the claim namespace unless named', () => {
    const refs = pvReferences({
      metadata: { name: 'pv' },
      spec: {
        claimRef: { namespace: 'ns', name: 'claim' },
        csi: { driver: 'd', nodeStageSecretRef: { name: 'stage', namespace: 'other' }, controllerPublishSecretRef: { name: 'ctrl', namespace: 'ns' } },
        cephfs: { monitors: ['m'], secretRef: { name: 'ceph' } },
      },
    });
    expect(refs.claim).toBe('ns/claim');
    expect(refs.secrets.sort()).toEqual(['ns/ceph', 'other/stage']);
  });
});

describe('NodeGraph', () => {
  const reach = (g: NodeGraph, node: string, kind: VertexKind, ns: string, name: string) => g.reaches(node, kind, ns, name);

  it('links what a bound pod references to its node only', () => {
    const g = new NodeGraph();
    g.setPod(pod('p', 'node-a', { serviceAccountName: 'sa', volumes: [{ name: 'v', secret: { secretName: 's' } }, { name: 'd', persistentVolumeClaim: { claimName: 'c' } }] }));
    g.setPod(pod('unbound', '', { volumes: [{ name: 'v', secret: { secretName: 'free' } }] }));
    expect(reach(g, 'node-a', 'secret', 'ns', 's')).toBe(true);
    expect(reach(g, 'node-b', 'secret', 'ns', 's')).toBe(false);
    expect(reach(g, 'node-a', 'secret', 'other', 's')).toBe(false);
    expect(reach(g, 'node-a', 'secret', 'ns', 'free')).toBe(false);
    expect(reach(g, 'node-a', 'pod', 'ns', 'p')).toBe(true);
    expect(reach(g, 'node-a', 'pvc', 'ns', 'c')).toBe(true);
    expect(reach(g, 'node-a', 'serviceaccount', 'ns', 'sa')).toBe(true);
    expect(reach(g, 'node-a', 'serviceaccount', 'ns', 'default')).toBe(false);
  });

  it('follows a pod moving, a shared secret, and deletes', () => {
    const g = new NodeGraph();
    const spec = { volumes: [{ name: 'v', secret: { secretName: 'shared' } }] };
    g.setPod(pod('p1', 'node-a', spec));
    g.setPod(pod('p2', 'node-a', spec));
    g.deletePod('ns/p1');
    expect(reach(g, 'node-a', 'secret', 'ns', 'shared')).toBe(true);
    g.setPod(pod('p2', 'node-b', spec));
    expect(reach(g, 'node-a', 'secret', 'ns', 'shared')).toBe(false);
    expect(reach(g, 'node-b', 'secret', 'ns', 'shared')).toBe(true);
    g.deletePod('ns/p2');
    expect(reach(g, 'node-b', 'secret', 'ns', 'shared')).toBe(false);
    expect(g.stats()).toEqual({ pods: 0, pvs: 0, secrets: 0 });
  });

  it('reaches a PV and its secrets through a claim of a pod on the node', () => {
    const g = new NodeGraph();
    const pv = { metadata: { name: 'pv1' }, spec: { claimRef: { namespace: 'ns', name: 'c' }, csi: { driver: 'd', nodePublishSecretRef: { name: 'pv-secret', namespace: 'ns' } } } };
    g.setPv(pv);
    expect(reach(g, 'node-a', 'pv', '', 'pv1')).toBe(false);
    g.setPod(pod('p', 'node-a', { volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'c' } }] }));
    expect(reach(g, 'node-a', 'pv', '', 'pv1')).toBe(true);
    expect(reach(g, 'node-a', 'secret', 'ns', 'pv-secret')).toBe(true);
    expect(reach(g, 'node-b', 'pv', '', 'pv1')).toBe(false);
    // Released: no claim, no edges.
    g.setPv({ metadata: { name: 'pv1' }, spec: { csi: pv.spec.csi } });
    expect(reach(g, 'node-a', 'pv', '', 'pv1')).toBe(false);
    expect(reach(g, 'node-a', 'secret', 'ns', 'pv-secret')).toBe(false);
  });

  it('volume attachments and resource slices name their node', () => {
    const g = new NodeGraph();
    g.setNodeNamed('volumeattachment', { metadata: { name: 'va' }, spec: { nodeName: 'node-a' } });
    expect(reach(g, 'node-a', 'volumeattachment', '', 'va')).toBe(true);
    expect(reach(g, 'node-b', 'volumeattachment', '', 'va')).toBe(false);
    g.deleteNodeNamed('volumeattachment', 'va');
    expect(reach(g, 'node-a', 'volumeattachment', '', 'va')).toBe(false);
  });
});

describe('followCache', () => {
  const fx = memoryCacheFixture();
  const key = (name: string) => `/registry/core/pods/ns/${name}`;
  const put = (name: string, obj: Json) => fx.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key: key(name), value: encodeStored(obj) }] });
  const del = (name: string) => fx.store.execute({ type: 'txn', compares: [], ops: [{ type: 'delete', key: key(name) }] });
  const until = async (check: () => boolean): Promise<void> => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(check()).toBe(true);
  };

  it('lists what the cache holds, then follows adds, moves and deletes', async () => {
    await put('before', pod('before', 'node-a', { imagePullSecrets: [{ name: 'pull' }] }));
    await fx.cache.start();
    const g = new NodeGraph();
    const f = followCache(g, fx.cache, createLogger('error'));
    expect(f.synced()).toBe(true);
    expect(g.reaches('node-a', 'secret', 'ns', 'pull')).toBe(true);
    await put('later', pod('later', 'node-a', { volumes: [{ name: 'v', configMap: { name: 'cm' } }] }));
    await until(() => g.reaches('node-a', 'configmap', 'ns', 'cm'));
    await put('later', pod('later', 'node-b', { volumes: [{ name: 'v', configMap: { name: 'cm' } }] }));
    await until(() => g.reaches('node-b', 'configmap', 'ns', 'cm') && !g.reaches('node-a', 'configmap', 'ns', 'cm'));
    await del('before');
    await until(() => !g.reaches('node-a', 'secret', 'ns', 'pull'));
    f.stop();
  });

  it('is not synced before the cache is, and lists once it is', async () => {
    await put('p', pod('p', 'node-a', { imagePullSecrets: [{ name: 'pull' }] }));
    const g = new NodeGraph();
    const f = followCache(g, fx.cache, createLogger('error'));
    expect(f.synced()).toBe(false);
    await fx.cache.start();
    await until(() => f.synced());
    expect(g.reaches('node-a', 'secret', 'ns', 'pull')).toBe(true);
    f.stop();
  });
});

describe('followCache with the pod field set', () => {
  // As the registry's spec for pods gives it: spec.nodeName is '' until the pod is bound.
  const fx = memoryCacheFixture({
    specFor: (prefix) =>
      prefix === '/registry/core/pods/'
        ? { stamp: 'pods-test', attributes: (obj) => ({ labels: {}, fields: { 'spec.nodeName': String(((obj.spec ?? {}) as Json).nodeName ?? '') } }) }
        : undefined,
  });
  const key = '/registry/core/pods/ns/p';
  const put = (obj: Json) => fx.store.execute({ type: 'txn', compares: [], ops: [{ type: 'put', key, value: encodeStored(obj) }] });

  it('holds nothing for a pod until it is bound, then what it reaches, and nothing once a version is unbound', async () => {
    await fx.cache.start();
    const g = new NodeGraph();
    const f = followCache(g, fx.cache, createLogger('error'));
    const spec = { imagePullSecrets: [{ name: 'pull' }] };
    await put(pod('p', '', spec));
    await until(() => fx.cache.revision === fx.store.currentRevision());
    expect(g.pod('ns', 'p')).toBeUndefined();
    await put(pod('p', 'node-a', spec));
    await until(() => g.reaches('node-a', 'secret', 'ns', 'pull'));
    expect(g.pod('ns', 'p')?.nodeName).toBe('node-a');
    await put(pod('p', '', spec));
    await until(() => !g.reaches('node-a', 'secret', 'ns', 'pull'));
    expect(g.pod('ns', 'p')).toBeUndefined();
    f.stop();
  });

  const until = async (check: () => boolean): Promise<void> => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(check()).toBe(true);
  };
});
