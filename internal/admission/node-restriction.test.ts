import { describe, expect, it } from 'vitest';
import { StatusError } from '../apierrors/status.js';
import type { UserInfo } from '../auth/user.js';
import { createNaming, NAMING_MODES } from '../naming/naming.js';
import { ApiCatalog } from '../schema/catalog.js';
import type { AdmissionRequest, JsonObject, Operation } from './admission.js';
import { forbiddenNodeLabels, nodeRestriction } from './node-restriction.js';

const nodeA: UserInfo = { name: 'system:node:node-a', groups: ['system:nodes', 'system:authenticated'] };
const alice: UserInfo = { name: 'alice', groups: ['system:authenticated'] };

const pods: Record<string, JsonObject> = {
  'ns/on-a': { metadata: { name: 'on-a', namespace: 'ns', uid: 'uid-a' }, spec: { nodeName: 'node-a' } },
  'ns/on-b': { metadata: { name: 'on-b', namespace: 'ns', uid: 'uid-b' }, spec: { nodeName: 'node-b' } },
};

describe.each(NAMING_MODES)('NodeRestriction (%s naming)', (mode) => {
  const naming = createNaming(mode);
  const catalog = new ApiCatalog(naming);
  const plugin = nodeRestriction({
    naming,
    getPod: async (ns, name) => pods[`${ns}/${name}`],
    getNode: async (name) => (name === 'node-a' ? { metadata: { name, uid: 'node-a-uid' } } : undefined),
  });
  const req = (group: string, resource: string, operation: Operation, fields: Partial<AdmissionRequest>): AdmissionRequest => ({
    operation,
    resource: catalog.resource(naming.group(group), group === '' ? 'v1' : catalog.resources(naming.group(group), 'v1').length ? 'v1' : 'v1beta1', resource)!,
    subresource: '',
    namespace: '',
    name: '',
    object: undefined,
    oldObject: undefined,
    user: nodeA,
    dryRun: false,
    ...fields,
  });
  const outcome = async (r: AdmissionRequest): Promise<string> => {
    try {
      await plugin.validate!(r);
      return 'ok';
    } catch (e) {
      if (e instanceof StatusError) return `${e.status.code} ${e.status.message}`;
      throw e;
    }
  };
  const mirror = (extra: { spec?: JsonObject; meta?: JsonObject } = {}): JsonObject => ({
    metadata: {
      name: 'static-node-a',
      namespace: 'ns',
      annotations: { [naming.label('config.mirror')]: 'hash' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'node-a-uid', controller: true }],
      ...extra.meta,
    },
    spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'i' }], ...extra.spec },
  });
  const node = (name: string, labels: Record<string, string> = {}, spec: JsonObject = {}): JsonObject => ({ metadata: { name, labels }, spec });

  it.each<[string, () => AdmissionRequest, string]>([
    ['update its own node status', () => req('', 'nodes', 'UPDATE', { name: 'node-a', subresource: 'status', object: node('node-a'), oldObject: node('node-a') }), 'ok'],
    ['update another node', () => req('', 'nodes', 'UPDATE', { name: 'node-b', subresource: 'status', object: node('node-b'), oldObject: node('node-b') }), '403 nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"'],
    ['delete another node', () => req('', 'nodes', 'DELETE', { name: 'node-b', oldObject: node('node-b') }), '403 nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"'],
    ['change its taints', () => req('', 'nodes', 'UPDATE', { name: 'node-a', object: node('node-a', {}, { taints: [] }), oldObject: node('node-a', {}, { taints: [{ key: 'k', effect: 'NoSchedule' }] }) }), '403 nodes "node-a" is forbidden: node "node-a" is not allowed to modify taints'],
    ['create itself with taints', () => req('', 'nodes', 'CREATE', { name: 'node-a', object: node('node-a', {}, { taints: [{ key: 'k', effect: 'NoSchedule' }] }) }), 'ok'],
    ['create pod not mirror', () => req('', 'pods', 'CREATE', { namespace: 'ns', name: 'x', object: { metadata: { name: 'x' }, spec: { nodeName: 'node-a' } } }), `403 pods "x" is forbidden: pod does not have "${naming.label('config.mirror')}" annotation, node "node-a" can only create mirror pods`],
    ['create a mirror pod of itself', () => req('', 'pods', 'CREATE', { namespace: 'ns', name: 'static-node-a', object: mirror() }), 'ok'],
    ['create a mirror pod bound to node-b', () => req('', 'pods', 'CREATE', { namespace: 'ns', name: 'static-node-a', object: mirror({ spec: { nodeName: 'node-b' } }) }), '403 pods "static-node-a" is forbidden: node "node-a" can only create pods with spec.nodeName set to itself'],
    ['mirror pod with a secret', () => req('', 'pods', 'CREATE', { namespace: 'ns', name: 'static-node-a', object: mirror({ spec: { volumes: [{ name: 'v', secret: { secretName: 's' } }] } }) }), '403 pods "static-node-a" is forbidden: node "node-a" can not create pods that reference secrets'],
    ['mirror pod with a configmap', () => req('', 'pods', 'CREATE', { namespace: 'ns', name: 'static-node-a', object: mirror({ spec: { volumes: [{ name: 'v', configMap: { name: 'c' } }] } }) }), '403 pods "static-node-a" is forbidden: node "node-a" can not create pods that reference configmaps'],
    ['mirror pod with a claim', () => req('', 'pods', 'CREATE', { namespace: 'ns', name: 'static-node-a', object: mirror({ spec: { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c' } }] } }) }), '403 pods "static-node-a" is forbidden: node "node-a" can not create pods that reference persistentvolumeclaims'],
    ['mirror pod with a service account', () => req('', 'pods', 'CREATE', { namespace: 'ns', name: 'static-node-a', object: mirror({ spec: { serviceAccountName: 'sa' } }) }), '403 pods "static-node-a" is forbidden: node "node-a" can not create pods that reference a service account'],
    ['mirror pod with a wrong node uid', () => req('', 'pods', 'CREATE', { namespace: 'ns', name: 'static-node-a', object: mirror({ meta: { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'other', controller: true }] } }) }), '403 pods "static-node-a" is forbidden: node node-a UID mismatch: expected node-a-uid got other'],
    ['mirror pod without owner', () => req('', 'pods', 'CREATE', { namespace: 'ns', name: 'static-node-a', object: mirror({ meta: { ownerReferences: [] } }) }), '403 pods "static-node-a" is forbidden: node "node-a" can only create pods with an owner reference set to itself'],
    ['update a pod', () => req('', 'pods', 'UPDATE', { namespace: 'ns', name: 'on-a', object: pods['ns/on-a'], oldObject: pods['ns/on-a'] }), '403 pods "on-a" is forbidden: unexpected operation "UPDATE", node "node-a" can only create and delete mirror pods'],
    ['delete its pod', () => req('', 'pods', 'DELETE', { namespace: 'ns', name: 'on-a', oldObject: pods['ns/on-a'] }), 'ok'],
    ['delete another node’s pod', () => req('', 'pods', 'DELETE', { namespace: 'ns', name: 'on-b', oldObject: pods['ns/on-b'] }), '403 pods "on-b" is forbidden: node "node-a" can only delete pods with spec.nodeName set to itself'],
    ['status of its pod', () => req('', 'pods', 'UPDATE', { namespace: 'ns', name: 'on-a', subresource: 'status', object: { ...pods['ns/on-a'], status: { phase: 'Running' } }, oldObject: pods['ns/on-a'] }), 'ok'],
    ['status of another node’s pod', () => req('', 'pods', 'UPDATE', { namespace: 'ns', name: 'on-b', subresource: 'status', object: pods['ns/on-b'], oldObject: pods['ns/on-b'] }), '403 pods "on-b" is forbidden: node "node-a" can only update pod status for pods with spec.nodeName set to itself'],
    ['labels through pod status', () => req('', 'pods', 'UPDATE', { namespace: 'ns', name: 'on-a', subresource: 'status', object: { ...pods['ns/on-a'], metadata: { name: 'on-a', labels: { a: 'b' } } }, oldObject: pods['ns/on-a'] }), '403 pods "on-a" is forbidden: node "node-a" cannot update labels through pod status'],
    ['evict its pod', () => req('', 'pods', 'CREATE', { namespace: 'ns', name: 'on-a', subresource: 'eviction', object: { metadata: { name: 'on-a' } } }), 'ok'],
    ['evict another node’s pod', () => req('', 'pods', 'CREATE', { namespace: 'ns', name: 'on-b', subresource: 'eviction', object: { metadata: { name: 'on-b' } } }), '403 pods "on-b" is forbidden: node node-a can only evict pods with spec.nodeName set to itself'],
    ['token bound to its pod', () => req('', 'serviceaccounts', 'CREATE', { namespace: 'ns', name: 'sa', subresource: 'token', object: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'on-a', uid: 'uid-a' } } } }), 'ok'],
    ['token bound to another node’s pod', () => req('', 'serviceaccounts', 'CREATE', { namespace: 'ns', name: 'sa', subresource: 'token', object: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'on-b', uid: 'uid-b' } } } }), '403 serviceaccounts "sa" is forbidden: node requested token bound to a pod scheduled on a different node'],
    ['unbound token', () => req('', 'serviceaccounts', 'CREATE', { namespace: 'ns', name: 'sa', subresource: 'token', object: { spec: {} } }), '403 serviceaccounts "sa" is forbidden: node requested token not bound to a pod'],
    ['token without pod uid', () => req('', 'serviceaccounts', 'CREATE', { namespace: 'ns', name: 'sa', subresource: 'token', object: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'on-a' } } } }), '403 serviceaccounts "sa" is forbidden: node requested token with a pod binding without a uid'],
    ['token for a missing pod', () => req('', 'serviceaccounts', 'CREATE', { namespace: 'ns', name: 'sa', subresource: 'token', object: { spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'gone', uid: 'x' } } } }), '404 pods "gone" not found'],
    ['claim spec change', () => req('', 'persistentvolumeclaims', 'UPDATE', { namespace: 'ns', name: 'c', subresource: 'status', object: { metadata: { name: 'c' }, spec: { volumeName: 'x' } }, oldObject: { metadata: { name: 'c' }, spec: {} } }), '403 persistentvolumeclaims "c" is forbidden: node "node-a" is not allowed to update fields other than status.capacity and status.conditions: spec'],
    ['claim capacity', () => req('', 'persistentvolumeclaims', 'UPDATE', { namespace: 'ns', name: 'c', subresource: 'status', object: { metadata: { name: 'c', resourceVersion: '2' }, spec: {}, status: { capacity: { storage: '2Gi' } } }, oldObject: { metadata: { name: 'c', resourceVersion: '1' }, spec: {}, status: { capacity: { storage: '1Gi' } } } }), 'ok'],
    ['claim itself', () => req('', 'persistentvolumeclaims', 'UPDATE', { namespace: 'ns', name: 'c', object: {}, oldObject: {} }), '403 persistentvolumeclaims "c" is forbidden: may only update PVC status'],
    ['its lease', () => req('coordination.k8s.io', 'leases', 'CREATE', { namespace: 'kube-node-lease', name: 'node-a', object: { metadata: { name: 'node-a' } } }), 'ok'],
    ['another lease', () => req('coordination.k8s.io', 'leases', 'CREATE', { namespace: 'kube-node-lease', name: 'node-b', object: { metadata: { name: 'node-b' } } }), '403 leases.coordination.GROUP "node-b" is forbidden: can only access node lease with the same name as the requesting node'],
    ['another CSINode', () => req('storage.k8s.io', 'csinodes', 'UPDATE', { name: 'node-b', object: { metadata: { name: 'node-b' } } }), '403 csinodes.storage.GROUP "node-b" is forbidden: can only access CSINode with the same name as the requesting node'],
    ['a secret (not this plugin’s)', () => req('', 'secrets', 'CREATE', { namespace: 'ns', name: 's', object: { metadata: { name: 's' } } }), 'ok'],
    ['another user', () => req('', 'nodes', 'UPDATE', { name: 'node-b', object: node('node-b'), oldObject: node('node-b'), user: alice }), 'ok'],
    ['a node without a name', () => req('', 'nodes', 'UPDATE', { name: 'node-b', object: node('node-b'), oldObject: node('node-b'), user: { name: 'system:node:', groups: ['system:nodes'] } }), '403 nodes "node-b" is forbidden: could not determine node from user "system:node:"'],
  ])('%s', async (_n, r, want) => {
    expect(await outcome(r())).toBe(want.replace('GROUP', naming.groupDomain));
  });

  it('labels: the kubelet’s own set only, never node-restriction', async () => {
    const d = naming.labelDomain;
    const labels = [`${d}/hostname`, `node.${d}/exclude-from-external-load-balancers`, `topology.${d}/zone`, 'example.com/tier', `node-role.${d}/control-plane`, `node-restriction.${d}/pool`, `${d}/custom`, `sub.k8s.io/x`];
    expect(forbiddenNodeLabels(naming, labels)).toEqual([`node-role.${d}/control-plane`, `node-restriction.${d}/pool`, `${d}/custom`, 'sub.k8s.io/x']);
    const update = req('', 'nodes', 'UPDATE', { name: 'node-a', object: node('node-a', { [`${d}/hostname`]: 'a', [`node-role.${d}/master`]: '' }), oldObject: node('node-a', { [`${d}/hostname`]: 'old' }) });
    expect(await outcome(update)).toBe(`403 nodes "node-a" is forbidden: is not allowed to modify labels: node-role.${d}/master`);
    const create = req('', 'nodes', 'CREATE', { name: 'node-a', object: node('node-a', { [`node-restriction.${d}/x`]: 'y', [`${d}/os`]: 'linux' }) });
    expect(await outcome(create)).toBe(`403 nodes "node-a" is forbidden: node "node-a" is not allowed to set the following labels: node-restriction.${d}/x`);
  });
});
