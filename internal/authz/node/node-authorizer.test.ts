import { describe, expect, it } from 'vitest';
import { createNaming, NAMING_MODES } from '../../naming/naming.js';
import { decide, rulesFor, type Attributes } from '../authorizer.js';
import { NodeGraph } from './graph.js';
import { nodeAuthorizerFor } from './node-authorizer.js';

const nodeA = { name: 'system:node:node-a', groups: ['system:nodes', 'system:authenticated'] };

function graph(): NodeGraph {
  const g = new NodeGraph();
  g.setPod({
    metadata: { name: 'pa', namespace: 'ns', uid: 'u1' },
    spec: {
      nodeName: 'node-a',
      serviceAccountName: 'sa-a',
      volumes: [
        { name: 's', secret: { secretName: 'sec-a' } },
        { name: 'p', projected: { sources: [{ configMap: { name: 'cm-a' } }] } },
        { name: 'd', persistentVolumeClaim: { claimName: 'pvc-a' } },
      ],
      resourceClaims: [{ name: 'gpu', resourceClaimName: 'rc-a' }],
    },
  });
  g.setPod({ metadata: { name: 'pb', namespace: 'ns' }, spec: { nodeName: 'node-b', serviceAccountName: 'sa-b', volumes: [{ name: 's', secret: { secretName: 'sec-b' } }] } });
  g.setPv({ metadata: { name: 'pv-a' }, spec: { claimRef: { namespace: 'ns', name: 'pvc-a' } } });
  g.setNodeNamed('volumeattachment', { metadata: { name: 'va-a' }, spec: { nodeName: 'node-a' } });
  g.setNodeNamed('resourceslice', { metadata: { name: 'slice-a' }, spec: { nodeName: 'node-a' } });
  return g;
}

const core = (resource: string, verb: string, name: string, namespace = 'ns', subresource = ''): Partial<Attributes> => ({ resource, verb, name, namespace, subresource });
const grouped = (apiGroup: string, resource: string, verb: string, name: string, namespace = ''): Partial<Attributes> => ({ apiGroup, resource, verb, name, namespace });
const NO_REL = "no relationship found between node 'node-a' and this object";

describe.each(NAMING_MODES)('Node authorizer (%s naming)', (mode) => {
  const naming = createNaming(mode);
  const g = (upstream: string): string => naming.group(upstream);
  const z = nodeAuthorizerFor(graph(), naming, () => true);
  const base: Attributes = { user: nodeA, verb: 'get', isResourceRequest: true, path: '', namespace: '', apiGroup: '', apiVersion: 'v1', resource: '', subresource: '', name: '' };
  const ask = (attrs: Partial<Attributes>) => decide([z], { ...base, ...attrs });

  it.each<[string, Partial<Attributes>, 'allow' | 'noOpinion', string]>([
    ['get its pod’s secret', core('secrets', 'get', 'sec-a'), 'allow', ''],
    ['watch its pod’s secret by name', core('secrets', 'watch', 'sec-a'), 'allow', ''],
    ['get another node’s secret', core('secrets', 'get', 'sec-b'), 'noOpinion', NO_REL],
    ['list secrets', core('secrets', 'list', ''), 'noOpinion', 'No Object name found'],
    ['update its secret', core('secrets', 'update', 'sec-a'), 'noOpinion', 'can only read resources of this type'],
    ['cluster-scoped secret read', core('secrets', 'get', 'sec-a', ''), 'noOpinion', 'can only read namespaced object of this type'],
    ['configmap through a projected volume', core('configmaps', 'get', 'cm-a'), 'allow', ''],
    ['get its claim', core('persistentvolumeclaims', 'get', 'pvc-a'), 'allow', ''],
    ['list claims', core('persistentvolumeclaims', 'list', 'pvc-a'), 'noOpinion', 'can only get individual resources of this type'],
    ['update its claim status', core('persistentvolumeclaims', 'patch', 'pvc-a', 'ns', 'status'), 'allow', ''],
    ['get the bound PV', core('persistentvolumes', 'get', 'pv-a', ''), 'allow', ''],
    ['token for its pod’s service account', core('serviceaccounts', 'create', 'sa-a', 'ns', 'token'), 'allow', ''],
    ['token for another node’s service account', core('serviceaccounts', 'create', 'sa-b', 'ns', 'token'), 'noOpinion', NO_REL],
    ['get a service account', core('serviceaccounts', 'get', 'sa-a'), 'noOpinion', 'can only create tokens for individual service accounts'],
    ['get its pod', core('pods', 'get', 'pa'), 'allow', ''],
    ['get another node’s pod', core('pods', 'get', 'pb'), 'noOpinion', NO_REL],
    ['list pods (no field selector)', core('pods', 'list', ''), 'noOpinion', 'can only list/watch pods with spec.nodeName field selector'],
    ['watch its pods by spec.nodeName', { ...core('pods', 'watch', '', ''), fieldSelector: [{ field: 'spec.nodeName', operator: '=', value: 'node-a' }] }, 'allow', ''],
    ['watch another node’s pods by spec.nodeName', { ...core('pods', 'watch', '', ''), fieldSelector: [{ field: 'spec.nodeName', operator: '=', value: 'node-b' }] }, 'noOpinion', 'can only list/watch pods with spec.nodeName field selector'],
    ['watch one of its pods by name', core('pods', 'watch', 'pa'), 'allow', ''],
    ['create a (mirror) pod: NodeRestriction checks it', core('pods', 'create', ''), 'allow', ''],
    ['update its pods’ status', core('pods', 'patch', 'pa', 'ns', 'status'), 'allow', ''],
    ['evict a pod', core('pods', 'create', 'pa', 'ns', 'eviction'), 'allow', ''],
    ['update a pod (not its status)', core('pods', 'update', 'pa'), 'noOpinion', ''],
    ['get its Node', core('nodes', 'get', 'node-a', ''), 'allow', ''],
    ['get another Node', core('nodes', 'get', 'node-b', ''), 'noOpinion', "node 'node-a' cannot read 'node-b', only its own Node object"],
    ['list all Nodes', core('nodes', 'list', '', ''), 'noOpinion', "node 'node-a' cannot read all nodes, only its own Node object"],
    ['update a Node: NodeRestriction checks it is its own', core('nodes', 'update', 'node-b', ''), 'allow', ''],
    ['patch a Node’s status', core('nodes', 'patch', 'node-a', '', 'status'), 'allow', ''],
    ['delete a Node', core('nodes', 'delete', 'node-a', ''), 'noOpinion', ''],
    // Everything else by the system:node role's rules, which the Node authorizer holds.
    ['list services (system:node rules)', core('services', 'list', ''), 'allow', ''],
    ['create events (system:node rules)', core('events', 'create', ''), 'allow', ''],
    ['get endpoints (system:node rules)', core('endpoints', 'get', 'kubernetes'), 'allow', ''],
    ['delete services (not in the rules)', core('services', 'delete', 'x'), 'noOpinion', ''],
    ['a non-resource path (not in the rules)', { isResourceRequest: false, path: '/metrics', verb: 'get', resource: '' }, 'noOpinion', ''],
  ])('%s', async (_n, attrs, decision, reason) => {
    expect(await ask(attrs)).toMatchObject({ decision, reason });
  });

  it.each<[string, Partial<Attributes>, 'allow' | 'noOpinion', string]>([
    ['its lease', grouped('coordination.k8s.io', 'leases', 'update', 'node-a', 'kube-node-lease'), 'allow', ''],
    ['create a lease (name checked by admission)', grouped('coordination.k8s.io', 'leases', 'create', '', 'kube-node-lease'), 'allow', ''],
    ['another node’s lease', grouped('coordination.k8s.io', 'leases', 'get', 'node-b', 'kube-node-lease'), 'noOpinion', 'can only access node lease with the same name as the requesting node'],
    ['a lease elsewhere', grouped('coordination.k8s.io', 'leases', 'get', 'node-a', 'default'), 'noOpinion', 'can only access leases in the "kube-node-lease" system namespace'],
    ['list leases', grouped('coordination.k8s.io', 'leases', 'list', '', 'kube-node-lease'), 'noOpinion', 'can only get, create, update, patch, or delete a node lease'],
    ['its CSINode', grouped('storage.k8s.io', 'csinodes', 'patch', 'node-a'), 'allow', ''],
    ['another CSINode', grouped('storage.k8s.io', 'csinodes', 'delete', 'node-b'), 'noOpinion', 'can only access CSINode with the same name as the requesting node'],
    ['its volume attachment', grouped('storage.k8s.io', 'volumeattachments', 'get', 'va-a'), 'allow', ''],
    ['its resource claim', grouped('resource.k8s.io', 'resourceclaims', 'get', 'rc-a', 'ns'), 'allow', ''],
    ['its resource slice', grouped('resource.k8s.io', 'resourceslices', 'update', 'slice-a'), 'allow', ''],
    ['create a resource slice', grouped('resource.k8s.io', 'resourceslices', 'create', ''), 'allow', ''],
  ])('%s', async (_n, attrs, decision, reason) => {
    expect(await ask({ ...attrs, apiGroup: g(attrs.apiGroup!) })).toMatchObject({ decision, reason });
  });

  it('has no opinion for other users, and names a node identity without a name', async () => {
    expect(await ask({ ...core('secrets', 'get', 'sec-a'), user: { name: 'system:node:node-a', groups: ['system:authenticated'] } })).toMatchObject({ decision: 'noOpinion', reason: '' });
    expect(await ask({ ...core('secrets', 'get', 'sec-a'), user: { name: 'alice', groups: ['system:nodes'] } })).toMatchObject({ decision: 'noOpinion', reason: '' });
    expect(await ask({ ...core('secrets', 'get', 'sec-a'), user: { name: 'system:node:', groups: ['system:nodes'] } })).toMatchObject({
      decision: 'noOpinion',
      reason: 'unknown node for user "system:node:"',
    });
  });

  it('allows nothing before the graph has synced', async () => {
    const early = nodeAuthorizerFor(graph(), naming, () => false);
    expect(await decide([early], { ...base, ...core('secrets', 'get', 'sec-a') })).toMatchObject({ decision: 'noOpinion', reason: 'informers not synced' });
  });

  it('cannot enumerate a node’s rules (incomplete, as upstream)', async () => {
    const rules = await rulesFor([z], nodeA, 'ns');
    expect(rules.incomplete).toBe(true);
    expect(rules.evaluationError).toContain('node authorizer does not support user rule resolution');
    expect((await rulesFor([z], { name: 'alice', groups: [] }, 'ns')).incomplete).toBe(false);
  });
});
