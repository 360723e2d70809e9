// internal/admission/node-restriction owns the NodeRestriction plugin, as upstream 1.32: a
// node identity (`system:node:<name>` in `system:nodes`) may write only what belongs to it.
//   - nodes: only its own Node (and status); no taint changes, no configSource, and labels
//     only outside the protected domains or in the kubelet's allowed list;
//   - pods: create only mirror pods bound to itself, owned by its Node, referencing no service
//     account, secret, configmap, claim, resource claim or cluster trust bundle; delete and
//     evict only pods bound to itself; pods/status only of pods bound to itself, without label
//     or resource-claim-status changes; other pod sub-resources refused;
//   - persistentvolumeclaims: only status capacity/conditions/allocated resources;
//   - serviceaccounts/token: only bound to a pod (uid given and matching) on itself;
//   - leases (kube-node-lease) and csinodes: only its own name; resourceslices: only its own.
// Other users and other resources pass. Label and annotation domains come from the naming.
// Upstream's messages, as a 403 on the object (`nodes "b" is forbidden: node "a" is not
// allowed to modify node "b"`). Imports: admission, apierrors, authz/node (identity, references), naming.

import { errors } from '../apierrors/status.js';
import { nodeIdentity } from '../authz/node/identity.js';
import { podReferences } from '../authz/node/references.js';
import type { Naming } from '../naming/naming.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject } from './admission.js';

export interface NodeRestrictionDeps {
  naming: Naming;
  /** The stored pod, or undefined when it does not exist. */
  getPod(namespace: string, name: string): Promise<JsonObject | undefined>;
  /** The stored node, or undefined when it does not exist. */
  getNode(name: string): Promise<JsonObject | undefined>;
}

const rec = (v: unknown): JsonObject | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : undefined);
const arr = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.map(rec).filter((x): x is JsonObject => x !== undefined) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const meta = (o: JsonObject | undefined): JsonObject => rec(o?.metadata) ?? {};
const spec = (o: JsonObject | undefined): JsonObject => rec(o?.spec) ?? {};
const labelsOf = (o: JsonObject | undefined): Record<string, string> => (rec(meta(o).labels) ?? {}) as Record<string, string>;

/** Order-insensitive deep equality of JSON values (Go's semantic DeepEqual over decoded JSON; null = absent). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || a === undefined) return b === null || b === undefined;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (typeof a === 'object' && typeof b === 'object' && b !== null && !Array.isArray(b)) {
    const ao = a as JsonObject;
    const bo = b as JsonObject;
    const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
    for (const k of keys) if (!jsonEqual(ao[k], bo[k])) return false;
    return true;
  }
  return false;
}

/** Labels added, removed or changed between two label maps. */
function modifiedLabels(now: Record<string, string>, before: Record<string, string>): string[] {
  const keys = new Set([...Object.keys(now), ...Object.keys(before)]);
  return [...keys].filter((k) => now[k] !== before[k]).sort();
}

/**
 * Upstream's label policy in the configured naming: the node-restriction prefix is never the
 * kubelet's to set; other labels in the protected domains only from the kubelet's own list.
 * Upstream's spellings stay protected under the cluster naming too.
 */
export function forbiddenNodeLabels(naming: Naming, labels: readonly string[]): string[] {
  const domains = [...new Set([naming.labelDomain, naming.groupDomain, 'kubernetes.io', 'k8s.io'])];
  const restriction = [...new Set([`node-restriction.${naming.labelDomain}`, 'node-restriction.kubernetes.io'])];
  const under = (ns: string, domain: string): boolean => ns === domain || ns.endsWith(`.${domain}`);
  const d = naming.labelDomain;
  const allowedLabels = new Set([
    `${d}/hostname`,
    `topology.${d}/zone`,
    `topology.${d}/region`,
    `failure-domain.beta.${d}/zone`,
    `failure-domain.beta.${d}/region`,
    `beta.${d}/instance-type`,
    `node.${d}/instance-type`,
    `${d}/os`,
    `${d}/arch`,
    `beta.${d}/os`,
    `beta.${d}/arch`,
  ]);
  const allowedDomains = [`kubelet.${d}`, `node.${d}`];
  return labels.filter((label) => {
    const slash = label.indexOf('/');
    const ns = slash < 0 ? '' : label.slice(0, slash);
    if (restriction.some((r) => under(ns, r))) return true;
    if (!domains.some((dom) => under(ns, dom))) return false;
    return !allowedLabels.has(label) && !allowedDomains.some((dom) => under(ns, dom));
  });
}

export function nodeRestriction(deps: NodeRestrictionDeps): AdmissionPlugin {
  const { naming } = deps;
  const mirrorAnnotation = naming.label('config.mirror');

  const forbid = (req: AdmissionRequest, message: string): Error => {
    const name = req.name || str(meta(req.object).name);
    return errors.forbidden({ group: req.resource.group, name: req.resource.resource }, name || undefined, message);
  };
  const mustExist = async <T>(req: AdmissionRequest, resource: string, name: string, v: Promise<T | undefined>): Promise<T> => {
    const found = await v;
    if (found === undefined) throw errors.notFound({ group: '', name: resource }, name);
    return found;
  };

  async function admitPodCreate(node: string, req: AdmissionRequest): Promise<void> {
    const pod = req.object!;
    const annotations = rec(meta(pod).annotations) ?? {};
    if (!(mirrorAnnotation in annotations)) throw forbid(req, `pod does not have "${mirrorAnnotation}" annotation, node "${node}" can only create mirror pods`);
    const s = spec(pod);
    if (str(s.nodeName) !== node) throw forbid(req, `node "${node}" can only create pods with spec.nodeName set to itself`);
    const owners = arr(meta(pod).ownerReferences);
    if (owners.length > 1) throw forbid(req, `node "${node}" can only create pods with a single owner reference set to itself`);
    if (owners.length === 0) throw forbid(req, `node "${node}" can only create pods with an owner reference set to itself`);
    const owner = owners[0]!;
    if (owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) throw forbid(req, `node "${node}" can only create pods with an owner reference set to itself`);
    if (owner.controller !== true) throw forbid(req, `node "${node}" can only create pods with a controller owner reference set to itself`);
    if (owner.blockOwnerDeletion === true) throw forbid(req, `node "${node}" must not set blockOwnerDeletion on an owner reference`);
    const nodeObj = await mustExist(req, 'nodes', node, deps.getNode(node));
    const uid = str(meta(nodeObj).uid);
    if (str(owner.uid) !== uid) throw forbid(req, `node ${node} UID mismatch: expected ${uid} got ${str(owner.uid)}`);
    // A mirror pod may not reach other objects: the node could read them through the pod.
    if (str(s.serviceAccountName)) throw forbid(req, `node "${node}" can not create pods that reference a service account`);
    const refs = mirrorPodReferences(pod);
    if (refs.secrets) throw forbid(req, `node "${node}" can not create pods that reference secrets`);
    if (refs.configMaps) throw forbid(req, `node "${node}" can not create pods that reference configmaps`);
    for (const v of arr(s.volumes)) {
      if (rec(v.persistentVolumeClaim)) throw forbid(req, `node "${node}" can not create pods that reference persistentvolumeclaims`);
      if (rec(v.ephemeral)) throw forbid(req, `node "${node}" can not create pods that use generic ephemeral volumes`);
      for (const source of arr(rec(v.projected)?.sources)) {
        if (rec(source.clusterTrustBundle)) throw forbid(req, `node "${node}" can not create pods that use clustertrustbundles`);
      }
    }
    if (arr(s.resourceClaims).length > 0) throw forbid(req, `node "${node}" can not create pods that reference resourceclaims`);
  }

  async function admitPod(node: string, req: AdmissionRequest): Promise<void> {
    switch (req.subresource) {
      case '':
        if (req.operation === 'CREATE') return admitPodCreate(node, req);
        if (req.operation === 'DELETE') {
          const pod = req.oldObject ?? (await mustExist(req, 'pods', req.name, deps.getPod(req.namespace, req.name)));
          if (str(spec(pod).nodeName) !== node) throw forbid(req, `node "${node}" can only delete pods with spec.nodeName set to itself`);
          return;
        }
        throw forbid(req, `unexpected operation "${req.operation}", node "${node}" can only create and delete mirror pods`);
      case 'status': {
        if (req.operation !== 'UPDATE') throw forbid(req, `unexpected operation "${req.operation}"`);
        const old = req.oldObject;
        if (str(spec(old).nodeName) !== node) throw forbid(req, `node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
        if (!jsonEqual(labelsOf(old), labelsOf(req.object))) throw forbid(req, `node "${node}" cannot update labels through pod status`);
        const claims = (o: JsonObject | undefined): unknown => rec(o?.status)?.resourceClaimStatuses;
        if (!jsonEqual(claims(old), claims(req.object))) throw forbid(req, `node "${node}" cannot update resource claim statues`);
        return;
      }
      case 'eviction': {
        if (req.operation !== 'CREATE') throw forbid(req, `unexpected operation ${req.operation}`);
        const podName = req.name || str(meta(req.object).name);
        if (!podName) throw errors.badRequest('could not determine pod from request data');
        const pod = await mustExist(req, 'pods', podName, deps.getPod(req.namespace, podName));
        if (str(spec(pod).nodeName) !== node) throw forbid(req, `node ${node} can only evict pods with spec.nodeName set to itself`);
        return;
      }
      default:
        throw forbid(req, `unexpected pod subresource "${req.subresource}", only 'status' and 'eviction' are allowed`);
    }
  }

  function admitNode(node: string, req: AdmissionRequest): void {
    const requested = req.name || str(meta(req.object).name);
    if (requested !== node) throw forbid(req, `node "${node}" is not allowed to modify node "${requested}"`);
    if (req.operation === 'CREATE') {
      if (spec(req.object).configSource != null) throw forbid(req, `node "${node}" is not allowed to create pods with a non-nil configSource`);
      const bad = forbiddenNodeLabels(naming, modifiedLabels(labelsOf(req.object), {}));
      if (bad.length) throw forbid(req, `node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
    } else if (req.operation === 'UPDATE') {
      const now = spec(req.object);
      const before = spec(req.oldObject);
      if (now.configSource != null && !jsonEqual(now.configSource, before.configSource)) {
        throw forbid(req, `node "${node}" is not allowed to update configSource to a new non-nil configSource`);
      }
      if (!jsonEqual(now.taints, before.taints)) throw forbid(req, `node "${node}" is not allowed to modify taints`);
      const bad = forbiddenNodeLabels(naming, modifiedLabels(labelsOf(req.object), labelsOf(req.oldObject)));
      if (bad.length) throw forbid(req, `is not allowed to modify labels: ${bad.join(', ')}`);
    }
  }

  function admitPvcStatus(node: string, req: AdmissionRequest): void {
    if (req.operation !== 'UPDATE') throw forbid(req, `unexpected operation "${req.operation}"`);
    // Everything but the fields a kubelet's volume expansion reports must stay as it was.
    const comparable = (o: JsonObject | undefined): JsonObject => {
      const m = { ...meta(o) };
      delete m.resourceVersion;
      delete m.managedFields;
      const status = { ...(rec(o?.status) ?? {}) };
      for (const k of ['capacity', 'conditions', 'allocatedResourceStatuses', 'allocatedResources']) delete status[k];
      return { ...o, metadata: m, status };
    };
    const before = comparable(req.oldObject);
    const now = comparable(req.object);
    if (!jsonEqual(before, now)) {
      const changed = [...new Set([...Object.keys(before), ...Object.keys(now)])].filter((k) => !jsonEqual(before[k], now[k]));
      throw forbid(req, `node "${node}" is not allowed to update fields other than status.capacity and status.conditions: ${changed.join(', ')}`);
    }
  }

  async function admitServiceAccount(node: string, req: AdmissionRequest): Promise<void> {
    if (req.operation !== 'CREATE' || req.subresource !== 'token') return;
    const ref = rec(spec(req.object).boundObjectRef);
    if (!ref || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !str(ref.name)) throw forbid(req, 'node requested token not bound to a pod');
    if (!str(ref.uid)) throw forbid(req, 'node requested token with a pod binding without a uid');
    const pod = await mustExist(req, 'pods', str(ref.name), deps.getPod(req.namespace, str(ref.name)));
    if (str(ref.uid) !== str(meta(pod).uid)) {
      throw forbid(req, `the UID in the bound object reference (${str(ref.uid)}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    if (str(spec(pod).nodeName) !== node) throw forbid(req, 'node requested token bound to a pod scheduled on a different node');
  }

  function admitOwnNamed(node: string, req: AdmissionRequest, what: 'lease' | 'csinode'): void {
    if (what === 'lease' && req.namespace !== 'kube-node-lease') throw forbid(req, `can only access leases in the "kube-node-lease" system namespace`);
    const name = req.operation === 'CREATE' ? str(meta(req.object).name) : req.name;
    if (name !== node) throw forbid(req, what === 'lease' ? 'can only access node lease with the same name as the requesting node' : 'can only access CSINode with the same name as the requesting node');
  }

  function admitResourceSlice(node: string, req: AdmissionRequest): void {
    if (req.operation !== 'CREATE' && req.operation !== 'DELETE') return;
    const slice = req.operation === 'CREATE' ? req.object : req.oldObject;
    if (str(spec(slice).nodeName) !== node) throw forbid(req, 'can only create ResourceSlice with the same NodeName as the requesting node');
  }

  return {
    name: 'NodeRestriction',
    handles: (op) => op === 'CREATE' || op === 'UPDATE' || op === 'DELETE',
    async validate(req: AdmissionRequest): Promise<void> {
      const node = nodeIdentity(req.user);
      if (node === undefined) return;
      if (node === '') throw forbid(req, `could not determine node from user "${req.user.name}"`);
      const group = naming.upstreamGroup(req.resource.group);
      switch (`${group}/${req.resource.resource}`) {
        case '/pods':
          return admitPod(node, req);
        case '/nodes':
          return admitNode(node, req);
        case '/persistentvolumeclaims':
          if (req.subresource !== 'status') throw forbid(req, 'may only update PVC status');
          return admitPvcStatus(node, req);
        case '/serviceaccounts':
          return admitServiceAccount(node, req);
        case 'coordination.k8s.io/leases':
          return admitOwnNamed(node, req, 'lease');
        case 'storage.k8s.io/csinodes':
          return admitOwnNamed(node, req, 'csinode');
        case 'resource.k8s.io/resourceslices':
          return admitResourceSlice(node, req);
        default:
          return;
      }
    },
  };
}

/** Whether a (mirror) pod refers to any secret or configmap, by the graph's visitors. */
function mirrorPodReferences(pod: JsonObject): { secrets: boolean; configMaps: boolean } {
  const refs = podReferences(pod);
  return { secrets: refs.secrets.length > 0, configMaps: refs.configMaps.length > 0 };
}
