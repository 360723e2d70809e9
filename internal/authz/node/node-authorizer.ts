// internal/authz/node/node-authorizer owns the Node authorization mode, split from RBAC as in
// upstream 1.32: for a node identity (`system:node:<name>` in `system:nodes`) it decides only
//   - secrets, configmaps: get/list/watch by name, when the graph links them to the node;
//   - persistentvolumeclaims: get (and update/patch of status) when linked; persistentvolumes,
//     volumeattachments, resourceclaims: get when linked; resourceslices: create, and
//     get/update/patch/delete of the node's own;
//   - serviceaccounts/token: create for a service account of a pod on the node (NodeRestriction
//     then requires the token to be bound to that pod);
//   - leases in kube-node-lease and csinodes: get/create/update/patch/delete of its own name
//     (create unnamed: NodeRestriction checks the name);
//   - pods: get of a pod bound to the node, list/watch with `spec.nodeName=<node>` (or of one
//     bound pod by name), create/delete (mirror pods) and status/eviction writes (NodeRestriction
//     then limits them to the node's own pods); nodes: create/update/patch and status writes
//     (NodeRestriction: its own only), get/list/watch of its own Node (upstream's
//     AuthorizeNodeWithSelectors, on in 1.32);
//   - every other request against the rules of the bootstrap policy's system:node role, held
//     statically (services, endpoints, events, CSRs, token and access reviews…): upstream binds
//     that role to nobody, so the Node authorizer is how nodes get them.
// A non-node user gets no opinion. Until the graph has listed its sources it allows nothing (upstream's
// "informers not synced"). Decisions are map lookups in the graph; no store read per request.
// Imports: authz/authorizer, graph, identity, naming, watchcache, log.

import type { UserInfo } from '../../auth/user.js';
import type { Logger } from '../../log/logger.js';
import type { Naming } from '../../naming/naming.js';
import type { WatchCache } from '../../watchcache/watch-cache.js';
import type { Attributes, Authorizer, Decision, Rules } from '../authorizer.js';
import { bootstrapPolicy } from '../rbac/bootstrap-policy.js';
import { ruleAllows, toPolicyRule, type PolicyRule } from '../rbac/rules.js';
import { followCache, NodeGraph, type VertexKind } from './graph.js';
import { nodeIdentity } from './identity.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

const ALLOW: Decision = { decision: 'allow', reason: '' };
const noOpinion = (reason = ''): Decision => ({ decision: 'noOpinion', reason });

export interface NodeAuthorizer extends Authorizer {
  readonly graph: NodeGraph;
  synced(): boolean;
  stop(): void;
}

/** Upstream group/resource → how a node's request on it is decided. */
type Route = (node: string, a: Attributes) => Decision;

/** The decision logic over a graph; createNodeAuthorizer adds the cache feed. */
/** A list or watch narrowed to `field=value` by its field selector. */
const selects = (a: Attributes, field: string, value: string): boolean => (a.fieldSelector ?? []).some((r) => r.field === field && r.operator === '=' && r.value === value);

/** The bootstrap policy's system:node rules, in this naming's group names. */
function staticNodeRules(naming: Naming): PolicyRule[] {
  const role = bootstrapPolicy(naming).clusterRoles.find((r) => r.metadata.name === 'system:node');
  if (!role) throw new Error('the bootstrap policy has no system:node role');
  return role.rules.map(toPolicyRule);
}

export function nodeAuthorizerFor(graph: NodeGraph, naming: Naming, synced: () => boolean, log?: Logger): Authorizer {
  const nodeRules = staticNodeRules(naming);
  const linked = (node: string, kind: VertexKind, a: Attributes): Decision => {
    if (!a.name) return noOpinion('No Object name found');
    if (!synced()) return noOpinion('informers not synced');
    if (graph.reaches(node, kind, a.namespace, a.name)) return ALLOW;
    log?.debug('node authorizer: no relationship', { node, resource: a.resource, namespace: a.namespace, name: a.name });
    return noOpinion(`no relationship found between node '${node}' and this object`);
  };
  const readNamespaced = (kind: VertexKind): Route => (node, a) => {
    if (!['get', 'list', 'watch'].includes(a.verb)) return noOpinion('can only read resources of this type');
    if (a.subresource) return noOpinion('cannot read subresource');
    if (!a.namespace) return noOpinion('can only read namespaced object of this type');
    return linked(node, kind, a);
  };
  const getOnly = (kind: VertexKind): Route => (node, a) => {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource) return noOpinion('cannot get subresource');
    return linked(node, kind, a);
  };
  const ownNamed = (what: string, namespace?: string): Route => (node, a) => {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion(`can only get, create, update, patch, or delete a ${what}`);
    if (namespace !== undefined && a.namespace !== namespace) return noOpinion(`can only access leases in the "${namespace}" system namespace`);
    // A create names its object in the body, which the authorizer does not see: NodeRestriction checks it.
    if (a.verb !== 'create' && a.name !== node) return noOpinion(`can only access ${what} with the same name as the requesting node`);
    return ALLOW;
  };
  const routes = new Map<string, Route>([
    ['/secrets', readNamespaced('secret')],
    ['/configmaps', readNamespaced('configmap')],
    [
      '/persistentvolumeclaims',
      (node, a) => {
        if (a.subresource === 'status') {
          if (a.verb !== 'update' && a.verb !== 'patch') return noOpinion('can only get/update/patch this type');
          return linked(node, 'pvc', a);
        }
        return getOnly('pvc')(node, a);
      },
    ],
    ['/persistentvolumes', getOnly('pv')],
    ['resource.k8s.io/resourceclaims', getOnly('resourceclaim')],
    ['storage.k8s.io/volumeattachments', getOnly('volumeattachment')],
    [
      '/serviceaccounts',
      (node, a) => {
        if (a.verb !== 'create' || !a.name) return noOpinion('can only create tokens for individual service accounts');
        if (a.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
        return linked(node, 'serviceaccount', a);
      },
    ],
    ['coordination.k8s.io/leases', ownNamed('node lease', NODE_LEASE_NAMESPACE)],
    ['storage.k8s.io/csinodes', ownNamed('CSINode')],
    [
      'resource.k8s.io/resourceslices',
      (node, a) => {
        if (a.subresource) return noOpinion('cannot authorize ResourceSlice subresources');
        if (a.verb === 'create') return ALLOW;
        if (['get', 'update', 'patch', 'delete'].includes(a.verb)) return linked(node, 'resourceslice', a);
        if (['list', 'watch', 'deletecollection'].includes(a.verb)) return selects(a, 'spec.nodeName', node) ? ALLOW : noOpinion('can only list/watch/deletecollection resourceslices with nodeName field selector');
        return noOpinion('only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection');
      },
    ],
    [
      '/pods',
      (node, a) => {
        if (a.subresource === '') {
          if (a.verb === 'get') return linked(node, 'pod', a);
          if (a.verb === 'list' || a.verb === 'watch') {
            if (selects(a, 'spec.nodeName', node)) return ALLOW;
            if (a.name) return linked(node, 'pod', a);
            return noOpinion('can only list/watch pods with spec.nodeName field selector');
          }
          // Mirror pods; NodeRestriction limits them to pods bound to this node.
          if (a.verb === 'create' || a.verb === 'delete') return ALLOW;
        } else if (a.subresource === 'status') {
          if (a.verb === 'update' || a.verb === 'patch') return ALLOW;
        } else if (a.subresource === 'eviction' && a.verb === 'create') return ALLOW;
        return noOpinion();
      },
    ],
    [
      '/nodes',
      (node, a) => {
        if (a.subresource === '') {
          // Its own Node only: NodeRestriction checks the object written.
          if (a.verb === 'create' || a.verb === 'update' || a.verb === 'patch') return ALLOW;
          if (a.verb === 'get' || a.verb === 'list' || a.verb === 'watch') {
            // The name, not the graph: a kubelet reads its Node before creating it.
            if (a.name === node) return ALLOW;
            if (a.name === '') return noOpinion(`node '${node}' cannot read all nodes, only its own Node object`);
            return noOpinion(`node '${node}' cannot read '${a.name}', only its own Node object`);
          }
        } else if (a.subresource === 'status' && (a.verb === 'update' || a.verb === 'patch')) return ALLOW;
        return noOpinion();
      },
    ],
  ]);

  return {
    name: 'node',
    authorize(a: Attributes): Decision {
      const node = nodeIdentity(a.user);
      if (node === undefined) return noOpinion();
      if (node === '') return noOpinion(`unknown node for user "${a.user.name}"`);
      const group = a.isResourceRequest ? naming.upstreamGroup(a.apiGroup) : undefined;
      const route = group === undefined ? undefined : routes.get(`${group}/${a.resource}`);
      if (route) return route(node, a);
      return nodeRules.some((r) => ruleAllows(a, r)) ? ALLOW : noOpinion();
    },
    // Upstream's node authorizer cannot enumerate a node's rules: incomplete, with its error.
    rulesFor(user: UserInfo): Omit<Rules, 'evaluationError'> {
      if (nodeIdentity(user) !== undefined) throw new Error('node authorizer does not support user rule resolution');
      return { resourceRules: [], nonResourceRules: [], incomplete: false };
    },
  };
}

export function createNodeAuthorizer(deps: { cache: WatchCache; naming: Naming; log: Logger }): NodeAuthorizer {
  const graph = new NodeGraph();
  const follower = followCache(graph, deps.cache, deps.log);
  const authorizer = nodeAuthorizerFor(graph, deps.naming, () => follower.synced(), deps.log);
  return { ...authorizer, graph, synced: () => follower.synced(), stop: () => follower.stop() };
}
